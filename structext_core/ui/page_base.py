"""A page opened at its own address connects to the server at once (issue 46: pages that answer).

Streamlit's page, opened at ``/explore``, does not know where the server's root is: it asks
``/explore/_stcore/health`` first, is told 404, waits out its retry delay (0.1-0.2 s measured
in Chromium), then asks ``/_stcore/health``, and only then opens its connection. Every page
but Home is opened at its own address (a bookmark, a reload, a link in a mail).

Streamlit reads where its server is from ``window.__streamlit.BACKEND_BASE_URL`` when the
page that loads it sets one (how it is embedded elsewhere). :class:`PageBase` is an ASGI
middleware (``server.py``) that adds that line to the one HTML page Streamlit serves for every
page's address: the address the browser shows, less the segments the server reads as the
page (``/explore`` is one; ``/`` none), so the root it names is right behind a proxy that
adds or strips a path prefix. Nothing a person sends is written into the line: the count of
segments is the only value taken from the request. The page is served uncompressed (about 6 KB;
Streamlit's compression would hide its head); every other response passes untouched, unread.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
ASGIApp = Callable[[Scope, Callable[[], Awaitable[Message]], Callable[[Message], Awaitable[None]]], Awaitable[None]]

#: Streamlit's own paths: never its HTML page (the static files, the media, its routes, ours).
_NOT_PAGES = ("/_stcore/", "/static/", "/media/", "/component/", "/app/static/", "/api/")
#: The HTML page is about 6 KB; a larger HTML answer is not Streamlit's page and passes as it is.
MAX_PAGE_BYTES = 256 * 1024
_HEAD = b"<head>"


def page_segments(path: str, base_url_path: str) -> int:
    """How many trailing segments of ``path`` (the request's) name the page, not the app's root:
    ``/explore`` 1, ``/`` 0, ``/studio/explore`` under the base URL path ``studio`` 1."""
    parts = [p for p in path.split("/") if p]
    base = [p for p in base_url_path.split("/") if p]
    if base and parts[:len(base)] == base:
        parts = parts[len(base):]
    return len(parts)


def base_script(segments: int) -> bytes:
    """The line that tells Streamlit's page its server's root: the address shown, less ``segments``."""
    n = int(segments)
    return (
        "<script>(function(){var p=location.pathname.replace(/\\/+$/,'').split('/');"
        f"p.splice(Math.max(1,p.length-{n}),{n});"
        "window.__streamlit=Object.assign({},window.__streamlit,"
        "{BACKEND_BASE_URL:location.origin+p.join('/')+'/'});})();</script>"
    ).encode()


def with_base(html: bytes, segments: int) -> bytes:
    """``html`` with :func:`base_script` first in its head (unchanged when it has no ``<head>``)."""
    at = html.find(_HEAD)
    if at < 0:
        return html
    at += len(_HEAD)
    return html[:at] + base_script(segments) + html[at:]


class PageBase:
    """ASGI middleware: Streamlit's HTML page, served at a page's address, names the server's root."""

    def __init__(self, app: ASGIApp, base_url_path: Callable[[], str] | None = None) -> None:
        self.app = app
        self._base_url_path = base_url_path or _streamlit_base_url_path

    async def __call__(self, scope, receive, send) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        if scope["type"] != "http" or scope.get("method") != "GET" or any(p in path for p in _NOT_PAGES):
            await self.app(scope, receive, send)
            return
        segments = page_segments(path, self._base_url_path())
        # The page uncompressed (6 KB): Streamlit's gzip would hide its <head>.
        scope = {**scope, "headers": [(k, v) for k, v in scope.get("headers", []) if k.lower() != b"accept-encoding"]}
        held: list[Message] = []  # the start of an HTML answer and its body so far

        async def send_page(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = {k.lower(): v for k, v in message.get("headers", [])}
                if message.get("status") == 200 and headers.get(b"content-type", b"").startswith(b"text/html"):
                    held.append(message)
                    return
            elif held and message["type"] == "http.response.body":
                held.append(message)
                body = b"".join(m.get("body", b"") for m in held[1:])
                if message.get("more_body") and len(body) <= MAX_PAGE_BYTES:
                    return
                start, rest = held[0], message.get("more_body", False)
                held.clear()
                if rest:  # not Streamlit's page (too large): as it came
                    await send(start)
                    await send({"type": "http.response.body", "body": body, "more_body": True})
                    return
                page = with_base(body, segments)
                headers = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]
                await send({**start, "headers": [*headers, (b"content-length", str(len(page)).encode())]})
                await send({"type": "http.response.body", "body": page, "more_body": False})
                return
            await send(message)

        await self.app(scope, receive, send_page)


def _streamlit_base_url_path() -> str:
    from streamlit import config

    return config.get_option("server.baseUrlPath") or ""
