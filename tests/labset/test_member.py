"""The lab's own benchmark as a member: found by its entry point, scored on the command line, models'
predictions read, and a study answered on the question page (multiple choice and short answers),
adjudicated, shown on the dashboard and on Results."""
from __future__ import annotations

import json

import pytest

from structext_core.evaluation.item_sets import read_predictions
from structext_core.evaluation.matching import ResultsImportError
from structext_core.labset import member
from structext_core.labset.dataset import load_set
from structext_core.labset.study import create_study, studyable
from tests.pages import light_forms
from tests.pages.answer_boxes import answer_box, press
from tests.pages.html_tables import html_text, progress_text
from tests.pages.light_parts import notes
from tests.pages.text_blocks import text_blocks


@pytest.fixture
def labset(install_member):
    return install_member("structext_labset", "labset", "structext_core.labset.member")


def test_it_is_a_member_found_by_its_entry_point(labset):
    from structext_core import protocol
    assert labset is member and protocol.get_module("labset") is member
    assert protocol.display_name("labset") == "The lab's own" and protocol.names()[:2] == ["structext-eval", "aibench"]
    protocol.check_strata("labset", {"format": "short", "stratum": "maps"})


def test_show_question_and_the_rules_shown_to_the_lead(lab_set):
    items = load_set(lab_set)
    assert member.show_question(items[45]).image == "images/q5.png" and len(member.show_question(items[0]).choices) == 4
    assert member.show_question(items[60]).choices == ()
    rules = member.describe_rules(items)
    assert len(rules) == 2 and "exactly one letter" in rules[0] and "case ignored" in rules[1]


def test_the_command_line_scores_replies_by_content_id(labset, lab_set, tmp_path, capsys):
    from structext_core.cli.main import main
    items = load_set(lab_set)
    replies = [{"id": i["id"], "reply": i["target"][0] if n % 2 else "wrong", "model": "m"} for n, i in enumerate(items)]
    (tmp_path / "replies.jsonl").write_text("".join(json.dumps(r) + "\n" for r in replies))
    assert main(["items", "score", str(tmp_path / "replies.jsonl"), "--benchmark", "labset",
                 "--items", str(lab_set), "--by", "format"]) == 0
    out = capsys.readouterr().out
    assert "m\tchoice\t50\t0.500" in out and "m\tshort\t20\t0.500" in out


def test_model_predictions_are_read_by_the_sets_ids_and_scored(lab_set, tmp_path):
    items = load_set(lab_set)
    lines = [{"id": i["source_id"], "model": "gpt", "answer": f"The answer is {i['target'][0]}" if i["choices"]
              else i["target"][-1].upper() + "."} for i in items]
    lines[0]["answer"] = "A or B"  # two letters: wrong
    (tmp_path / "p.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    rows = read_predictions("labset", tmp_path / "p.jsonl", items)
    assert len(rows) == 70 and sum(r["score"] for r in rows) == 69 and rows[0]["score"] == 0
    (tmp_path / "bad.jsonl").write_text(json.dumps(lines[1]) + "\n" + json.dumps(lines[1]) + "\n"
                                        + json.dumps({"id": "nope", "model": "m", "answer": "A"}) + "\n{x\n")
    with pytest.raises(ResultsImportError) as error:
        read_predictions("labset", tmp_path / "bad.jsonl", items)
    assert all(f"bad.jsonl:{n}:" in str(error.value) for n in (2, 3, 4)) and "answered" in str(error.value)


def test_a_study_is_answered_adjudicated_shown_on_the_dashboard_and_on_results(labset, lab_set, tmp_path, monkeypatch):
    from structext_core.studio import accounts, storage, study
    from tests.pages.test_page_access import run_page
    monkeypatch.setenv("STRUCTEXT_DB", str(tmp_path / "db.sqlite"))
    monkeypatch.setenv("STRUCTEXT_DATA_DIR", str(tmp_path / "suites"))
    monkeypatch.setattr(accounts.credentials, "SCRYPT_N", 2**4)
    db = storage.open_db(tmp_path / "db.sqlite")
    lead, ann1, ann2 = (accounts.create_user(db, name, "password1", role)
                        for name, role in (("lead", "admin"), ("ann1", "annotator"), ("ann2", "annotator")))
    items = load_set(lab_set)
    kept, note = studyable(items)
    assert len(kept) == 70 and note == ""  # questions on an image are drawn too (tests/labset/test_images.py)
    study_id, _ = create_study(db, name="lab-pilot", source="set.jsonl", items=items, n_items=6,
                               annotator_ids=[ann1["id"], ann2["id"]], rule_text="No help.")
    by_content = {i["id"]: i for i in items}
    by_id = {row[0]: by_content[json.loads(row[1])["id"]] for row in db.execute(
        "SELECT id, sample_json FROM study_items WHERE study_id = ?", [study_id])}
    assert {item["format"] for item in by_id.values()} == {"choice", "short"}  # the draw keeps both kinds

    def right(item_id):
        item = by_id[item_id]
        return item["target"][0] if item["choices"] else item["target"][-1].lower() + "!"

    # ann1 answers on the question page: an option by its button, a short answer typed; two wrong
    at = run_page("human_baseline", ann1)
    next(b for b in at.button if b.label.startswith("I have read the rule")).click().run()
    for n in range(6):
        assert not at.exception and f"Question {n + 1} of 6" == progress_text(at)
        item_id = db.execute("SELECT a.item_id FROM assignments a LEFT JOIN responses r ON r.assignment_id = a.id"
                             " WHERE a.user_id = ? AND r.id IS NULL ORDER BY a.seq LIMIT 1", [ann1["id"]]).fetchone()[0]
        item = by_id[item_id]
        if item["choices"]:
            letter = right(item_id) if n < 4 else "ABCD".replace(item["target"][0], "")[0]
            next(b for b in at.button if b.label.startswith(f"**{letter}**")).click().run()
            next(b for b in at.button if b.label.startswith("Submit")).click().run()
        else:  # no reference to show or take lines from (regression: an empty Reference panel and "Add lines")
            box = answer_box(at)
            assert box.buttons == ["Submit answer", "Pause", "Give up"] and box.lines is None  # no "Add lines"
            assert not any("**Reference**" in m.value for m in [*at.markdown, *notes(at, "markdown")])
            assert not at.get("image")
            box.input(right(item_id) if n < 4 else "somewhere else")
            press(at, "Submit answer")
    assert not at.exception
    # ann2 through the same service the page calls: all right
    study.accept_rule(db, study_id, ann2["id"])
    for row in db.execute("SELECT id, item_id FROM assignments WHERE user_id = ? ORDER BY seq", [ann2["id"]]).fetchall():
        study.open_question(db, study_id, ann2["id"])
        study.submit_answer(db, ann2["id"], row[0], right(row[1]))
    frame = study.responses_frame(db, study_id)
    assert len(frame) == 12 and frame.groupby("annotator")["rouge_l"].sum().to_dict() == {"ann1": 4.0, "ann2": 6.0}
    by_format = study.accuracy_by(frame, ["format", "stratum"], n_boot=50)
    assert by_format["n"].sum() == 12 and set(by_format["format"]) == {"choice", "short"}
    listed = study.adjudication_items(db, study_id)
    assert len(listed) == 6 and all(s.describe.startswith("format ") for s in listed)
    at = run_page("adjudication", lead)
    assert not at.exception and any("format " in c.value for c in at.caption)
    # a short answer in full: its strata, no StrucText-Eval reference, cell or ROUGE-L (regression: "None · None
    # (task None) · depth None", an empty Reference and "ROUGE-L 1.000" were shown)
    short = next(item_id for item_id, item in by_id.items() if not item["choices"])
    at = run_page("adjudication", lead, **{f"adj_item_{study_id}": short})
    shown = " ".join(e.value for e in [*at.caption, *at.markdown])
    assert f"format short · stratum {by_id[short]['stratum']}" in shown
    assert "None" not in shown and "**Reference**" not in shown and "ROUGE-L" not in shown
    assert len(text_blocks(at)) == 3 and not at.code  # the answer key and the two answers: no reference
    assert "correct (automatic score 1) · final score 1.00" in html_text(at)  # ann2's right answer
    at = run_page("study_admin", lead, sa_open_accuracy=True)
    assert not at.exception and any("Stratum" in str(g.proto) for g in at.get("button_group"))
    at = run_page("results", lead, rs_benchmark="labset", default_labset_table_open=True)  # the figures' box open
    assert not at.exception
    assert any("The lab's own: people beside models" in h.value for h in at.subheader)
    next(s for s in at.get("button_group") if "Format" in str(s.proto)).set_value("Format").run()
    table = next(d.value for d in at.dataframe if "format" in d.value.columns)
    assert set(table["format"]) == {"choice", "short"} and table["n"].sum() == 12


def test_the_seal_knows_an_open_item_by_its_content_in_another_set(labset, lab_set, tmp_path, monkeypatch):
    from structext_core.studio import accounts, seal, storage
    from tests.labset.conftest import samples, write_set
    monkeypatch.setattr(accounts.credentials, "SCRYPT_N", 2**4)
    db = storage.open_db(tmp_path / "db.sqlite")
    ann = accounts.create_user(db, "ann", "password1", "annotator")
    items = load_set(lab_set)
    create_study(db, name="sealed", source="set.jsonl", items=items, n_items=70,
                 annotator_ids=[ann["id"]], rule_text="No help.")
    other = tmp_path / "renamed"
    other.mkdir()
    renamed = load_set(write_set(other, [dict(s, id=f"r{n}") for n, s in enumerate(samples())], "other.jsonl"))
    assert all(seal.is_open_for(db, ann["id"], item, "labset") for item in renamed)  # images' questions too
    changed = dict(renamed[0], id="ls-other", question="Another question?")
    assert not seal.is_open_for(db, ann["id"], changed, "labset")
    assert seal.key_withheld(db, ann["id"], renamed[55], "labset")


@pytest.mark.parametrize("broken", [False, True])
def test_the_lead_opens_a_study_of_a_set_in_the_sets_folder(labset, tmp_path, monkeypatch, broken):
    from structext_core.studio import accounts, storage, study
    from tests.labset.conftest import samples, write_set
    from tests.pages.test_page_access import run_page
    monkeypatch.setenv("STRUCTEXT_DB", str(tmp_path / "db.sqlite"))
    monkeypatch.setenv("STRUCTEXT_DATA_DIR", str(tmp_path / "suites"))
    monkeypatch.setattr(accounts.credentials, "SCRYPT_N", 2**4)
    db = storage.open_db(tmp_path / "db.sqlite")
    lead = accounts.create_user(db, "lead", "password1", "admin")
    accounts.create_user(db, "ann1", "password1", "annotator")
    folder = tmp_path / "suites" / "labsets"
    folder.mkdir(parents=True)
    records = samples()
    if broken:
        records[3] = dict(records[3], target="F")
    write_set(folder, records)
    at = run_page("study_admin", lead, sa_benchmark="labset")
    form = light_forms.only(at)
    at = light_forms.submit(at, form, name="lab-pilot", annotators=light_forms.options(at, form, "annotators")[:1])
    assert not at.exception
    created = [s.name for s in study.list_studies(db)]
    if broken:
        assert created == [] and any("set.jsonl:4:" in e.value and "field 'target'" in e.value for e in at.error)
    else:
        assert created == ["lab-pilot"] and not at.error


def test_home_names_it_among_the_benchmarks(labset, tmp_path, monkeypatch):
    from structext_core.studio import accounts, storage
    from tests.pages.test_page_access import run_page
    monkeypatch.setenv("STRUCTEXT_DB", str(tmp_path / "db.sqlite"))
    monkeypatch.setattr(accounts.credentials, "SCRYPT_N", 2**4)
    lead = accounts.create_user(storage.open_db(tmp_path / "db.sqlite"), "lead", "password1", "admin")
    at = run_page("home", lead)
    shown = " ".join([*(str(e.value) for e in [*at.markdown, *at.subheader, *at.caption]), html_text(at)])
    assert "The lab's own" in shown and "short-answer questions" in shown


def test_a_question_with_six_options_is_drawn_and_answered_by_its_sixth_letter(labset, tmp_path, monkeypatch):
    from structext_core.studio import accounts, storage, study
    from tests.labset.conftest import write_set
    from tests.pages.test_page_access import run_page
    monkeypatch.setenv("STRUCTEXT_DB", str(tmp_path / "db.sqlite"))
    monkeypatch.setattr(accounts.credentials, "SCRYPT_N", 2**4)
    db = storage.open_db(tmp_path / "db.sqlite")
    lead = accounts.create_user(db, "lead", "password1", "admin")
    ann = accounts.create_user(db, "ann1", "password1", "annotator")
    wide = {"id": "w1", "input": "Which is the sixth?", "choices": [f"option {n}" for n in range(1, 7)], "target": "F"}
    items = load_set(write_set(tmp_path, [wide]))
    assert studyable(items) == (items, "")
    study_id, _ = create_study(db, name="wide", source="set.jsonl", items=items, n_items=1,
                               annotator_ids=[ann["id"]], rule_text="No help.")
    at = run_page("human_baseline", ann)
    next(b for b in at.button if b.label.startswith("I have read the rule")).click().run()
    assert [b.label.split()[0] for b in at.button if b.label.startswith("**")] == [f"**{x}**" for x in "ABCDEF"]
    next(b for b in at.button if b.label.startswith("**F**")).click().run()
    next(b for b in at.button if b.label == "Submit F").click().run()
    assert not at.exception
    frame = study.responses_frame(db, study_id)
    assert frame["response"].tolist() == ["F"] and frame["score"].tolist() == [1.0]
    at = run_page("adjudication", lead)
    assert any("**F** · option 6" in m.value and "answer key" in m.value for m in at.markdown)


def test_predictions_may_say_sample_id_and_response_but_not_both_names_of_one_field(lab_set, tmp_path):
    items = load_set(lab_set)
    lines = [{"sample_id": i["source_id"], "model": "m", "response": i["target"][0]} for i in items[:5]]
    (tmp_path / "p.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert [r["score"] for r in read_predictions("labset", tmp_path / "p.jsonl", items)] == [1.0] * 5
    (tmp_path / "both.jsonl").write_text(json.dumps(dict(lines[0], id="mc01")) + "\n")
    with pytest.raises(ResultsImportError, match="fields 'id' and 'sample_id' both given: keep one"):
        read_predictions("labset", tmp_path / "both.jsonl", items)
