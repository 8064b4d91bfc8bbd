"""The web app and JSON API over one library: FastAPI, server-rendered Jinja2 pages, no script.

Rules the app keeps, and where:

- every route stands behind one gate (`security.GATE`, a router dependency): the server's own
  Host names, no cross-site request, a caller from the server's configuration (`auth`), never
  from a request's fields; every response forbids other origins to read it (`security.HEADERS`);
- every lookup filters by what that caller may see on the as-of date before anything is read
  (`localqa.retrieval.retrieve`, `localqa.library`): a hidden page image answers 404 exactly like
  a missing one;
- every request reads through one `Library` (one open index, reopened when a refresh has committed
  since, so an `index` run while serving is picked up by the next request), reached as a
  dependency (`state`);
- one model call at a time (a lock: the model is the expensive, single-threaded part), any number
  of searches; each backend is constructed once and stays loaded (`state.Models`);
- all document text reaches the page with controls and bidi overrides shown as escapes, then
  through Jinja2 autoescaping, and the pages carry a Content-Security-Policy that allows no script.
"""

from __future__ import annotations

from fastapi import FastAPI

from localqa.serve import api, chat_api, errors, pages, security
from localqa.serve.state import ServeConfig, Served

__all__ = ["ServeConfig", "create_app"]


def create_app(config: ServeConfig) -> FastAPI:
    app = FastAPI(title="localqa", docs_url=None, redoc_url=None, openapi_url=None)
    Served.open(config).install(app)
    app.middleware("http")(security.add_headers)
    errors.install(app)
    app.include_router(api.router)
    app.include_router(chat_api.router)
    app.include_router(pages.router)
    return app
