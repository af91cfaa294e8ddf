"""A fragment of a screen that a run has replaced never runs again (the CI failure of
2026-11-27: a blank page, "Bad delta path index 5 (should be between [0, 3])").

A page that ends its run with ``st.stop()`` (the practice feedback screen, the rule screen,
...) skips Streamlit's own clean-up of the fragments that run did not draw. A request for one
of them still on its way (the question's input report, sent with the key that submitted)
then ran it after the screen was gone: its elements went to places the new screen does not
have, and the browser's app died. ``ui.run_page`` now forgets them at the stop.

Over the websocket, so the stale request is sent exactly after the stopping run, every time.
"""

from __future__ import annotations

import asyncio

import pytest

from benchmarks.st_client import StreamlitClient
from structext_core.structext_eval import study as structext_study
from structext_core.structext_eval import suites
from structext_core.studio import accounts, storage, study
from tests.browser.conftest import running_app

pytestmark = pytest.mark.browser

PASSWORD = "annotator-pw-1"
ACTIVITY = "structext_answer_activity"  # structext_core/ui/activity.py: drawn by the fragment activity_watch


@pytest.fixture
def practice_env(tmp_path, app_env) -> dict:
    """One annotator in a study that starts with a practice question (feedback: st.stop())."""
    db = storage.open_db(tmp_path / "stale.db")
    accounts.create_user(db, app_env["admin_user"], app_env["admin_password"], "admin")
    annotator = accounts.create_user(db, "ann1", PASSWORD, "annotator")
    samples = [suites.generate_sample(task_id, 2, 2, suite="stale", index=index)
               for index, task_id in enumerate((5, 6, 7, 9))]
    study_id = structext_study.create_study(db, name="stale-study", suite="stale", samples=samples, n_items=2,
                                  annotator_ids=[annotator["id"]], practice_items=1)
    study.accept_rule(db, study_id, annotator["id"])
    db.close()
    return {"env": {**app_env["env"], "STRUCTEXT_DB": str(tmp_path / "stale.db")}, "log": tmp_path / "streamlit.log"}


async def _stale_request_after_the_feedback_screen(url: str) -> tuple[str, list[str], list[str]]:
    client = StreamlitClient(url)
    await client.connect()
    try:
        await client.run(timeout=90)
        client.type_text("User name", "ann1")
        client.type_text("Password", PASSWORD)
        await client.click("Log in")
        await client.open_page("Human baseline")
        stale = client.components[ACTIVITY].fragment_id
        assert stale, "the input reports are drawn by a fragment"
        answer = next(label for label in client.widgets if label.startswith("Your answer"))
        client.type_text(answer, "x")
        feedback = await client.click("Submit answer")
        assert any("how you did" in text for text in feedback.texts), feedback.texts
        # The question's input report, arriving after the run that drew the feedback screen.
        # A request for a fragment the session no longer holds runs the whole app (ui/lost_clicks.py:
        # the feedback screen again, no element of the fragment); one it still holds runs at once on
        # this idle server (well within the 3 s).
        client.delta_fragments.clear()
        await client.send_component_state(
            ACTIVITY, {"report": {"assignment": 0, "seq": 99, "text": "x", "visible": True}})
        await asyncio.sleep(3)
        return stale, list(client.delta_fragments), list(client.errors)
    finally:
        await client.close()


def test_a_fragment_of_a_replaced_screen_never_runs_again(practice_env):
    with running_app(practice_env["env"], practice_env["log"]) as url:
        stale, fragments, notes = asyncio.run(asyncio.wait_for(_stale_request_after_the_feedback_screen(url), 180))
    assert stale not in fragments, (
        f"the fragment of the replaced question screen ran after the feedback screen was drawn "
        f"({fragments.count(stale)} elements sent to places that screen does not have); {notes}")
    assert f"Fragment {stale} is no longer held by this session: its rerun" in practice_env["log"].read_text()
