"""Issue 19, item 1, in Chromium: the rewriting page is no answer oracle for an open question.

ann1 takes part in an open Test-Hard study of two unanswered questions of the JSON
"object by id" task: one with the same skeleton as ann1's Real-Test rewriting item (other
values), one of another depth and width. ann1 opens the rewriting item and does what the
issue's attacker did: pastes the open question's reference and question into the Reference
and Question boxes, types ``x`` as the answer, reads what the answer check says, and types
the answer again line by line (every line it learnt, then ``x``) over a few page runs.
Then the same with the question of another shape (the structure check fails).

No WebSocket frame the browser received (searched as raw bytes) and no page text may carry
a line of either question's answer key as the answer check quotes it (``'line'``), the whole
key, or the word "solver"; the attacker must learn nothing; the page says the answer is
checked at review. Positive control: the pasted question of the same skeleton passes the
structure check, so without the seal its answer would be checked (and quoted).
Screenshot: tests/screenshots/rewrite-oracle-withheld.png.
"""

from __future__ import annotations

import ast
import re
import time

import pytest

from structext_core.structext_eval import campaign, rewrite
from structext_core.structext_eval import samples as samples_mod
from structext_core.structext_eval import study as structext_study
from structext_core.structext_eval.suites import generate_cell, generate_sample
from structext_core.studio import accounts, storage

pytestmark = pytest.mark.browser

ANN, ANN_PASSWORD = "ann1", "ann1-password-1"
SECRET_MAPPING = {"k": "Stadium", "Z": "City", "w": "Eugene", "l": "Track", "Y": "Surface", "v": "rubber"}
RUNS = 4  # page runs of the line-by-line attack per pasted question
#: What the issue's answer check replied: "line 1 of the answer reads 'x'; the solver has '{'".
SOLVER_SAYS = re.compile(r"the solver has ('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")")


@pytest.fixture(scope="module")
def world(app_env):
    """Written before the server starts: suites on disk (Home generates nothing), the accounts,
    a one-item Real-Test campaign for ann1 and ann1's open Test-Hard study."""
    original = generate_cell(8, 1, 1, 1, suite="test")[0]
    texts = rewrite.apply_mapping(original, SECRET_MAPPING)
    same_shape = {**original, "id": "test-hard-secret-1", "suite": "test-hard", "reference": texts.reference,
                  "question": texts.question, "answer": texts.answer}
    other_shape = generate_sample(8, 2, 2, suite="test-hard", index=0)  # same task, another depth and width
    samples_mod.write_jsonl(app_env["data_dir"] / "test.jsonl", [original])
    samples_mod.write_jsonl(app_env["data_dir"] / "test-hard.jsonl", [same_shape, other_shape])
    db = storage.open_db(app_env["db_path"])
    admin = accounts.create_user(db, app_env["admin_user"], app_env["admin_password"], "admin")
    ann = accounts.create_user(db, ANN, ANN_PASSWORD, "annotator")
    campaign.create_campaign(db, "Real pilot", [original], 1, [ann["id"]], admin)
    structext_study.create_study(db, name="hard-1", suite="test-hard", samples=[same_shape, other_shape], n_items=2,
                       annotator_ids=[ann["id"]])
    return {"same": same_shape, "other": other_shape}


@pytest.fixture(scope="module")
def base_url(world, app_server):
    return app_server


class Recorded:
    """Every WebSocket frame the tab receives and every page text read after a run."""

    def __init__(self, page):
        self.frames: list[bytes] = []
        self.texts: list[str] = []
        page.on("websocket", lambda ws: ws.on("framereceived", self._frame))

    def _frame(self, payload) -> None:
        self.frames.append(payload if isinstance(payload, bytes) else payload.encode("utf-8"))


def settle(page, wait_for_app):
    time.sleep(0.5)  # the script run starts a moment after the input
    wait_for_app(page, timeout=60_000)


def set_text(page, label, value, wait_for_app):
    box = page.get_by_label(label, exact=True)
    box.fill(value)
    box.press("Control+Enter")  # commits the text area: a rerun, the live checks run again
    settle(page, wait_for_app)


def leaked_forms(answer: str) -> dict[str, bytes]:
    """How the answer check quotes a key: each line (and the whole key) as ``repr``, raw and
    inside JSON; not the bare lines, which are lines of the pasted reference too."""
    lines = [line for line in answer.split("\n") if line.strip()]
    forms = {}
    for text in [*lines, answer]:
        quoted = repr(text)
        forms[quoted] = quoted.encode("utf-8")
        forms[f"json {quoted}"] = quoted.replace("\\", "\\\\").replace('"', '\\"').encode("utf-8")
    return forms


def attack(page, recorded, question, wait_for_app) -> list[str]:
    """The issue's attacker: paste, type ``x``, read the solver's line, type it, ``x`` again ...
    Returns the lines of the key learnt. With nothing learnt, it types the key's structure the
    way a guesser would (``{``, then ``{`` + the id line), so every run is a new answer check."""
    set_text(page, "Reference", question["reference"], wait_for_app)
    set_text(page, "Question", question["question"], wait_for_app)
    guesses = ["{", question["answer"].split("\n")[1] if "\n" in question["answer"] else "{"]
    learnt: list[str] = []
    typed: list[str] = []
    for _ in range(RUNS):
        set_text(page, "Answer", "\n".join([*typed, "x"]), wait_for_app)
        text = page.inner_text("body")
        recorded.texts.append(text)
        said = SOLVER_SAYS.search(text)
        if said:
            learnt.append(ast.literal_eval(said.group(1)))
            typed.append(learnt[-1])
        elif len(typed) < len(guesses):
            typed.append(guesses[len(typed)])
    return learnt


def log_in(page, base_url, wait_for_app):
    page.goto(base_url)
    wait_for_app(page, timeout=60_000)
    sidebar = page.get_by_test_id("stSidebar")
    sidebar.get_by_label("User name", exact=True).fill(ANN)
    sidebar.get_by_label("Password", exact=True).fill(ANN_PASSWORD)
    sidebar.get_by_role("button", name="Log in").click()
    sidebar.get_by_text(f"Logged in as {ANN}").wait_for(timeout=15_000)
    settle(page, wait_for_app)
    sidebar.get_by_role("link", name="Real-Test rewriting", exact=True).click()
    page.get_by_label("Reference", exact=True).wait_for()
    settle(page, wait_for_app)


def test_pasting_open_questions_into_a_rewrite_never_reveals_their_answer_keys(base_url, world, page,
                                                                               wait_for_app, screenshot):
    recorded = Recorded(page)
    log_in(page, base_url, wait_for_app)
    assert page.get_by_test_id("stException").count() == 0

    # Same skeleton: the structure check passes, so the answer check is what would answer.
    learnt_same = attack(page, recorded, world["same"], wait_for_app)
    same_text = recorded.texts[-1]
    page.get_by_text("Structure: reads as the original does", exact=False).first.scroll_into_view_if_needed()
    screenshot(page, "rewrite-oracle-withheld")

    # Another shape: the structure check fails, and no answer check runs at all.
    learnt_other = attack(page, recorded, world["other"], wait_for_app)
    other_text = recorded.texts[-1]
    assert page.get_by_test_id("stException").count() == 0

    blobs = [(f"frame {i}", frame) for i, frame in enumerate(recorded.frames)] + [
        (f"page text {i}", text.encode("utf-8")) for i, text in enumerate(recorded.texts)]
    found = {}
    for name in ("same", "other"):
        for label, form in leaked_forms(world[name]["answer"]).items():
            places = [where for where, blob in blobs if form in blob]
            if places:
                found[f"{name}: {label}"] = places[:3]
    solver = [where for where, blob in blobs if b"solver" in blob]
    assert (learnt_same, learnt_other) == ([], []), f"the attacker learnt key lines: {learnt_same} / {learnt_other}"
    assert found == {}, found
    assert solver == [], solver[:5]

    # What the page says instead: the structure check ran; the answer is checked at review.
    assert "Structure: reads as the original does; same skeleton." in same_text
    assert "Answer: checked at review" in same_text
    assert "Submitting needs the structure check to pass; the answer is checked at review." in same_text
    assert "Structure:" in other_text and "same skeleton" not in other_text
    assert "Answer: checked at review" in other_text
    assert len(recorded.frames) > 2 * RUNS  # the search had something to search
