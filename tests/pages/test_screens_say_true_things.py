"""Issue 46, items 2 and 3: the lead's screens of a lab-set study say true things in the lab's own ids.

A realistic small world: a lab set (multiple choice and short answers), a study of eight of its
questions, one person who answered all but one within a minute, one who answered one question, one who
has not started, a flag. The study pages are run with AppTest and every rendered text and table cell
is read: no ``None``, ``nan`` or ``NaN``, no content hash where the lab's own id belongs, no column of
another benchmark in the export's description, times in the unit that fits them.
"""
from __future__ import annotations

import json
import re

import pandas as pd
import pytest

from structext_core.labset.dataset import load_set
from structext_core.labset.study import create_study
from structext_core.studio import accounts, storage, study
from tests.labset.conftest import samples, write_set
from tests.pages import light_choices, light_forms
from tests.pages.html_tables import html_figures
from tests.pages.test_page_access import nodes, run_page
from tests.pages.test_page_study_admin import OPEN

#: A raw missing value, as a person must never read it.
RAW = re.compile(r"\b(None|nan|NaN)\b")


def rendered_texts(at) -> list[str]:
    """Every piece of text an AppTest run rendered: each element's proto as text (labels, values,
    help, options, captions, progress text), without the dataframes' Arrow bytes (read apart)."""
    out = []
    for node in nodes(at._tree):
        proto = getattr(node, "proto", None)
        if proto is None or getattr(node, "type", "") == "arrow_data_frame":
            continue
        # what a person reads: not the widget's id (Streamlit's, made of the key)
        out.append("\n".join(line for line in str(proto).splitlines() if not line.strip().startswith("id:")))
    return out


def _missing(value) -> bool:
    try:
        return value is None or bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def raw_missing(at) -> list[str]:
    """Where the page shows a raw missing value: a text with None/nan/NaN, a table cell that is
    missing (Streamlit draws it as "None") or reads so."""
    found = [text[:200] for text in rendered_texts(at) if RAW.search(text)]
    for i, frame in enumerate(at.dataframe):
        for column in frame.value.columns:
            if RAW.search(str(column)):
                found.append(f"dataframe {i}: column {column!r}")
            for value in frame.value[column]:
                if _missing(value) or (isinstance(value, str) and RAW.search(value)):
                    found.append(f"dataframe {i} ({list(frame.value.columns)[:4]}...): {column!r} = {value!r}")
                    break
    return found


@pytest.fixture
def lab_world(tmp_path, monkeypatch):
    monkeypatch.setenv("STRUCTEXT_DB", str(tmp_path / "db.sqlite"))
    monkeypatch.setenv("STRUCTEXT_DATA_DIR", str(tmp_path / "suites"))
    monkeypatch.setattr(accounts.credentials, "SCRYPT_N", 2**4)
    db = storage.open_db(tmp_path / "db.sqlite")
    lead = accounts.create_user(db, "lead", "password1", "admin")
    people = [accounts.create_user(db, f"ann{i}", "password1", "annotator") for i in (1, 2, 3)]
    folder = tmp_path / "suites" / "labsets"
    folder.mkdir(parents=True)
    items = load_set(write_set(folder, samples()))
    study_id, _ = create_study(db, name="lab-pilot", source="set.jsonl", items=items, n_items=8,
                               annotator_ids=[p["id"] for p in people], rule_text="No help.")
    by_content = {i["id"]: i for i in items}
    for who, person in enumerate(people[:2]):
        study.accept_rule(db, study_id, person["id"])
        rows = db.execute("SELECT a.id, i.sample_id, i.id FROM assignments a JOIN study_items i ON i.id = a.item_id"
                          " WHERE a.user_id = ? ORDER BY a.seq", [person["id"]]).fetchall()
        for n, (assignment, content_id, item_id) in enumerate(rows[:len(rows) - 1 if who == 0 else 1]):
            item = by_content[content_id]
            right = item["target"][0] if item["choices"] else item["target"][-1]
            wrong = "ABCD".replace(right, "")[0] if item["choices"] else "zzz"
            study.open_question(db, study_id, person["id"])
            study.submit_answer(db, person["id"], assignment, right if n % 2 else wrong)
            if who == 0 and n == 0:
                study.flag_question(db, study_id, person["id"], item_id, "broken", "the key looks wrong")
    own_ids = {row[0]: row[1] for row in db.execute(
        "SELECT sample_id, json_extract(sample_json, '$.kept.name') FROM study_items WHERE study_id = ?", [study_id])}
    return {"db": db, "lead": lead, "study": study_id, "own_ids": own_ids}


def open_study_admin(world, section: str):
    """The page on ``section`` with its one study chosen; the dashboard with every lazy expander open."""
    opened = {key: True for key in OPEN.values()} if section == "Dashboard" else {}
    return run_page("study_admin", world["lead"], sa_section=section, **opened)


def test_the_world_is_a_lab_set_with_hashes_of_ours_and_ids_of_the_lab(lab_world):
    ours, theirs = next(iter(lab_world["own_ids"].items()))
    assert ours.startswith("ls-") and theirs and not theirs.startswith("ls-")


def test_the_export_tab_describes_the_columns_the_lab_sets_export_has(lab_world):
    # regression (issue 46): a lab set's Export tab described AIBench's columns
    at = open_study_admin(lab_world, "Export")
    text = " ".join(m.value for m in at.markdown)
    columns = set(study.export_rows(lab_world["db"], lab_world["study"])[0])  # the file's own columns
    for foreign in ("paper_id", "system", "question_id", "conference"):
        assert f"`{foreign}`" not in text and foreign not in columns
    described = next(m.value for m in at.markdown if m.value.startswith("Each row is one answer"))
    named = set(re.findall(r"`([a-z_]+)`", described))
    assert named and named <= columns, named - columns
    assert {"format", "stratum", "sample_id", "response", "answer", "score"} <= named


def test_the_dashboard_shows_no_raw_missing_value(lab_world):
    at = open_study_admin(lab_world, "Dashboard")
    assert raw_missing(at) == []
    progress = next(d.value for d in at.dataframe if "last_answer" in d.value.columns).set_index("annotator")
    assert progress.loc["ann3", "last_answer"] == "no answer yet"  # regression: "None"


def test_the_dashboard_names_items_by_the_labs_ids(lab_world):
    # regression (issue 46): the flags table named the item by our content hash (ls-4b29bd...)
    at = open_study_admin(lab_world, "Dashboard")
    hashes = set(lab_world["own_ids"])
    for frame in at.dataframe:  # no table names an item by our content hash
        shown = {str(v) for column in frame.value.columns for v in frame.value[column]}
        assert not shown & hashes, shown & hashes
    flags = next(d.value for d in at.dataframe if "kind" in d.value.columns and "note" in d.value.columns)
    assert flags.loc[0, "item"] in set(lab_world["own_ids"].values())


def test_a_minute_long_pilot_is_timed_in_seconds_not_hours(lab_world):
    # regression (issue 46): 0.01 hours for a pilot of a few seconds
    at = open_study_admin(lab_world, "Dashboard")
    times = next(d.value for d in at.dataframe if any(c.startswith("answering") for c in d.value.columns))
    assert list(times.columns) == ["annotator", "answering (s)", "paused (s)", "idle (s)", "away (s)"]
    assert times.set_index("annotator").loc["ann1", "answering (s)"] < 120
    assert not [c for c in times.columns if "hours" in c]


def test_the_lead_sees_the_labs_id_in_the_export_files(lab_world):
    rows = study.export_rows(lab_world["db"], lab_world["study"])
    hashes, theirs = set(lab_world["own_ids"]), set(lab_world["own_ids"].values())
    assert {r["sample_id"] for r in rows} <= theirs
    assert not any(str(v) in hashes for r in rows for v in r.values())
    csv = study.to_csv(rows, list(rows[0]))
    assert not any(h in csv for h in hashes)
    assert set(pd.read_csv(__import__("io").StringIO(csv))["sample_id"]) <= theirs


def _bring(at, name: str, data: bytes, mime: str):
    at.file_uploader(key="lab_up_file").set_value((name, data, mime)).run()
    next(b for b in at.button if b.label == "Check").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    return at


def test_a_set_with_no_short_answer_is_asked_no_rule_for_them(lab_world):
    # regression (issue 46): "Short answers are scored: normalised" on a set with no short answer
    from tests.labset.test_upload import gpqa_bytes
    at = run_page("study_admin", lab_world["lead"], sa_benchmark="labset", sa_section="Set up a study")
    at.file_uploader(key="lab_up_file").set_value(("gpqa.csv", gpqa_bytes(), "text/csv")).run()
    assert [s for s in at.selectbox if s.key == "lab_up_rule"]  # before the check, the set is not known
    _bring(at, "gpqa.csv", gpqa_bytes(), "text/csv")
    assert {m.label: m.value for m in html_figures(at)}["Short answer"] == "0"
    assert not [s for s in at.selectbox if s.key == "lab_up_rule"]
    assert not [t for t in at.text_input if t.key == "lab_up_own_rule"]
    assert any("No short answer in this set" in c.value for c in at.caption)
    assert [b for b in at.button if b.label == "Import"]  # the check still stands: nothing to redo
    # a set with short answers is asked its rule
    short = "".join(json.dumps(s) + "\n" for s in samples() if "choices" not in s).encode()
    _bring(at, "short.jsonl", short, "application/jsonl")
    assert int({m.label: m.value for m in html_figures(at)}["Short answer"]) > 0
    assert [s for s in at.selectbox if s.key == "lab_up_rule"]


def test_the_study_form_asks_a_rule_for_short_answers_only_of_a_set_that_has_them(lab_world, tmp_path):
    # regression (issue 46): the study form said "Short answers are scored" for every set
    folder = tmp_path / "suites" / "labsets"
    (folder / "choices.jsonl").write_text("".join(json.dumps(s) + "\n" for s in samples() if "choices" in s))
    at = run_page("study_admin", lab_world["lead"], sa_benchmark="labset", sa_section="Set up a study")
    (set_key,) = [key for key in light_choices.choices(at) if light_choices.choice(at, key).label == "Set"]
    assert light_choices.choice(at, set_key).options == ["choices.jsonl", "set.jsonl"]
    at = light_choices.choose(at, set_key, "choices.jsonl")
    labels = [f["label"] for f in light_forms.fields(at, light_forms.only(at)).values()]
    assert "Short answers are scored" not in labels and "Or a rule of your own" not in labels
    assert any(c.value == "No short answer in choices.jsonl, so no rule to score them by." for c in at.caption)
    at = light_choices.choose(at, set_key, "set.jsonl")
    labels = [f["label"] for f in light_forms.fields(at, light_forms.only(at)).values()]
    assert "Short answers are scored" in labels and "Or a rule of your own" in labels
    assert not any("No short answer" in c.value for c in at.caption)


@pytest.mark.parametrize("page, who, state", [
    ("adjudication", "lead", {}),
    ("results", "lead", {"rs_benchmark": "labset"}),
    ("human_baseline", "ann2", {}),
    ("human_baseline", "ann3", {}),
    ("home", "lead", {}),
], ids=["adjudication", "results-labset", "baseline-mid-study", "baseline-not-started", "home"])
def test_the_main_views_of_the_lab_world_show_no_raw_missing_value_nor_our_hashes(lab_world, page, who, state):
    user = lab_world["lead"] if who == "lead" else accounts.get_user(lab_world["db"], who)
    at = run_page(page, user, **state)
    assert raw_missing(at) == []
    hashes = set(lab_world["own_ids"])
    shown = " ".join(rendered_texts(at)) + " ".join(
        str(v) for d in at.dataframe for c in d.value.columns for v in d.value[c])
    assert not [h for h in hashes if h in shown]
