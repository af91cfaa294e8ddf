"""AppTest of the faster question review (pages/question_review.py, pages/question_review_admin.py):
accept the remaining questions at once, decide by keyboard, and a one-reviewer campaign at the
default share of double review."""
from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from structext_core.studio import question_review as qr
from tests.aibench import review_data

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "question_review.py")
ADMIN_PAGE = str(ROOT / "pages" / "question_review_admin.py")


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("STRUCTEXT_DATA_DIR", str(tmp_path / "suites"))
    monkeypatch.setenv("STRUCTEXT_EXPORTS_DIR", str(tmp_path / "exports"))
    found = review_data.setup(tmp_path, monkeypatch, papers=2)
    db, lead, r1 = found["db"], found["lead"], found["reviewers"][0]
    found["cid"] = qr.create_campaign(db, "Pilot", review_data.DATASET, [r1["id"]], lead, double_share=0)
    found["item"] = qr.next_item(db, found["cid"], r1["id"])
    return found


def run_as(page, user, **state):
    at = AppTest.from_file(page, default_timeout=60)
    at.session_state["user"] = user
    for key, value in state.items():
        at.session_state[key] = value
    return at.run()


def button(at, label):
    return next(b for b in at.button if b.label == label)


def test_a_campaign_with_one_reviewer_at_the_default_share_is_created(env):
    """Regression: one reviewer at the form's default share (0.2 reviewed twice) failed with 'Double
    review needs at least two reviewers'."""
    db, lead, (r1, r2) = env["db"], env["lead"], env["reviewers"]
    at = run_as(ADMIN_PAGE, lead)
    next(t for t in at.text_input if t.label == "Campaign name").set_value("Solo")
    next(m for m in at.multiselect if m.label == "Reviewers").set_value([r1["id"]])
    button(at, "Create campaign").click().run()
    assert not at.exception and not at.error
    solo = next(c for c in qr.list_campaigns(db) if c["name"] == "Solo")
    assert solo["double_share"] == 0 and not any(i["double"] for i in qr.list_items(db, solo["id"]))
    assert any("created" in s.value for s in at.success)
    # the form says why, and adapts its share to two reviewers
    next(m for m in at.multiselect if m.label == "Reviewers").set_value([r1["id"]]).run()
    assert any("Double review needs at least two reviewers" in c.value for c in at.caption)
    share = next(s for s in at.slider if s.label == "Share of papers reviewed twice")
    assert share.value == 0 and share.disabled
    next(m for m in at.multiselect if m.label == "Reviewers").set_value([r1["id"], r2["id"]]).run()
    share = next(s for s in at.slider if s.label == "Share of papers reviewed twice")
    assert share.value == qr.DEFAULT_DOUBLE_SHARE and not share.disabled
