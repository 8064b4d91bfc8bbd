"""Evaluation: suites, scores, runs, comparisons and reports."""
