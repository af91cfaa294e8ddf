"""The lead's side of an AIBench study with AppTest: create it on Studies, its dashboard (accuracy by
level, system, conference with intervals), adjudication (image, options, key, each person's letter)
and export."""
from __future__ import annotations

import csv
import io

from structext_core.aibench import study as aibench_study
from structext_core.studio import study
from tests.pages import light_choices, light_forms
from tests.pages.html_tables import html_text
from tests.pages.light_parts import notes
from tests.pages.test_page_access import Downloads, run_page


def _answered(world, n_items=6):
    """A study answered by both annotators: ann1 always right, ann2 always 'A'."""
    db, p = world["db"], world["people"]
    study_id = aibench_study.create_aibench_study(db, name="images", dataset="synthetic", n_items=n_items,
                                          annotator_ids=[p["ann1"]["id"], p["ann2"]["id"]], seed=3)
    for who in ("ann1", "ann2"):
        uid = p[who]["id"]
        study.accept_rule(db, study_id, uid)
        while (view := study.open_question(db, study_id, uid)) is not None:
            key = db.execute("SELECT json_extract(sample_json, '$.answer') FROM study_items WHERE id = ?",
                             [view.item_id]).fetchone()[0]
            study.submit_answer(db, uid, view.assignment_id, key if who == "ann1" else "A")
    return study_id


def test_the_lead_creates_an_aibench_study(world):
    at = run_page("study_admin", world["people"]["lead"], sa_section="Set up a study")
    at = light_choices.choose(at, "sa_benchmark", "aibench")  # the benchmark: a light chooser
    form = light_forms.only(at)  # one element (issue 46), its help in AIBench's own words
    fields = light_forms.fields(at, form)
    assert fields["dataset"]["value"] == "synthetic" and fields["gold_items"]["help"].startswith("Level-1 questions")
    assert fields["rule_text"]["value"] == aibench_study.DEFAULT_AIBENCH_RULE
    at = light_forms.submit(at, form, name="from the page", n_items=10, annotators=[world["people"]["ann1"]["id"]],
                            practice_items=2)
    assert not at.exception and not notes(at, "error"), [e.value for e in notes(at, "error")]
    created = [s for s in study.list_studies(world["db"]) if s.name == "from the page"]
    assert created and created[0].benchmark == "aibench" and created[0].suite == "synthetic"
    assert (created[0].n_items, created[0].practice_items) == (10, 2)
    assert "AIBench synthetic" in created[0].label


def test_the_dashboard_breaks_accuracy_down_by_level_and_system(world):
    study_id = _answered(world)
    at = run_page("study_admin", world["people"]["lead"], sa_study=study.get_study(world["db"], study_id),
                  sa_open_accuracy=True)  # the accuracy table: a lazy expander
    assert not at.exception
    groups = at.segmented_control(key="sa_group_aibench")
    assert {"Level", "System", "Conference"} <= set(groups.options)
    groups.set_value("System").run()
    table = [d.value for d in at.dataframe if "score_low" in d.value.columns][0]
    assert "system" in table.columns and table["n"].sum() == 12
    groups.set_value("Annotator").run()
    table = [d.value for d in at.dataframe if "score_low" in d.value.columns][0]
    scores = dict(zip(table["annotator"], table["score"]))
    assert scores["ann1"] == 100.0 and scores["ann2"] < 100.0
    assert any("accuracy" in c.value.lower() for c in notes(at, "caption"))


def test_adjudication_shows_the_image_the_options_the_key_and_each_letter(world):
    study_id = _answered(world)
    lead = world["people"]["lead"]
    at = run_page("adjudication", lead, adj_study=study.get_study(world["db"], study_id))
    assert len(at.get("image")) == 1
    said = " ".join(m.value for m in at.markdown)
    assert "(answer key)" in said and "Chose " in html_text(at)
    assert any("ann1" in c.value and "ann2" in c.value for c in notes(at, "caption"))
    assert any("level" in c.value.lower() for c in notes(at, "caption"))


def test_export_has_the_item_columns_and_no_structext_results(world, monkeypatch):
    study_id = _answered(world)
    downloads = Downloads(monkeypatch)
    at = run_page("study_admin", world["people"]["lead"], sa_section="Export",
                  sa_study=study.get_study(world["db"], study_id))
    labels = [b.label for b in at.get("download_button")]
    assert labels == ["Responses (CSV)", "Responses (JSONL)", "People as an Inspect AI log (.eval)"]
    from inspect_ai.log import read_eval_log
    (name, data), = [(n, d) for n, d in downloads.files if n.endswith("_human-baseline_images.eval")]
    (world["root"] / name).write_bytes(data)
    log = read_eval_log(str(world["root"] / name))
    assert log.eval.model == "human/images" and len(log.samples) == 12
    data = dict(downloads.files)["images-responses.csv"].decode()
    rows = list(csv.DictReader(io.StringIO(data)))
    assert len(rows) == 12 and {"paper_id", "system", "question_id", "level", "conference"} <= set(rows[0])
    assert {r["score"] for r in rows} <= {"1.0", "0.0"}
