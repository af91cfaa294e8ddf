"""server.py's middleware tells Streamlit's page, opened at its own address, where the server is
(structext_core/ui/page_base.py): one line in the HTML page, nothing else touched."""
from __future__ import annotations

import subprocess
import textwrap

import pytest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.gzip import GZipMiddleware
from starlette.responses import HTMLResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from structext_core.ui import page_base

SCRIPT = b"console.log('<head>');" * 100
PAGE = "<!DOCTYPE html><html><head><title>Streamlit</title></head><body>" + "x" * 2_000 + "</body></html>"


def _app(base_url_path: str = "") -> TestClient:
    """A stand-in for Streamlit's server: its HTML page at every address (compressed when asked, as
    Streamlit's is), a static file, a health check, a large HTML answer in parts and a POST."""
    async def page(request):
        return HTMLResponse(PAGE)

    async def script(request):
        return Response(SCRIPT, media_type="text/javascript")

    async def health(request):
        return PlainTextResponse("ok")

    async def big(request):
        async def parts():
            for _ in range(40):
                yield b"<head>" + b"y" * 10_000
        return StreamingResponse(parts(), media_type="text/html")

    routes = [Route("/static/js/app.js", script), Route("/_stcore/health", health), Route("/big", big),
              Route("/{path:path}", page, methods=["GET", "POST"])]
    app = Starlette(routes=routes, middleware=[
        Middleware(page_base.PageBase, base_url_path=lambda: base_url_path),
        Middleware(GZipMiddleware, minimum_size=500)])
    return TestClient(app)


def _script(html: str) -> str:
    start = html.index("<head>") + len("<head>")
    return html[start:html.index("</script>", start) + len("</script>")]


@pytest.mark.parametrize(("path", "base", "segments"), [
    ("/", "", 0), ("/explore", "", 1), ("/explore/", "", 1), ("/studio", "studio", 0),
    ("/studio/explore", "studio", 1), ("/a/b", "", 2)])
def test_the_page_names_the_root_less_the_pages_segments(path, base, segments):
    assert page_base.page_segments(path, base) == segments
    answer = _app(base).get(path)
    assert answer.status_code == 200
    assert answer.text.startswith("<!DOCTYPE html><html><head><script>")
    assert _script(answer.text) == page_base.base_script(segments).decode()
    assert answer.text.replace(_script(answer.text), "") == PAGE
    assert int(answer.headers["content-length"]) == len(answer.content)


def test_what_the_script_computes_in_a_browser_is_the_servers_root():
    """The line's JavaScript, run by Node when there is one (the browser journeys run it in Chromium)."""
    node = subprocess.run(["which", "node"], capture_output=True, text=True).stdout.strip()
    if not node:
        pytest.skip("no node here: the browser journey checks the line in Chromium")
    cases = {("http://h:1/", 0): "http://h:1/", ("http://h:1/explore", 1): "http://h:1/",
             ("http://h:1/explore/", 1): "http://h:1/", ("http://h:1/p/studio/explore", 1): "http://h:1/p/studio/",
             ("http://h:1/p/studio", 0): "http://h:1/p/studio/", ("http://h:1/x", 3): "http://h:1/"}
    for (url, n), root in cases.items():
        js = page_base.base_script(n).decode().removeprefix("<script>").removesuffix("</script>")
        program = textwrap.dedent(f"""
            const u = new URL({url!r}); var window = {{}};
            var location = {{origin: u.origin, pathname: u.pathname}};
            {js}
            console.log(window.__streamlit.BACKEND_BASE_URL);""")
        out = subprocess.run([node, "-e", program], capture_output=True, text=True, check=True).stdout.strip()
        assert out == root, (url, n)


def test_the_page_asked_compressed_is_served_whole_with_its_line():
    client = _app()
    answer = client.get("/explore", headers={"accept-encoding": "gzip"})
    assert "content-encoding" not in answer.headers
    assert "BACKEND_BASE_URL" in answer.text


def test_everything_else_passes_untouched():
    client = _app()
    js = client.get("/static/js/app.js", headers={"accept-encoding": "identity"})
    assert js.content == SCRIPT
    assert client.get("/_stcore/health").text == "ok"
    assert client.post("/explore").text == PAGE
    # Static files keep their compression.
    assert client.get("/static/js/app.js", headers={"accept-encoding": "gzip"}).headers["content-encoding"] == "gzip"
    # A large HTML answer (not Streamlit's page) comes as it was, whole.
    big = client.get("/big")
    assert big.content == b"".join(b"<head>" + b"y" * 10_000 for _ in range(40))
