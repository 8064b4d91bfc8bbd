"""Benchmarks: scripts that print figures, each run from the repository root as
`python -m benchmarks.NAME` (README.md says what each measures and prints). What they share is in
`benchmarks.common`."""
