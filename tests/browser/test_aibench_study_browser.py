"""An annotator answers AIBench questions from the image alone in Chromium, with the keyboard (A-D
choose, Enter submits), and reloads mid-question without losing the chosen option or the clock.
Screenshots: tests/screenshots/aibench_study_*.png."""
from __future__ import annotations

import json
import time

import pytest

from structext_core.aibench import study as aibench_study
from tests.browser.conftest import clock_seconds, stored_synthetic_aibench
from tests.browser.test_pairwise_browser import log_in
from tests.browser.test_results_views import no_exception

pytestmark = pytest.mark.browser

ANN, ANN_PASSWORD = "img-ann", "annotator-password-1"
N_ITEMS = 4


@pytest.fixture(scope="module")
def app_env(app_env, tmp_path_factory):
    """A stored synthetic AIBench set (3 papers), an annotator and an AIBench study: 1 practice
    question, then 4."""
    from structext_core.studio import accounts, storage

    with stored_synthetic_aibench(app_env, tmp_path_factory, 3):
        db = storage.open_db(app_env["db_path"])
        ann = accounts.create_user(db, ANN, ANN_PASSWORD, "annotator")
        app_env["study_id"] = aibench_study.create_aibench_study(db, name="images pilot", dataset="synthetic",
                                                         n_items=N_ITEMS, annotator_ids=[ann["id"]], seed=4,
                                                         practice_items=1)
        app_env["ann_id"] = ann["id"]
    return app_env


def _current(db, user_id) -> dict:
    row = db.execute("SELECT i.sample_json, a.id FROM assignments a JOIN study_items i ON i.id = a.item_id"
                     " LEFT JOIN responses r ON r.assignment_id = a.id WHERE a.user_id = ? AND r.id IS NULL"
                     " ORDER BY a.seq LIMIT 1", [user_id]).fetchone()
    return {**json.loads(row[0]), "assignment_id": row[1]}


def _press(page, key: str) -> None:
    page.get_by_role("heading", name="Human baseline").click()  # the page has the focus, not a field
    page.keyboard.press(key)


def test_keyboard_answers_and_a_reload_mid_question(page, app_server, app_env, wait_for_app, screenshot):
    from structext_core.studio import storage

    frames: list[bytes] = []
    page.on("websocket", lambda ws: ws.on("framereceived", lambda payload: frames.append(
        payload if isinstance(payload, bytes) else payload.encode())))
    images: list[tuple[str, bytes]] = []  # read as each arrives: a reload drops the bodies

    def keep_image(request) -> None:
        response = request.response()
        if "/media/" in request.url and response is not None and "image" in (response.headers.get("content-type") or ""):
            images.append((request.url, response.body()))

    page.on("requestfinished", keep_image)
    db = storage.open_db(app_env["db_path"])
    uid = app_env["ann_id"]

    log_in(page, app_server, wait_for_app, ANN, ANN_PASSWORD)
    page.get_by_test_id("stSidebar").get_by_role("link", name="Human baseline", exact=True).click()
    page.get_by_role("button", name="I have read the rule: start").click()
    page.get_by_text("Practice question 1 of 1").wait_for()
    page.locator('[data-testid="stImage"] img').first.wait_for()
    wait_for_app(page)
    no_exception(page)
    screenshot(page, "aibench_study_practice_question")

    # practice: a wrong letter by key, Enter; the key is shown only now
    item = _current(db, uid)
    assert "answer key" not in page.locator("body").inner_text().lower()
    wrong = next(x for x in "ABCD"[:len(item["options"])] if x != item["answer"])
    _press(page, wrong)
    page.get_by_role("button", name=f"Submit {wrong}").wait_for()
    wait_for_app(page)
    _press(page, "Enter")
    page.get_by_text("The answer key:").wait_for()
    wait_for_app(page)
    screenshot(page, "aibench_study_practice_feedback")
    page.get_by_role("button", name="Start the study").click()

    pressed = []
    for n in range(1, N_ITEMS + 1):
        page.get_by_text(f"Question {n} of {N_ITEMS}").wait_for()
        page.locator('[data-testid="stImage"] img').first.wait_for()
        wait_for_app(page)
        item = _current(db, uid)
        letters = "ABCD"[:len(item["options"])]
        letter = item["answer"] if n % 2 else next(x for x in letters if x != item["answer"])
        _press(page, letter.lower())
        page.get_by_role("button", name=f"Submit {letter}").wait_for()
        wait_for_app(page)
        if n == 2:  # a reload mid-question: the choice and the clock are the server's
            time.sleep(3)
            before = clock_seconds(page)
            screenshot(page, "aibench_study_chosen_before_reload")
            page.reload()
            wait_for_app(page, timeout=60_000)
            page.get_by_text(f"Question {n} of {N_ITEMS}").wait_for()
            page.get_by_role("button", name=f"Submit {letter}").wait_for()
            page.locator('[data-testid="stImage"] img').first.wait_for()
            wait_for_app(page)
            assert clock_seconds(page) >= before >= 2
            assert _current(db, uid)["assignment_id"] == item["assignment_id"]
            screenshot(page, "aibench_study_after_reload")
        _press(page, "Enter")
        pressed.append((letter, item["answer"]))
        page.get_by_text(f"Question {n + 1} of {N_ITEMS}").or_(page.get_by_text("You have answered all")).wait_for()
    wait_for_app(page)
    screenshot(page, "aibench_study_finished")
    rows = db.execute("SELECT r.response, r.exact_match, r.elapsed_seconds FROM responses r JOIN study_items i"
                      " ON i.id = r.item_id WHERE r.user_id = ? AND i.kind = 'study' ORDER BY r.id", [uid]).fetchall()
    assert [(r[0], r[1]) for r in rows] == [(letter, int(letter == key)) for letter, key in pressed]
    assert rows[1][2] >= 3  # the reloaded question's time counts the time before the reload

    # nothing names a system or a paper: page text, URL, websocket frames, image bytes and names
    systems = [r[0] for r in db.execute("SELECT DISTINCT json_extract(strata, '$.system') FROM study_items")]
    papers = [r[0] for r in db.execute("SELECT DISTINCT json_extract(strata, '$.paper_id') FROM study_items")]
    assert len(images) >= 3 and frames
    body = page.locator("body").inner_text()
    for secret in systems + papers + ["images/"]:
        assert secret not in body and secret not in page.url
        assert not any(secret.encode() in frame for frame in frames), f"{secret!r} in a websocket frame"
        assert not any(secret in url or secret.encode() in data for url, data in images), f"{secret!r} in an image"
    assert all(len(data) % 262_144 == 0 for _, data in images)  # padded: the size names no system


def test_the_lead_reads_the_dashboard_and_adjudicates(page, app_server, app_env, wait_for_app, screenshot):
    """After the annotator's journey (same server): the dashboard by system, and one item in full."""
    log_in(page, app_server, wait_for_app, app_env["admin_user"], app_env["admin_password"])
    page.get_by_test_id("stSidebar").get_by_role("link", name="Studies", exact=True).click()
    page.get_by_role("heading", name="Human-baseline studies").wait_for()
    wait_for_app(page, timeout=60_000)
    page.get_by_text("Accuracy", exact=True).wait_for(timeout=60_000)
    page.get_by_text("Accuracy of each annotator and of each group of questions", exact=False).click()  # its box
    page.get_by_test_id("stButtonGroup").get_by_text("System", exact=True).click(timeout=60_000)
    wait_for_app(page, timeout=60_000)
    no_exception(page)
    page.get_by_text("Accuracy", exact=True).scroll_into_view_if_needed()
    screenshot(page, "aibench_study_lead_dashboard")
    page.get_by_test_id("stSidebar").get_by_role("link", name="Adjudication", exact=True).click()
    page.get_by_role("heading", name="Adjudication").wait_for()
    page.locator('[data-testid="stImage"] img').first.wait_for(timeout=60_000)
    wait_for_app(page, timeout=60_000)
    no_exception(page)
    assert page.get_by_text("(answer key)").count() == 1
    page.get_by_text("(answer key)").scroll_into_view_if_needed()
    screenshot(page, "aibench_study_lead_adjudication")
