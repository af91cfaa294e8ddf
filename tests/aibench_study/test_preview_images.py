"""The preview as an annotator of an image study (AIBench): each question with its options and its image as
the same blinded pixels an annotator receives, for the study's lead only, and nothing written."""
from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from structext_core.aibench import study as aibench_study
from structext_core.aibench.pairwise import SIZE_BUCKET
from structext_core.studio import access, accounts, study
from structext_core.ui.question_screen.choice_answer import option_label
from tests.pages.html_tables import progress_text
from tests.pages.light_choices import press

STUDIES = Path(__file__).resolve().parents[2] / "pages" / "study_admin.py"
TABLES = ("study_annotators", "assignments", "responses", "pauses", "audit_log", "study_leads")


@pytest.fixture
def led(world):
    db, people = world["db"], world["people"]
    pi = accounts.create_user(db, "pi", "password1", "lead")
    study_id = aibench_study.create_aibench_study(db, name="img-pi", dataset="synthetic", n_items=6,
                                                  annotator_ids=[people["ann1"]["id"]], seed=0, practice_items=1,
                                                  created_by=pi["id"])
    return study_id, pi


def counts(db):
    return {t: db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in TABLES}


def test_the_preview_shows_each_image_blinded_as_an_annotator_gets_it(world, led):
    study_id, pi = led
    db = world["db"]
    before = counts(db)
    shown = study.preview(db, pi, study_id)
    assert shown.questions and all(q.options and q.has_image for q in shown.questions)
    first = shown.questions[0]
    png = study.preview_image(db, pi, study_id, first.item_id, b"nonce")
    assert png.startswith(b"\x89PNG") and len(png) % SIZE_BUCKET == 0
    item = db.execute("SELECT json_extract(sample_json, '$.system'), json_extract(sample_json, '$.paper_id'),"
                      " json_extract(sample_json, '$.answer') FROM study_items WHERE id = ?", [first.item_id]).fetchone()
    for secret in (item[0], item[1], "images/"):
        assert secret.encode() not in png and secret not in repr(first)
    assert counts(db) == before
    other = accounts.create_user(db, "pi2", "password1", "lead")
    for who in (other, world["people"]["reader"], world["people"]["ann1"]):
        with pytest.raises(access.AccessError, match="Only an admin or a lead of the study may preview"):
            study.preview_image(db, who, study_id, first.item_id)
    with pytest.raises(study.StudyError, match="shows no image"):  # an item of another study
        study.preview_image(db, pi, study_id, 10**6)


def test_the_preview_page_draws_the_image_and_the_options(world, led):
    study_id, pi = led
    at = AppTest.from_file(str(STUDIES), default_timeout=90)
    at.session_state["user"] = pi
    at.run()
    press(at, "Preview as an annotator")
    next(b for b in at.button if b.label == "I have read the rule: start").click().run()
    assert not at.exception and not at.error
    assert len(at.get("image")) == 1 and "Practice question 1 of 1" == progress_text(at)
    shown = study.preview(world["db"], pi, study_id)
    labels = [b.label for b in at.button]
    assert [label for label in labels if label.startswith("**")] == [
        option_label(letter, text) for letter, text in zip("ABCD", shown.questions[0].options)]
    chosen = next(b for b in at.button if b.label.startswith("**B**"))
    chosen.click().run()
    assert "Submit B" in [b.label for b in at.button]
    assert counts(world["db"])["responses"] == 0 and counts(world["db"])["assignments"] == 6 + 1
