"""From the page (issue 44, item 2), with AppTest driving the real file uploaders: the lead brings a set
on Study admin (upload, Check, the report, Import, the set in the form), a set in an unknown layout
is refused with the mapping to write, and an admin adds models' answers on Results (checked before
they are kept; a file at fault writes nothing). Only admins see either."""
from __future__ import annotations

import json

import pytest

from structext_core.evaluation import item_sets
from structext_core.labset import study as lab_study
from tests.labset.test_results import lab_world  # noqa: F401 - the fixture
from tests.labset.test_upload import csv_bytes, gpqa_bytes
from tests.pages import light_choices, light_forms
from tests.pages.html_tables import html_figures
from tests.pages.test_page_access import run_page


@pytest.fixture
def lead_world(tmp_path, monkeypatch):
    from structext_core.studio import accounts, storage
    monkeypatch.setenv("STRUCTEXT_DB", str(tmp_path / "db.sqlite"))
    monkeypatch.setenv("STRUCTEXT_DATA_DIR", str(tmp_path / "suites"))
    monkeypatch.setattr(accounts.credentials, "SCRYPT_N", 2**4)
    db = storage.open_db(tmp_path / "db.sqlite")
    lead = accounts.create_user(db, "lead", "password1", "admin")
    accounts.create_user(db, "ann1", "password1", "annotator")
    return db, lead


def text_of(at) -> str:
    return "\n".join(str(e.value) for e in [*at.markdown, *at.caption, *at.success, *at.error, *at.code, *at.text])


def button(at, label):
    return next(b for b in at.button if b.label == label)


def test_the_lead_brings_a_gpqa_csv_checks_it_reads_the_report_and_imports_it(lead_world):
    db, lead = lead_world
    at = run_page("study_admin", lead, sa_benchmark="labset")
    assert any("No set yet: bring one above" in i.value for i in at.info)
    assert at.expander[0].label == "Bring a set" and not [b for b in at.button if b.label == "Check"]
    at.file_uploader(key="lab_up_file").set_value(("gpqa.csv", gpqa_bytes(), "text/csv")).run()
    at.text_input(key="lab_up_strata").input("Subject")
    at.number_input(key="lab_up_seed").set_value(3)
    button(at, "Check").click().run()
    assert not at.exception and not at.error
    shown = text_of(at)
    assert "gpqa.csv can be imported: 12 questions." in shown
    assert {m.label: m.value for m in html_figures(at)} == {"Multiple choice": "12", "Short answer": "0", "Strata": "3"}
    assert "**Strata** (Subject): Biology **4** · Chemistry **4** · Physics **4**" in shown
    assert "**Layout recognised**: gpqa (question Question; options Correct Answer, " in shown
    assert "  12 questions: 12 multiple choice, 0 short answer; 0 on an image" in shown  # the command's own lines
    # the first three questions, each with its four lettered options as the question screen draws them
    assert [t.value for t in at.text][:3] == [f"Which value does experiment {i} give?" for i in range(3)]
    options = [b.label for b in at.button if b.key and b.key.startswith("lab_up_preview_1_")]
    assert [o[:5] for o in options] == ["**A**", "**B**", "**C**", "**D**"]
    assert sorted(o[8:] for o in options) == ["right 0", "wrong one 0", "wrong three 0", "wrong two 0"]
    assert at.text_input(key="lab_up_name").value == "gpqa.csv"
    at.text_input(key="lab_up_name").input("lab-gpqa.csv")
    button(at, "Import").click().run()
    assert not at.exception and not at.error
    assert "Imported 'lab-gpqa.csv': 12 questions." in text_of(at)
    folder = lab_study.sets_dir()
    assert sorted(p.name for p in folder.iterdir()) == ["lab-gpqa.csv", "lab-gpqa.csv.mapping.json"]
    assert (folder / "lab-gpqa.csv").read_bytes() == gpqa_bytes()
    (form_set,) = [c for c in (light_choices.choice(at, key) for key in light_choices.choices(at)) if c.label == "Set"]
    assert form_set.options == ["lab-gpqa.csv"] and form_set.value == "lab-gpqa.csv"
    form = light_forms.only(at)  # the study's form: one element, its fields as the set was checked
    assert light_forms.fields(at, form)["strata_key"]["value"] == "Subject"
    # the same name again: refused, nothing replaced
    at.file_uploader(key="lab_up_file").set_value(("lab-gpqa.csv", gpqa_bytes(6), "text/csv")).run()
    button(at, "Check").click().run()
    button(at, "Import").click().run()
    assert any("a set of that name is there already" in e.value and "nothing written" in e.value for e in at.error)
    assert (folder / "lab-gpqa.csv").read_bytes() == gpqa_bytes()
    # and a study of it opens from the form below
    form = light_forms.only(at)
    at = light_forms.submit(at, form, name="gpqa-pilot", n_items=12,
                            annotators=light_forms.options(at, form, "annotators")[:1])
    assert not at.exception
    from structext_core.studio import study
    assert [(s.name, s.suite) for s in study.list_studies(db)] == [("gpqa-pilot", "lab-gpqa.csv")]


def test_an_unmapped_ambiguous_csv_shows_the_refusal_with_the_mapping_to_write_and_no_import(lead_world):
    _, lead = lead_world
    data = csv_bytes(["prompt", "opt1", "opt2", "opt3", "gold", "subject"],
                     [[f"Q{i}?", f"a{i}", f"b{i}", f"c{i}", "ABC"[i % 3], "maps"] for i in range(6)])
    at = run_page("study_admin", lead, sa_benchmark="labset")
    at.file_uploader(key="lab_up_file").set_value(("odd.csv", data, "text/csv")).run()
    button(at, "Check").click().run()
    assert not at.exception
    assert any("cannot be imported as it is; nothing was written" in e.value for e in at.error)
    said = "\n".join(c.value for c in at.code)
    assert "columns found: prompt, opt1, opt2, opt3, gold, subject" in said and "write the mapping: --map" in said
    mapping = json.loads(at.code[-1].value)
    assert mapping["question"] == "prompt" and mapping["options"] == ["opt1", "opt2", "opt3"]
    assert not [b for b in at.button if b.label == "Import"] and not lab_study.available_sets()
    # the mapping written (its key's kind checked by the lead), checked again: it can be imported
    at.text_area(key="lab_up_mapping").input(json.dumps({**mapping, "key": "gold:letter"}))
    button(at, "Check").click().run()
    assert "odd.csv can be imported: 6 questions." in text_of(at) and button(at, "Import")


def test_a_set_naming_images_is_refused_pointing_to_the_command_line(lead_world):
    from tests.labset.conftest import samples
    _, lead = lead_world
    data = "".join(json.dumps(s) + "\n" for s in samples()).encode()
    at = run_page("study_admin", lead, sa_benchmark="labset")
    at.file_uploader(key="lab_up_file").set_value(("set.jsonl", data, "application/jsonl")).run()
    button(at, "Check").click().run()
    said = "\n".join(c.value for c in at.code)
    assert "cannot be uploaded as a single file" in said and "python -m structext_core labset import FILE" in said
    assert not [b for b in at.button if b.label == "Import"]


def test_an_admin_adds_a_models_answers_on_results_and_the_model_shows_beside_the_people(lab_world):  # noqa: F811
    db, lead, _, items = lab_world
    at = run_page("results", lead, rs_benchmark="labset", default_labset_table_open=True,
                  default_labset_answers_open=True)
    table = next(d.value for d in at.dataframe if "overall" in d.value.columns)
    assert "uploaded-model" not in set(table["model"])
    lines = "".join(json.dumps({"id": i["source_id"], "model": "uploaded-model", "answer": i["target"][0]}) + "\n"
                    for i in items).encode()
    uploader = next(u for u in at.file_uploader if u.label.startswith("Models' answers to set.jsonl"))
    uploader.set_value(("uploaded.jsonl", lines, "application/jsonl")).run()
    button(at, "Check and keep").click().run()
    assert not at.exception
    assert any("Kept uploaded.jsonl with set.jsonl" in s.value for s in at.success)
    assert (item_sets.predictions_dir("labset", "set.jsonl") / "uploaded.jsonl").read_bytes() == lines
    table = next(d.value for d in at.dataframe if "overall" in d.value.columns)
    assert {"human", "uploaded-model", "strong", "always-a"} <= set(table["model"])
    assert table.set_index("model").loc["uploaded-model", "mean"] == 100.0
    at.run()  # a new uploader, empty, for the next file
    assert next(u for u in at.file_uploader if u.label.startswith("Models' answers")).value is None


def test_a_bad_predictions_file_shows_its_problems_and_writes_nothing(lab_world):  # noqa: F811
    db, lead, _, _ = lab_world
    kept = item_sets.predictions_dir("labset", "set.jsonl")
    before = sorted(p.name for p in kept.iterdir())
    at = run_page("results", lead, rs_benchmark="labset", default_labset_table_open=True,
                  default_labset_answers_open=True)
    bad = b"".join(json.dumps({"id": f"nope{n}", "model": "m", "answer": "A"}).encode() + b"\n" for n in range(30))
    next(u for u in at.file_uploader if u.label.startswith("Models' answers")).set_value(
        ("bad.jsonl", bad, "application/jsonl")).run()
    button(at, "Check and keep").click().run()
    assert not at.exception
    assert any("Nothing was kept. bad.jsonl: not stored, 30 problem(s):" in e.value for e in at.error)
    problems = at.code[-1].value.splitlines()
    assert problems[0] == "bad.jsonl:1: field 'id': 'nope0' is no item of the set"
    assert len(problems) == 21 and problems[-1] == "... and 10 more"  # the first 20 named
    assert sorted(p.name for p in kept.iterdir()) == before
    # the same name as a file kept: refused, naming it
    next(u for u in at.file_uploader if u.label.startswith("Models' answers")).set_value(
        ("models.jsonl", b'{"id": "mc00", "model": "m", "answer": "A"}\n', "application/jsonl")).run()
    button(at, "Check and keep").click().run()
    assert any("models.jsonl: a file of that name is kept for set.jsonl already" in e.value for e in at.error)


@pytest.mark.parametrize("role", ["researcher", "annotator"])
def test_only_admins_are_offered_the_uploads(lab_world, role):  # noqa: F811
    from structext_core.studio import accounts
    db, _, _, _ = lab_world
    user = accounts.get_user(db, "ann1") if role == "annotator" else accounts.create_user(
        db, "reader", "password1", "researcher")
    at = run_page("results", user, rs_benchmark="labset")
    assert not at.exception and not at.file_uploader and "Add models' answers" not in [e.label for e in at.expander]
    at = run_page("study_admin", user, sa_benchmark="labset")
    assert not at.file_uploader and "This page is for leads or admins only" in at.error[0].value
