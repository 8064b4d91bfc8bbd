"""Which index a `--db` value names, and how it may be shown.

A file path (a `Path`, or a string that is not a URL) is a SQLite index (`localqa.store.sqlite`,
the default). A `postgresql://` (or `postgres://`) URL is a shared PostgreSQL index
(`localqa.store.postgres`): libpq reads the rest of it, and the password from the URL,
`PGPASSWORD` or `~/.pgpass`. Any other value that looks like a URL is an error, never a file name
(`postgresql:` used to become a folder).

Credentials never leave the store: `describe()` is the form of a `--db` value that messages,
reports, runs and the web app show. This module sits below `localqa.store` (which opens an index)
and its backends (whose messages name it), so that neither imports the other's package.
"""

from __future__ import annotations

import os
import re
from urllib.parse import unquote

from localqa.errors import LocalQAError

Db = str | os.PathLike[str]  # a --db value: an index file, or a postgresql:// URL

POSTGRES_SCHEMES = ("postgresql", "postgres")
# A scheme of two letters or more (a one-letter one would be a Windows drive).
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]+):")
# URL query parameters libpq takes a secret from.
_SECRETS = frozenset({"password", "sslpassword"})


class DatabaseURLError(LocalQAError):
    """A --db value is a URL this localqa cannot use."""


def postgres_url(db: Db) -> str | None:
    """The URL when `db` names a PostgreSQL database, None when it is a file path (SQLite).
    Raises DatabaseURLError for any other URL. A `Path` is always a file path (it would have
    folded a URL's `//` anyway)."""
    if isinstance(db, os.PathLike):
        return None
    text = db
    scheme = _SCHEME.match(text)
    if scheme is None:
        return None
    name = scheme.group(1).lower()
    if name in POSTGRES_SCHEMES and text[scheme.end() :].startswith("//"):
        return text
    if name in POSTGRES_SCHEMES:
        raise DatabaseURLError(
            f"{describe(text)}: a PostgreSQL URL starts with {name}://, e.g. postgresql://user@host/dbname"
        )
    raise DatabaseURLError(
        f"{describe(text)}: unsupported database URL (scheme {name!r}); give an index file path "
        "(SQLite) or a postgresql://user@host/dbname URL (a file name with a colon: write ./NAME)"
    )


def describe(db: Db) -> str:
    """`db` as it may be shown: a file path as given; a URL without its password, cut as libpq
    cuts it (`_url_parts`: a `?` or `#` before the `@` is part of the password to libpq), and
    without the query's `password` and `sslpassword`."""
    text = os.fspath(db)
    if _SCHEME.match(text) is None:
        return text
    parts = _url_parts(text)
    if parts is None:
        return f"{text.split(':', 1)[0]}:…"  # not a URL libpq reads: nothing of it is shown
    scheme, user, _, rest, query = parts
    kept = [piece for piece in query if not _is_secret(piece)]
    shown = f"{scheme}://{'' if user is None else f'{user}@'}{rest}"
    return f"{shown}?{'&'.join(kept)}" if kept else shown


def redact(text: str, db: Db) -> str:
    """`text` (a message from libpq or a server, which may quote the URL or a piece of it, such
    as a malformed password) with every password `db` carries, and PGPASSWORD's, replaced by
    `***`; the URL itself by its `describe` form first."""
    given = os.fspath(db)
    text = text.replace(given, describe(given))
    for secret in sorted(_secrets(given), key=len, reverse=True):
        text = text.replace(secret, "***")
    return text


def _url_parts(text: str) -> tuple[str, str | None, str | None, str, list[str]] | None:
    """A `scheme://` URL cut as libpq's parser cuts it (fe-connect.c, conninfo_uri_parse_options):
    (scheme, user, password, hosts and database, the query's `key=value` pieces), or None when
    `text` is no such URL. The user part ends at an `@` before any `/`, the password starts at its
    first `:`; libpq gives `?` and `#` no meaning there, nor `#` anywhere. libpq ends the password at
    the first `@`; here it runs to the last one before the `/`, so that a password with an `@` in
    it is hidden whole all the same. Nothing is decoded: these are the pieces as written."""
    scheme, slashes, rest = text.partition("://")
    if not slashes or _SCHEME.match(f"{scheme}:") is None:
        return None
    user = password = None
    slash = rest.find("/")
    at = rest.rfind("@", 0, len(rest) if slash < 0 else slash)
    if at >= 0:
        user, colon, secret = rest[:at].partition(":")
        password = secret if colon else None
        rest = rest[at + 1 :]
    rest, _, query = rest.partition("?")
    return scheme, user, password, rest, [piece for piece in query.split("&") if piece]


def _is_secret(piece: str) -> bool:
    """A query piece that gives libpq a secret (compared loosely: when in doubt, it is one)."""
    return unquote(piece.partition("=")[0]).strip().lower() in _SECRETS


def _secrets(text: str) -> set[str]:
    """The secrets a --db value gives libpq, as written and as decoded, and PGPASSWORD's; and
    the pieces a message may quote of them (libpq names the words around a space it refuses, and
    takes a password only to its first `@`, the rest for the host)."""
    parts = _url_parts(text)
    found = {os.environ.get("PGPASSWORD") or ""}
    if parts is not None:
        _, _, password, _, query = parts
        found |= {password or "", *(piece.partition("=")[2] for piece in query if _is_secret(piece))}
    found |= {unquote(secret) for secret in found}
    found |= {piece for secret in found for piece in (*secret.split(), *secret.split("@"))}
    return {secret for secret in found if secret}


def password_to_environment(db: Db) -> Db:
    """For a program that passes `db` to child processes on their command line, where every user
    of the machine may read it (`ps`): the URL without its password, which moves to PGPASSWORD
    in this process's environment, which the children inherit. Anything else is returned as is."""
    url = postgres_url(db)
    parts = None if url is None else _url_parts(url)
    if url is None or parts is None:
        return db
    _, _, password, _, query = parts
    given = [piece.partition("=")[2] for piece in query if unquote(piece.partition("=")[0]) == "password"]
    secret = password if password is not None else next(iter(given), None)
    if secret is not None:
        os.environ["PGPASSWORD"] = unquote(secret)
    return describe(url)
