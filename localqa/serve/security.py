"""The gate in front of every route and the headers on every response.

Every router is made with `dependencies=GATE`, so a route cannot be added without it; a test
enumerates the app's routes to hold that. The gate, in order:

1. **Own names only.** A loopback server answers only to the Host names it was started under, so
   a web page cannot reach it through a name of its own that resolves to 127.0.0.1 (DNS
   rebinding): 421.
2. **No cross-site request.** A request another web page made the browser send is refused (403),
   whatever it asks: its `Sec-Fetch-Site` is `cross-site` or `same-site`, or its `Origin` is not
   this server's. `same-site` is refused too because a site ignores the port: on loopback every
   other local service (a notebook, a dev server, an attacker's page on 127.0.0.1:9000) is the
   same site, and so is every sibling host of an intranet domain. The app never needs another
   origin: its pages, images and stylesheet are all its own. Served: `same-origin`, `none` (an
   address typed or bookmarked) and requests without fetch metadata (curl, scripts; an older
   browser then still meets `Cross-Origin-Resource-Policy`).
3. **A known caller.** With a users file, the request's token names the caller (`auth`); 401
   otherwise. The request decides nothing but which configured user it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any
from urllib.parse import urlsplit

from fastapi import Depends, Request
from fastapi.params import Depends as DependsParam
from fastapi.responses import Response

from localqa.serve.auth import authenticate
from localqa.serve.errors import HttpError
from localqa.serve.state import ConfigDep
from localqa.types import Caller

HEADERS = {
    "Content-Security-Policy": "default-src 'none'; img-src 'self'; style-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    # No other origin may read a response, even through <img> or a no-cors fetch.
    "Cross-Origin-Resource-Policy": "same-origin",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}
_OTHER_SITES = frozenset({"cross-site", "same-site"})


async def add_headers(request: Request, call_next: Any) -> Response:
    response: Response = await call_next(request)
    response.headers.update(HEADERS)
    return response


@dataclass(frozen=True)
class Visitor:
    """Who is asking, as the server's configuration says."""

    caller: Caller
    operator: bool  # may see the evaluation page
    # Whose conversations these are: the users file's token hash, or "local" for the one caller of
    # a server without a users file.
    user: str = "local"


def same_origin_only(request: Request, config: ConfigDep) -> None:
    host = request.headers.get("host", "")
    if config.allowed_hosts is not None and host not in config.allowed_hosts:
        raise HttpError(421, "this server answers only to its own address")
    origin = request.headers.get("origin")
    if request.headers.get("sec-fetch-site") in _OTHER_SITES or not (origin is None or _is_own(origin, host)):
        raise HttpError(403, "cross-site requests are refused; open localqa at its own address")


def _is_own(origin: str, host: str) -> bool:
    """Whether an Origin header names this server ("null", from a sandbox or a file, does not)."""
    parts = urlsplit(origin)
    return bool(host) and parts.scheme in ("http", "https") and parts.netloc.lower() == host.lower()


def signed_in(request: Request, config: ConfigDep, _: Annotated[None, Depends(same_origin_only)]) -> Visitor:
    if config.users is None:
        return Visitor(config.caller, config.runs is not None)
    user = authenticate(request.headers.get("authorization"), config.users)
    if user is None:
        raise HttpError(
            401,
            "sign in: send 'Authorization: Bearer TOKEN' with a token from the users file",
            {"WWW-Authenticate": 'Basic realm="localqa", charset="UTF-8"'},
        )
    return Visitor(user.caller, user.operator, user.token_sha256)


# A route's visitor (the gate has already run: FastAPI solves `signed_in` once per request).
Who = Annotated[Visitor, Depends(signed_in)]
GATE: list[DependsParam] = [Depends(signed_in)]
