"""Who the people are, on the pages (issue 45): the Studies dashboard's *By who answered*, the export's
questionnaire columns, and Results' *Split people by* (AppTest, real interactions)."""

import csv
import io

import pytest
from streamlit.testing.v1 import AppTest

from structext_core.studio import access, accounts
from tests.labset.test_results import lab_world  # noqa: F401
from tests.pages.test_page_access import ROOT, Downloads, run_page
from tests.pages.test_page_results import charts
from tests.pages.test_page_study_admin import answered_study, db, mini_suite, open_page, people  # noqa: F401
from tests.studio.study.crowd_answers import FIELDS, answer, set_questionnaire


@pytest.fixture
def with_questionnaire(db, people, answered_study):  # noqa: F811
    """The dashboard's study (ann1 6 of 6 right, ann2 3 of 6) with a questionnaire: ann1 an expert
    of 12 years in "physics", ann2 a novice of 1 year who left the field of study empty."""
    set_questionnaire(db, answered_study)
    answer(db, answered_study, people["ann1"]["id"], expertise="expert", years=12, field="physics")
    answer(db, answered_study, people["ann2"]["id"], expertise="novice", years=1)
    return answered_study


def who_table(at):
    found = [d.value for d in at.dataframe if "people" in d.value.columns]
    assert len(found) == 1, [list(d.value.columns) for d in at.dataframe]
    return found[0]


def test_the_dashboard_breaks_accuracy_down_by_who_answered(db, people, with_questionnaire):  # noqa: F811
    at = open_page(people["lead"], opened=("who",))
    assert not at.exception
    assert [e.label for e in at.expander if e.label.startswith("By who answered")] == [
        "By who answered: accuracy by the questionnaire's expertise, years"]
    table = who_table(at)
    assert table["expertise"].tolist() == ["novice", "expert"]  # the options' order
    assert table["people"].tolist() == [1, 1] and table["n"].tolist() == [6, 6]
    assert table["score"].tolist() == [50.0, 100.0]
    picker = next(s for s in at.segmented_control if s.label == "Questionnaire field")
    assert picker.options == ["expertise", "years"]  # the text field is no axis
    picker.set_value("years").run()
    table = who_table(at)
    assert table["years"].tolist() == ["1", "12"] and table["score"].tolist() == [50.0, 100.0]
    assert any("Years of experience" in c.value for c in at.caption)
    drawn = [frame for _, frames in charts(at) for frame in frames if "people" in frame.columns]
    assert len(drawn) == 1 and drawn[0]["group"].tolist() == ["1", "12"]  # the chart of the table
    set_questionnaire(db, with_questionnaire, [f for f in FIELDS if f["name"] != "years"])  # the field taken out
    at.run()
    assert not at.exception and who_table(at)["expertise"].tolist() == ["novice", "expert"]


def test_a_study_without_questionnaire_has_no_such_block(db, people, answered_study):  # noqa: F811
    at = open_page(people["lead"])
    assert not at.exception and not [e for e in at.expander if e.label.startswith("By who answered")]


def test_the_exported_csv_has_a_column_per_field(db, people, with_questionnaire, monkeypatch):  # noqa: F811
    downloads = Downloads(monkeypatch)
    at = open_page(people["lead"], section="Export")
    assert not at.exception
    name, data = next((n, d) for n, d in downloads.files if n.endswith("-responses.csv"))
    rows = list(csv.DictReader(io.StringIO(data.decode("utf-8"))))
    assert list(rows[0])[-3:] == ["q_expertise", "q_years", "q_field"]
    assert {(r["annotator"], r["q_expertise"], r["q_years"], r["q_field"]) for r in rows} == {
        ("ann1", "expert", "12", "physics"), ("ann2", "novice", "1", "")}


def test_results_split_people_by_a_questionnaire_field(lab_world):  # noqa: F811
    """ann1 (all right) an expert, ann2 (right on half of 8) gave no answer: split by expertise, each
    group is a row beside the models with its answers; each answer still counted once."""
    lab_db, lead, study_id, _ = lab_world
    set_questionnaire(lab_db, study_id)
    answer(lab_db, study_id, accounts.get_user(lab_db, "ann1")["id"], expertise="expert", years=3)
    at = run_page("results", lead, rs_benchmark="labset", default_labset_table_open=True)  # the figures' box open
    split = next(s for s in at.selectbox if s.label == "Split people by")
    assert split.options == ["nothing", "expertise", "years"]
    table = next(d.value for d in at.dataframe if "overall" in d.value.columns)
    assert table["model"].tolist()[0] == "human"  # people pooled until a split is chosen
    split.set_value("expertise").run()
    assert not at.exception
    table = next(d.value for d in at.dataframe if "overall" in d.value.columns).set_index("model")
    people_rows = [m for m in table.index if m.startswith("human")]
    assert people_rows == ["human:expertise = expert", "human:expertise = no answer"]
    assert table.loc["human:expertise = expert", "mean"] == 100.0 and table.loc["human:expertise = expert", "n"] == 8
    assert table.loc["human:expertise = no answer", "mean"] == 50.0
    assert table.loc[people_rows, "n"].sum() == 16 and {"strong", "always-a"} <= set(table.index)
    assert next(t for t in at.toggle if t.label == "Each person apart").disabled
    address = dict(at.query_params)  # a reload or a copied link opens the same split
    assert address["split"] == "expertise"
    reloaded = AppTest.from_file(str(ROOT / "pages" / access.page("results").file), default_timeout=90)
    reloaded.session_state["user"] = lead
    reloaded.session_state["default_labset_table_open"] = True  # the figures' box open, as a click does
    for key, values in address.items():
        reloaded.query_params[key] = values
    reloaded.run()
    assert not reloaded.exception
    assert next(s for s in reloaded.selectbox if s.label == "Split people by").value == "expertise"
    again = next(d.value for d in reloaded.dataframe if "overall" in d.value.columns)
    assert [m for m in again["model"] if m.startswith("human")] == people_rows
