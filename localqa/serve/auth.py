"""Who is asking the web app: never the request's say-so.

Bound to a loopback address without a users file, every request is the caller the server was
started with (`--role/--tenant`, or LOCALQA_ROLE/LOCALQA_TENANT), like the CLI. Otherwise a users
file maps tokens to callers: each request must carry `Authorization: Bearer TOKEN` (or HTTP Basic
with the token as password, so a browser can sign in). Only the tokens' sha256 is stored, and
it is compared in constant time.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import ipaddress
import re
from dataclasses import dataclass
from pathlib import Path

from localqa.errors import LocalQAError
from localqa.tomlfile import TomlFileError, read_toml
from localqa.types import ROLES, Caller, is_tenant_name

_HEX64 = re.compile(r"^[0-9a-f]{64}$")
USER_FIELDS = ("name", "token_sha256", "role", "tenant", "operator")


class UsersFileError(LocalQAError):
    """The users file cannot be used."""


@dataclass(frozen=True)
class User:
    name: str
    token_sha256: str
    caller: Caller
    operator: bool = False  # may see the evaluation page (its reports quote every suite's documents)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def load_users(path: Path) -> tuple[User, ...]:
    """Read a users file: one [[user]] table per token (see README, `localqa serve`)."""
    try:
        data = read_toml(path)
    except TomlFileError as error:
        raise UsersFileError(f"{path}: {error}; fix the file and start again") from None
    # A misspelt field would silently fall back to its default (`Tenant = "acme"` would give the
    # token the default tenant's documents): every name must be known.
    unknown = sorted(set(data) - {"user"})
    if unknown:
        raise UsersFileError(
            f"{path}: unknown table or field {', '.join(unknown)}; write one [[user]] table per token"
        )
    entries = data.get("user")
    if not isinstance(entries, list) or not entries:
        raise UsersFileError(f"{path}: no [[user]] entries; add one per token (token_sha256, role, tenant)")
    users = []
    for number, entry in enumerate(entries, start=1):
        where = f"{path}, user {number}"
        if not isinstance(entry, dict):
            raise UsersFileError(f"{where}: not a table")
        unknown = sorted(set(entry) - set(USER_FIELDS))
        if unknown:
            raise UsersFileError(
                f"{where}: unknown field(s) {', '.join(unknown)}; known fields are {', '.join(USER_FIELDS)}"
            )
        digest = entry.get("token_sha256")
        if not isinstance(digest, str) or not _HEX64.match(digest):
            raise UsersFileError(
                f"{where}: token_sha256 must be 64 lower-case hex digits "
                "(printf %s TOKEN | sha256sum); the token itself is never stored"
            )
        role = entry.get("role")
        if role not in ROLES:
            raise UsersFileError(f"{where}: role must be one of {', '.join(ROLES)}")
        tenant = entry.get("tenant", "default")
        operator = entry.get("operator", False)
        if not isinstance(tenant, str) or not is_tenant_name(tenant) or not isinstance(operator, bool):
            raise UsersFileError(f"{where}: tenant must be a name and operator true or false")
        users.append(
            User(str(entry.get("name", f"user {number}")), digest, Caller(role=role, tenant=tenant), operator)
        )
    if len({u.token_sha256 for u in users}) != len(users):
        raise UsersFileError(f"{path}: two users share a token; give each its own")
    return tuple(users)


def authenticate(authorization: str | None, users: tuple[User, ...]) -> User | None:
    """The user whose token the header carries, or None. Every stored hash is compared, in
    constant time, whatever matches first."""
    token = _token(authorization)
    if token is None:
        return None
    offered = token_hash(token)
    found = None
    for user in users:
        if hmac.compare_digest(offered, user.token_sha256):
            found = user
    return found


def _token(authorization: str | None) -> str | None:
    if not authorization:
        return None
    scheme, _, value = authorization.partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    if scheme.lower() == "basic":
        try:
            decoded = base64.b64decode(value.strip(), validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            return None
        password = decoded.partition(":")[2]
        return password or None
    return None


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
