"""Results for the lab's own set: people beside the models' answers kept with the set, on the same
items, with intervals and a breakdown by format and stratum (core, then the section on the page)."""
from __future__ import annotations

import json

import pytest

from structext_core.evaluation import item_sets
from structext_core.labset.dataset import load_set
from structext_core.labset.study import create_study
from structext_core.views import benchmark_results as lab_results
from tests.labset.conftest import samples, write_set
from tests.pages.light_choices import choice, open_section, sections


@pytest.fixture
def lab_world(tmp_path, monkeypatch):
    """A set in the sets folder, a study of 8 of its questions answered by two people (ann1 all
    right, ann2 right on half), and two models' files beside it (one all right, one always "A"),
    and a third file that is broken."""
    from structext_core.studio import accounts, storage, study
    monkeypatch.setenv("STRUCTEXT_DB", str(tmp_path / "db.sqlite"))
    monkeypatch.setenv("STRUCTEXT_DATA_DIR", str(tmp_path / "suites"))
    monkeypatch.setattr(accounts.credentials, "SCRYPT_N", 2**4)
    db = storage.open_db(tmp_path / "db.sqlite")
    lead = accounts.create_user(db, "lead", "password1", "admin")
    people = [accounts.create_user(db, f"ann{i}", "password1", "annotator") for i in (1, 2)]
    folder = tmp_path / "suites" / "labsets"
    folder.mkdir(parents=True)
    items = load_set(write_set(folder, samples()))
    study_id, _ = create_study(db, name="lab-pilot", source="set.jsonl", items=items, n_items=8,
                               annotator_ids=[p["id"] for p in people], rule_text="No help.")
    by_content = {i["id"]: i for i in items}
    for who, person in enumerate(people):
        study.accept_rule(db, study_id, person["id"])
        for n, (assignment, item_id) in enumerate(db.execute(
                "SELECT a.id, i.sample_id FROM assignments a JOIN study_items i ON i.id = a.item_id"
                " WHERE a.user_id = ? ORDER BY a.seq", [person["id"]]).fetchall()):
            item = by_content[item_id]
            right = item["target"][0] if item["choices"] else item["target"][-1]
            wrong = "ABCD".replace(right, "")[0] if item["choices"] else "zzz"
            study.open_question(db, study_id, person["id"])
            study.submit_answer(db, person["id"], assignment, right if who == 0 or n % 2 else wrong)
    kept = item_sets.predictions_dir("labset", "set.jsonl")
    kept.mkdir(parents=True)
    lines = [{"id": i["source_id"], "model": "strong", "answer": i["target"][0]} for i in items]
    lines += [{"id": i["source_id"], "model": "always-a", "answer": "A"} for i in items]
    (kept / "models.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    (kept / "broken.jsonl").write_text('{"id": "nope", "model": "m", "answer": "A"}\n')
    return db, lead, study_id, items


def test_people_and_models_on_the_same_items_with_intervals_and_strata(lab_world):
    from structext_core.studio import study
    db, lead, study_id, items = lab_world
    models = lab_results.model_rows("labset", "set.jsonl", items)
    assert models.files == ["models.jsonl"] and len(models.problems) == 1
    assert models.problems[0].startswith("broken.jsonl:") and "'nope' is no item of the set" in models.problems[0]
    assert len(models.rows) == 140  # both models on all 70 questions
    people = lab_results.people_rows(db, "labset", "set.jsonl", ["lab-pilot"])
    assert len(people) == 16 and lab_results.people_rows(db, "labset", "set.jsonl", []).empty  # a study one may not see
    frame = lab_results.combined(people, models.rows)
    overall = lab_results.beside(frame, n_boot=200).set_index("model")
    pooled = study.accuracy_by(study.responses_frame(db, study_id), [])["score"].iloc[0]
    assert overall.loc["human", "mean"] == pytest.approx(pooled) == 75.0  # ann1 8/8, ann2 4/8
    assert overall.loc["human", "n"] == 16 and overall.loc["strong", "n"] == 8  # models on people's 8 items only
    assert overall.loc["strong", "mean"] == 100.0 and overall.loc["human", "group"] == "people"
    drawn = {i["id"]: i for i in items if i["id"] in set(people["sample_id"])}
    expected_a = 100 * sum(1 for i in drawn.values() if i["choices"] and i["target"][0] == "A") / len(drawn)
    assert overall.loc["always-a", "mean"] == pytest.approx(expected_a)
    assert (overall["ci_low"] <= overall["mean"]).all() and (overall["mean"] <= overall["ci_high"]).all()
    assert overall.loc["human", "ci_low"] < overall.loc["human", "ci_high"]
    by_stratum = lab_results.beside(frame, ["stratum"], n_boot=200)
    strata = {i["stratum"] for i in drawn.values()}
    assert set(by_stratum["group_of"]) == strata and set(by_stratum["model"]) == {"human", "strong", "always-a"}
    assert by_stratum[by_stratum["model"] == "strong"]["n"].sum() == 8
    each = lab_results.beside(frame, ["format"], each_person=True, n_boot=200)
    assert {"human:ann1", "human:ann2"} <= set(each["model"]) and set(each["group_of"]) <= {"choice", "short"}
    assert each[(each["model"] == "human:ann1")]["mean"].eq(100.0).all()


def test_the_results_section_shows_people_beside_the_models(lab_world):
    from tests.pages.test_page_access import run_page
    db, lead, _, _ = lab_world
    at = run_page("results", lead, rs_benchmark="labset", default_labset_table_open=True)
    assert not at.exception
    assert any("people beside models" in h.value for h in at.subheader)
    assert any("broken.jsonl" in w.value and "no item of the set" in w.value for w in at.warning)
    table = next(d.value for d in at.dataframe if "overall" in d.value.columns)
    assert list(table["model"]) == ["human", "always-a", "strong"] and table["n"].tolist()[0] == 16
    next(s for s in at.get("button_group")).set_value("Stratum").run()
    table = next(d.value for d in at.dataframe if "stratum" in d.value.columns)
    assert set(table["model"]) == {"human", "always-a", "strong"} and len(table) >= 3


def test_visitors_see_no_answers_of_the_lab_set(lab_world):
    from structext_core.studio import accounts
    from tests.pages.test_page_access import run_page
    db, _, _, _ = lab_world
    at = run_page("results", accounts.get_user(db, "ann1"), rs_benchmark="labset")
    assert not at.exception and not [d for d in at.dataframe if "model" in d.value.columns]
    assert any("shown to researchers and admins" in c.value for c in at.caption)


def test_every_metadata_field_and_on_an_image_are_axes_two_at_a_time_over_two_studies(tmp_path, monkeypatch):
    """Two studies of one set: each answer counted once; subject, difficulty and "on an image" are
    columns of the dashboard's frame, the export and Results, and Results breaks down by two at once."""
    from structext_core.studio import accounts, storage, study
    from tests.pages.test_page_access import run_page
    monkeypatch.setenv("STRUCTEXT_DB", str(tmp_path / "db.sqlite"))
    monkeypatch.setenv("STRUCTEXT_DATA_DIR", str(tmp_path / "suites"))
    monkeypatch.setattr(accounts.credentials, "SCRYPT_N", 2**4)
    db = storage.open_db(tmp_path / "db.sqlite")
    lead = accounts.create_user(db, "lead", "password1", "admin")
    people = [accounts.create_user(db, f"ann{i}", "password1", "annotator") for i in (1, 2)]
    folder = tmp_path / "suites" / "labsets"
    folder.mkdir(parents=True)
    records = [dict(r, metadata={**r["metadata"], "difficulty": ("easy", "hard")[n % 2]})
               for n, r in enumerate(samples())]
    items = load_set(write_set(folder, records))
    by_content = {i["id"]: i for i in items}
    for name, person in (("first", people[0]), ("second", people[1])):
        study_id, _ = create_study(db, name=name, source="set.jsonl", items=items, n_items=12,
                                   annotator_ids=[person["id"]], rule_text="No help.", seed=len(name))
        study.accept_rule(db, study_id, person["id"])
        for assignment, item_id in db.execute("SELECT a.id, i.sample_id FROM assignments a JOIN study_items i"
                                              " ON i.id = a.item_id WHERE a.user_id = ? ORDER BY a.seq",
                                              [person["id"]]).fetchall():
            item = by_content[item_id]
            study.open_question(db, study_id, person["id"])
            study.submit_answer(db, person["id"], assignment, item["target"][0] if item["choices"] else "zzz")
    frame = study.responses_frame(db, study_id)
    assert {"subject", "difficulty", "on an image"} <= set(frame.columns)
    assert set(frame["difficulty"]) <= {"easy", "hard"} and set(frame["on an image"]) <= {"yes", "no"}
    exported = study.export_rows(db, study_id)
    assert {"subject", "difficulty", "on an image"} <= set(exported[0])
    own = {i["source_id"] for i in items}  # the lab's own ids, never our content hashes
    assert {r["sample_id"] for r in exported} <= own and set(frame["item"]) <= own
    assert {s.name for s in study.adjudication_items(db, study_id)} <= own
    people_rows = lab_results.people_rows(db, "labset", "set.jsonl", ["first", "second"])
    assert len(people_rows) == 24  # each answer once, from either study
    assert {"subject", "difficulty", "on an image"} <= set(people_rows.columns)
    at = run_page("results", lead, rs_benchmark="labset", default_labset_table_open=True)
    assert not at.exception
    pair = next(m for m in at.multiselect if m.label == "Two fields together")
    assert {"subject", "difficulty", "on an image", "format", "stratum"} <= set(pair.options)
    pair.select("subject").select("difficulty").run()
    table = next(d.value for d in at.dataframe if "subject x difficulty" in d.value.columns)
    assert table[table["model"] == "human"]["n"].sum() == 24
    assert all(" · " in value for value in table["subject x difficulty"])
    at = run_page("study_admin", lead, sa_open_accuracy=True)
    assert not at.exception
    assert any("difficulty" in str(g.proto) for g in at.get("button_group"))  # a field alone, on the dashboard


def test_models_answers_stored_from_an_upload_are_checked_first_and_never_replace_a_file(lab_world):
    _, _, _, items = lab_world
    kept = item_sets.predictions_dir("labset", "set.jsonl")
    before = {p.name: p.read_bytes() for p in kept.iterdir()}
    good = "".join(json.dumps({"id": i["source_id"], "model": "uploaded", "answer": i["target"][0]}) + "\n"
                   for i in items).encode()
    path = item_sets.store_predictions("labset", "set.jsonl", "../../uploaded.jsonl", good)
    assert path == kept / "uploaded.jsonl" and path.read_bytes() == good  # its own name, in the folder
    models = lab_results.model_rows("labset", "set.jsonl", items)
    assert "uploaded.jsonl" in models.files and set(models.rows["model"]) >= {"uploaded"}
    # the same name again: refused, naming the file; nothing replaced
    with pytest.raises(ValueError, match="uploaded.jsonl: a file of that name is kept for set.jsonl already"):
        item_sets.store_predictions("labset", "set.jsonl", "uploaded.jsonl", b'{"id": "mc00", "model": "m", "answer": "A"}\n')
    assert path.read_bytes() == good
    # a file at fault: its problems (the first 20), nothing written
    bad = b"".join(json.dumps({"id": f"nope{n}", "model": "m", "answer": "A"}).encode() + b"\n" for n in range(25))
    with pytest.raises(ValueError) as refused:
        item_sets.store_predictions("labset", "set.jsonl", "bad.jsonl", b"not json\n" + bad)
    message = str(refused.value)
    assert message.startswith("bad.jsonl: not stored, 26 problem(s):\nbad.jsonl:1: not a JSON line")
    assert "bad.jsonl:2: field 'id': 'nope0' is no item of the set" in message and "... and 6 more" in message
    with pytest.raises(ValueError, match="notes.txt: models' answers are a JSON-lines file"):
        item_sets.store_predictions("labset", "set.jsonl", "notes.txt", good)
    with pytest.raises(ValueError, match="'other.jsonl' is no item file"):
        item_sets.store_predictions("labset", "other.jsonl", "x.jsonl", good)
    assert {p.name: p.read_bytes() for p in kept.iterdir()} == {**before, "uploaded.jsonl": good}


def test_a_predictions_upload_is_bounded_before_it_is_read(lab_world, monkeypatch):
    monkeypatch.setattr(item_sets, "MAX_PREDICTION_UPLOAD_BYTES", 10)
    with pytest.raises(ValueError, match="big.jsonl: 11 bytes; the page stores at most 10"):
        item_sets.store_predictions("labset", "set.jsonl", "big.jsonl", b"x" * 11)
    assert not (item_sets.predictions_dir("labset", "set.jsonl") / "big.jsonl").exists()


def test_the_results_address_records_the_benchmark_and_its_view(lab_world):
    # A reload of the lab's own set's Results went back to StrucText-Eval: the address named no benchmark.
    from streamlit.testing.v1 import AppTest

    from structext_core.studio import access
    from tests.pages.test_page_access import ROOT, run_page
    db, lead, _, _ = lab_world
    at = run_page("results", lead, rs_benchmark="labset", default_labset_table_open=True)
    next(s for s in at.get("button_group")).set_value("Stratum").run()
    at.toggle(key="default_labset_each").set_value(True).run()
    address = dict(at.query_params)
    assert address["benchmark"] == "labset" and address["by"] == "Stratum" and address["each"] == "1"
    assert address["file"] == choice(at, "default_labset_file").value and choice(at, "default_labset_file").label == "Item file"

    reloaded = AppTest.from_file(str(ROOT / "pages" / access.page("results").file), default_timeout=90)
    reloaded.session_state["user"] = lead
    reloaded.session_state["default_labset_table_open"] = True  # the figures' box open, as a click does
    for key, values in address.items():
        reloaded.query_params[key] = values
    reloaded.run()
    assert not reloaded.exception
    assert choice(reloaded, "rs_benchmark").value == "labset"
    assert next(s for s in reloaded.get("button_group")).value == "Stratum"
    assert reloaded.toggle(key="default_labset_each").value is True
    assert any("stratum" in d.value.columns for d in reloaded.dataframe)


def test_the_first_view_draws_the_chart_and_no_grid_until_asked(lab_world):
    """Issue 46: a grid costs the page about 0.6 s in the browser. The lab set's Results draws its chart; the
    chart's figures as a table and the admin's uploader are boxes whose content comes when one is opened."""
    from tests.pages.test_page_access import run_page
    _, lead, _, _ = lab_world
    at = run_page("results", lead, rs_benchmark="labset")
    assert at.get("vega_lite_chart") and not at.dataframe and not at.file_uploader
    labels = sections(at)
    assert "Add models' answers" in labels and "The chart's figures: mean, 95% interval and n of each row" in labels
    at = open_section(at, "The chart's figures: mean, 95% interval and n of each row")  # a click on its header
    table = next(d.value for d in at.dataframe if "overall" in d.value.columns)
    assert list(table["model"]) == ["human", "always-a", "strong"]
    at.session_state["default_labset_answers_open"] = True
    at.run()
    assert next(u for u in at.file_uploader if u.label.startswith("Models' answers to set.jsonl"))
