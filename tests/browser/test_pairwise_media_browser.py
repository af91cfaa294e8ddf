"""Issue 31: pairwise images that name no one. Two annotators dealt the same pair of images of
different sizes and shapes get files and addresses of their own, of one size on one canvas, which
stop answering once the page moved on. Its own server: the other pairwise journeys' lead reads the
rank of their one study. Screenshot: tests/screenshots/pairwise_letterboxed_pair.png."""
from __future__ import annotations

import pytest

from tests.browser.conftest import stored_synthetic_aibench
from tests.browser.test_pairwise_browser import ANN_PASSWORD, log_in

#: Two annotators dealt the same one pair, of two systems whose images differ in size and shape.
VIEWERS = ("pw-viewer-a", "pw-viewer-b")


@pytest.fixture(scope="module")
def app_env(app_env, tmp_path_factory):
    """A stored synthetic AIBench set (3 papers) whose "Blank Image" and "Rewired Edge" images are
    redrawn at 1248 x 832 and 832 x 1248, and a one-pair study of those two systems for two annotators."""
    from structext_core.aibench import pairwise
    from structext_core.studio import accounts, storage

    sizes = {"Blank Image": (1248, 832), "Rewired Edge": (832, 1248)}
    with stored_synthetic_aibench(app_env, tmp_path_factory, 3) as root:
        _redraw(root / "synthetic", sizes)
        db = storage.open_db(app_env["db_path"])
        viewers = [accounts.create_user(db, name, ANN_PASSWORD, "annotator")["id"] for name in VIEWERS]
        pairwise.create_study(db, "blind bytes", "synthetic", viewers, n_pairs=1, practice=0, repeat_share=0.0,
                              systems=sorted(sizes))
    return app_env


def _redraw(folder, sizes: dict) -> None:
    """The stored images of the systems in ``sizes`` redrawn at those sizes, textured (noise compresses
    badly: a larger file than a flat figure), their records updated."""
    import json
    import random

    from PIL import Image

    rows = [json.loads(line) for line in (folder / "images.jsonl").read_text().splitlines()]
    rng = random.Random(0)
    for row in rows:
        if row["system"] in sizes:
            width, height = sizes[row["system"]]
            Image.frombytes("RGB", (width, height), rng.randbytes(width * height * 3)).save(folder / row["path"])
            row.update(width=width, height=height)
    (folder / "images.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))



def test_each_viewer_gets_own_files_of_one_size_that_die_with_the_page(browser, app_server, app_env, wait_for_app,
                                                                        screenshot):
    """Issue 31: pairwise images were served at /media/<hash of the bytes>, the same URL for everyone
    (a regenerated image named its system), sized by the system's output, and still answered after
    the page was gone. Two annotators dealt the same pair of a 1248 x 832 and an 832 x 1248 image."""
    import io

    from PIL import Image

    served: dict[str, list] = {}
    tabs = {}
    for name in VIEWERS:
        context = browser.new_context(viewport={"width": 1400, "height": 900})
        tab = context.new_page()
        responses: list = []
        tab.on("response", lambda response, responses=responses: responses.append(response)
               if "/media/" in response.url else None)
        log_in(tab, app_server, wait_for_app, name, ANN_PASSWORD)
        tab.get_by_test_id("stSidebar").get_by_role("link", name="Pairwise comparison", exact=True).click()
        tab.get_by_text("Pair 1 of 1").wait_for(timeout=30_000)
        tab.locator('[data-testid="stImage"] img').nth(1).wait_for()
        wait_for_app(tab)
        sources = [tab.locator('[data-testid="stImage"] img').nth(k).get_attribute("src") for k in (0, 1)]
        bodies = {r.url: r.body() for r in responses}
        served[name] = [(src, next(body for url, body in bodies.items() if url.endswith(src))) for src in sources]
        tabs[name] = tab
    screenshot(tabs[VIEWERS[0]], "pairwise_letterboxed_pair")
    (a_left, a_left_bytes), (a_right, a_right_bytes) = served[VIEWERS[0]]
    (b_left, b_left_bytes), (b_right, b_right_bytes) = served[VIEWERS[1]]
    assert not {a_left, a_right} & {b_left, b_right}  # each viewer's own URLs
    images = {side: data for side, data in (("a", a_left_bytes), ("a2", a_right_bytes), ("b", b_left_bytes),
                                             ("b2", b_right_bytes))}
    assert len({len(data) for data in images.values()}) == 1  # one byte size, both sides, every viewer
    assert len(set(images.values())) == 4  # byte-different files
    sizes = {Image.open(io.BytesIO(data)).size for data in images.values()}
    assert sizes == {(1024, 1024)}  # one canvas, whatever the systems drew

    # A URL stops answering once its page is gone: after the vote the page shows no pair.
    tab = tabs[VIEWERS[0]]
    tab.get_by_role("heading", name="Pairwise comparison").click()
    tab.keyboard.press("ArrowLeft")
    tab.get_by_text("Pair 1 of 1").wait_for(state="detached", timeout=30_000)
    wait_for_app(tab)
    stranger = browser.new_context()  # no cookie: as anyone who learnt the address
    try:
        gone = None
        for _ in range(40):
            gone = [stranger.request.get(app_server.rstrip("/") + url if url.startswith("/") else url).status
                    for url in (a_left, a_right)]
            if gone == [404, 404]:
                break
            tab.wait_for_timeout(250)
        assert gone == [404, 404], gone
        # the other viewer's page is still there: their files still answer, to them
        assert tabs[VIEWERS[1]].request.get(app_server.rstrip("/") + b_left if b_left.startswith("/")
                                            else b_left).status == 200
    finally:
        stranger.close()
        for open_tab in tabs.values():
            open_tab.context.close()
