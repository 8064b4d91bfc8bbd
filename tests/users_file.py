"""A users file for the servers' tests (`localqa serve --users`, `localqa mcp --users`): each
user's token stored as its sha256, as the file holds it."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path


def write_users(path: Path, users: Sequence[tuple[str, str, str]]) -> Path:
    """`path` with one [[user]] table per (name, token, role)."""
    tables = []
    for name, token, role in users:
        digest = hashlib.sha256(token.encode()).hexdigest()
        tables.append(f'[[user]]\nname = "{name}"\ntoken_sha256 = "{digest}"\nrole = "{role}"\n')
    path.write_text("\n".join(tables), encoding="utf-8")
    return path
