"""An annotator does 10 pairwise votes with the keyboard in Chromium; the lead reads the rank.
Screenshots: tests/screenshots/pairwise_*.png."""
from __future__ import annotations

import pytest

from tests.browser.conftest import stored_synthetic_aibench
from tests.browser.test_results_views import no_exception

ANN, ANN_PASSWORD = "pw-ann", "annotator-password-1"
KEYS = ["ArrowLeft", "ArrowRight", "ArrowDown", "b", "ArrowLeft", "ArrowRight", "ArrowLeft", "ArrowLeft",
        "ArrowRight", "ArrowDown"]


@pytest.fixture(scope="module")
def app_env(app_env, tmp_path_factory):
    """A stored synthetic AIBench set (3 papers), an annotator and a pairwise study of 12 pairs."""
    from structext_core.aibench import pairwise
    from structext_core.studio import accounts, storage

    with stored_synthetic_aibench(app_env, tmp_path_factory, 3, predictions=True):
        db = storage.open_db(app_env["db_path"])
        ann = accounts.create_user(db, ANN, ANN_PASSWORD, "annotator")
        app_env["study_id"] = pairwise.create_study(db, "browser pilot", "synthetic", [ann["id"]], n_pairs=12,
                                                    practice=0, repeat_share=0.0, seed=2)
    return app_env


def log_in(page, url, wait_for_app, user, password):
    page.goto(url)
    wait_for_app(page, timeout=60_000)
    sidebar = page.get_by_test_id("stSidebar")
    sidebar.get_by_label("User name", exact=True).fill(user)
    sidebar.get_by_label("Password", exact=True).fill(password)
    sidebar.get_by_role("button", name="Log in").click()
    sidebar.get_by_text(f"Logged in as {user}").wait_for()
    wait_for_app(page)


def test_ten_votes_with_keys(page, app_server, app_env, wait_for_app, screenshot):
    from structext_core.studio import storage

    frames: list[bytes] = []  # every websocket frame the server sends, and every image body
    page.on("websocket", lambda ws: ws.on("framereceived", lambda payload: frames.append(
        payload if isinstance(payload, bytes) else payload.encode())))
    responses: list = []
    page.on("response", lambda response: responses.append(response)
            if "/media/" in response.url and "/static/" not in response.url else None)
    log_in(page, app_server, wait_for_app, ANN, ANN_PASSWORD)
    page.get_by_test_id("stSidebar").get_by_role("link", name="Pairwise comparison", exact=True).click()
    page.get_by_role("heading", name="Pairwise comparison").wait_for()
    wait_for_app(page)
    page.locator('[data-testid="stImage"] img').nth(1).wait_for()
    no_exception(page)
    screenshot(page, "pairwise_vote_page")
    db = storage.open_db(app_env["db_path"])
    for n, key in enumerate(KEYS, start=1):
        page.get_by_text(f"Pair {n} of 12").wait_for(timeout=30_000)
        page.locator('[data-testid="stImage"] img').nth(1).wait_for()
        page.get_by_role("heading", name="Pairwise comparison").click()  # focus the page, not a field
        page.keyboard.press(key)
        page.get_by_text(f"Pair {n + 1} of 12").wait_for(timeout=30_000)
        wait_for_app(page)
    choices = [r[0] for r in db.execute("SELECT choice FROM pairwise_votes ORDER BY id")]
    expected = {"ArrowLeft": "left", "ArrowRight": "right", "ArrowDown": "tie", "b": "both_bad"}
    assert choices == [expected[k] for k in KEYS]
    seconds = [r[0] for r in db.execute("SELECT active_seconds FROM pairwise_votes")]
    assert all(s > 0 for s in seconds)
    body = page.locator("body").inner_text()
    media = [(r.url, r.body()) for r in responses]
    systems = [r[0] for r in db.execute("SELECT DISTINCT system_a FROM pairwise_pairs UNION "
                                        "SELECT DISTINCT system_b FROM pairwise_pairs")]
    papers = [r[0] for r in db.execute("SELECT DISTINCT paper_id FROM pairwise_pairs")]
    assert len(systems) == 6 and len(frames) > 20 and len(media) >= 8  # the browser caches an image seen before
    for secret in systems + papers:
        assert secret not in body and secret not in page.url
        assert not any(secret.encode() in frame for frame in frames), f"{secret!r} in a websocket frame"
        assert not any(secret in url or secret.encode() in data for url, data in media), f"{secret!r} in an image"
    assert all(len(data) % 262_144 == 0 for _, data in media)  # padded: the size names no system
    no_exception(page)
    screenshot(page, "pairwise_after_ten_votes")


def test_lead_reads_the_rank(page, app_server, app_env, wait_for_app, screenshot):
    log_in(page, app_server, wait_for_app, app_env["admin_user"], app_env["admin_password"])
    page.get_by_test_id("stSidebar").get_by_role("link", name="Pairwise studies", exact=True).click()
    page.get_by_role("heading", name="Pairwise studies").wait_for()
    wait_for_app(page, timeout=60_000)
    page.get_by_role("tab", name="Results").click()
    page.get_by_text("Human rank: Bradley-Terry strengths").wait_for(timeout=60_000)
    wait_for_app(page, timeout=60_000)
    no_exception(page)
    screenshot(page, "pairwise_lead_results")


def test_a_second_tab_takes_the_pair_over(page, app_server, app_env, wait_for_app, screenshot):
    """One tab holds the pair, as in studies: a second tab of the same person takes it over, the
    first shows no image and "Continue here"; its key press is then no vote."""
    from structext_core.studio import storage

    log_in(page, app_server, wait_for_app, ANN, ANN_PASSWORD)
    sidebar_link = ("link", {"name": "Pairwise comparison", "exact": True})
    page.get_by_test_id("stSidebar").get_by_role(sidebar_link[0], **sidebar_link[1]).click()
    page.get_by_text("Pair 11 of 12").wait_for(timeout=30_000)
    page.locator('[data-testid="stImage"] img').nth(1).wait_for()
    db = storage.open_db(app_env["db_path"])
    open_task = ("SELECT takeovers FROM pairwise_tasks t WHERE NOT EXISTS (SELECT 1 FROM pairwise_votes v"
                 " WHERE v.task_id = t.id) ORDER BY position LIMIT 1")
    before = db.execute(open_task).fetchone()[0]  # this tab took it from the first test's tab
    second = page.context.new_page()  # the same browser (its log-in cookie): another tab
    second.goto(app_server)
    wait_for_app(second, timeout=60_000)
    second.get_by_test_id("stSidebar").get_by_role(sidebar_link[0], **sidebar_link[1]).click()
    second.get_by_text("Pair 11 of 12").wait_for(timeout=30_000)
    second.locator('[data-testid="stImage"] img').nth(1).wait_for()
    # the first tab learns so at its next heartbeat
    page.get_by_text("This pair is open in another tab").wait_for(timeout=20_000)
    wait_for_app(page)
    assert page.locator('[data-testid="stImage"]').count() == 0
    no_exception(page)
    screenshot(page, "pairwise_taken_over")
    page.get_by_role("button", name="Continue here").click()
    page.locator('[data-testid="stImage"] img').nth(1).wait_for(timeout=30_000)
    second.get_by_text("This pair is open in another tab").wait_for(timeout=20_000)
    wait_for_app(page)
    page.get_by_role("heading", name="Pairwise comparison").click()
    page.keyboard.press("ArrowRight")
    page.get_by_text("Pair 12 of 12").wait_for(timeout=30_000)
    assert db.execute("SELECT choice, takeovers FROM pairwise_votes ORDER BY id DESC LIMIT 1").fetchone() == (
        "right", before + 2)  # the second tab's and "Continue here"
    second.close()
