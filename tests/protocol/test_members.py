"""The members' shared tests: every registered benchmark that ships sample items (its ``SAMPLE_ITEMS``)
goes through the same journey, whatever it is and wherever it is installed from (the built-in lab's
own set, and the example package ``examples/numeric-bench`` that CI installs from outside the source
tree): its items read and scored by its own rule, command-line scoring, a study opened from the
lead's page, an annotator on the question page, adjudication, the dashboard, the export, Results
with people beside models, Explore and the people's Inspect log.
"""
from __future__ import annotations

import importlib.util
import json
import re
import shutil
from pathlib import Path

import pytest

from structext_core import protocol
from structext_core.evaluation.choices import LETTERS
from tests.pages import light_forms
from tests.pages.answer_boxes import answer_box, press
from tests.pages.html_tables import progress_text

WITH_SAMPLES = [name for name, member in protocol.members().items() if protocol.option(member, "SAMPLE_ITEMS")]


def right_reply(member, item) -> str:
    """A reply the member's rule scores right: its ``right_reply``, else the option letter that
    ``score_answer`` scores 1, else the item's ``answer``."""
    declared = protocol.option(member, "right_reply")
    if declared is not None:
        return declared(item)
    choices = member.show_question(item).choices
    for letter in LETTERS[:len(choices)]:
        if member.score_answer(item, letter) == 1.0:
            return letter
    return str(item["answer"])


@pytest.fixture(params=WITH_SAMPLES)
def member(request):
    return protocol.get_module(request.param)


@pytest.fixture
def items(member):
    return list(member.load_items(member.SAMPLE_ITEMS))


def test_the_member_is_consistent_and_its_own_replies_score_right(member, items):
    protocol.check_member(member.NAME, member)
    ids = [member.item_id(item) for item in items]
    assert items and len(set(ids)) == len(ids)
    for item in items:
        protocol.check_strata(member.NAME, {key: item[key] for key in member.STRATA})
        shown = member.show_question(item)
        assert shown.text.strip() and len(shown.choices) <= len(LETTERS)
        assert member.score_answer(item, right_reply(member, item)) == 1.0
        assert member.score_answer(item, "") == 0.0


def test_the_command_line_scores_replies_by_its_rule(member, items, tmp_path, capsys):
    from structext_core.cli.main import main
    replies = [{"id": member.item_id(item), "model": "m", "reply": right_reply(member, item) if n % 2 else ""}
               for n, item in enumerate(items)]
    (tmp_path / "replies.jsonl").write_text("".join(json.dumps(r) + "\n" for r in replies))
    assert main(["items", "score", str(tmp_path / "replies.jsonl"), "--benchmark", member.NAME,
                 "--items", member.SAMPLE_ITEMS]) == 0
    right = sum(1 for n in range(len(items)) if n % 2)
    assert f"m\t{len(items)}\t{right / len(items):.3f}" in capsys.readouterr().out


@pytest.fixture
def world(member, tmp_path, monkeypatch):
    """A database with a lead and two annotators, and the member's sample items (with a model's
    answers beside them: right on every other item) in its shared item place."""
    from structext_core.evaluation import item_sets
    from structext_core.studio import accounts, storage
    monkeypatch.setenv("STRUCTEXT_DB", str(tmp_path / "db.sqlite"))
    monkeypatch.setenv("STRUCTEXT_DATA_DIR", str(tmp_path / "suites"))
    monkeypatch.setattr(accounts.credentials, "SCRYPT_N", 2**4)
    db = storage.open_db(tmp_path / "db.sqlite")
    people = {name: accounts.create_user(db, name, "password1", role)
              for name, role in (("lead", "admin"), ("ann1", "annotator"), ("ann2", "annotator"))}
    folder = item_sets.data_dir(member.NAME)
    folder.mkdir(parents=True)
    file_name = "sample" + Path(member.SAMPLE_ITEMS).suffix
    shutil.copyfile(member.SAMPLE_ITEMS, folder / file_name)
    items = item_sets.load(member.NAME, file_name)
    kept = item_sets.predictions_dir(member.NAME, file_name)
    kept.mkdir(parents=True)
    (kept / "half.jsonl").write_text("".join(
        json.dumps({"id": member.item_id(item), "model": "half-right",
                    "answer": right_reply(member, item) if n % 2 == 0 else "no idea"}) + "\n"
        for n, item in enumerate(items)))
    return db, people, file_name, items


def test_a_study_goes_from_the_leads_form_to_results_and_the_inspect_log(member, world, tmp_path):
    from structext_core.studio import study
    from tests.pages.test_page_access import run_page
    db, people, file_name, items = world
    n_items = min(6, len(items))
    # the lead opens the study on Study admin (the member's own form, or the default one)
    at = run_page("study_admin", people["lead"], sa_benchmark=member.NAME)
    form = light_forms.only(at)  # one light form, whichever the benchmark
    at = light_forms.submit(at, form, name="pilot", n_items=n_items,
                            annotators=light_forms.options(at, form, "annotators")[:2])
    assert not at.exception and not at.error
    (created,) = study.list_studies(db)
    assert (created.name, created.benchmark, created.suite) == ("pilot", member.NAME, file_name)
    by_id = {member.item_id(item): item for item in items}
    drawn = {row[0]: by_id[row[1]] for row in db.execute(
        "SELECT id, sample_id FROM study_items WHERE study_id = ?", [created.id])}
    # ann1: the first question on the question page, the rest through the services the page calls
    ann1, ann2 = people["ann1"]["id"], people["ann2"]["id"]
    at = run_page("human_baseline", people["ann1"])
    next(b for b in at.button if b.label.startswith("I have read the rule")).click().run()
    assert not at.exception and f"Question 1 of {n_items}" == progress_text(at)
    first = db.execute("SELECT item_id FROM assignments WHERE user_id = ? ORDER BY seq LIMIT 1", [ann1]).fetchone()[0]
    reply = right_reply(member, drawn[first])
    if member.show_question(drawn[first]).choices:
        next(b for b in at.button if b.label.startswith(f"**{reply}**")).click().run()
        next(b for b in at.button if b.label.startswith("Submit")).click().run()
    else:
        answer_box(at).input(reply)
        press(at, "Submit answer")
    assert not at.exception and not at.error
    assert db.execute("SELECT COUNT(*) FROM responses WHERE user_id = ?", [ann1]).fetchone()[0] == 1
    study.accept_rule(db, created.id, ann2)
    for user, wrong_every in ((ann1, 3), (ann2, 2)):
        rows = db.execute("SELECT a.id, a.item_id FROM assignments a LEFT JOIN responses r ON r.assignment_id = a.id"
                          " WHERE a.user_id = ? AND r.id IS NULL ORDER BY a.seq", [user]).fetchall()
        for n, (assignment, item_id) in enumerate(rows):
            study.open_question(db, created.id, user)
            if n % wrong_every == 1:
                study.give_up(db, user, assignment)
            else:
                study.submit_answer(db, user, assignment, right_reply(member, drawn[item_id]))
    # the dashboard's frame: one row an answer, the member's strata as columns, scored by its rule
    frame = study.responses_frame(db, created.id)
    assert len(frame) == 2 * n_items and set(member.STRATA) <= set(frame.columns)
    assert (frame["score"] == (~frame["gave_up"]).astype(float)).all()
    # the export: the shared columns around its item columns
    rows = study.export_rows(db, created.id)
    facets = study.study_facets(db, created.id)  # its items' more fields, after its item columns
    assert len(rows) == 2 * n_items and [c for c in rows[0] if c not in facets] == study.export_columns(member.NAME)
    assert set(facets) <= set(frame.columns)
    # the pages of the lead: adjudication, the dashboard, Results, Explore
    for page, state in (("adjudication", {}), ("study_admin", {}), ("results", {"rs_benchmark": member.NAME}),
                        ("explore", {"explore_benchmark": member.NAME})):
        at = run_page(page, people["lead"], **state)
        assert not at.exception, page
    at = run_page("results", people["lead"], rs_benchmark=member.NAME,  # the chart's figures' box open
                  **{f"default_{member.NAME}_table_open": True})
    table = next(d.value for d in at.dataframe if "overall" in d.value.columns)
    assert set(table["model"]) == {"human", "half-right"}
    assert table.set_index("model").loc["human", "n"] == 2 * n_items
    assert table.set_index("model").loc["human", "mean"] == pytest.approx(100 * frame["score"].mean())
    # the people's Inspect log, read back by Inspect: the dashboard's per-item scores
    if importlib.util.find_spec("inspect_ai") is None:
        pytest.skip("inspect-ai is not installed")
    from inspect_ai.log import read_eval_log
    path = study.write_inspect_log(db, created.id, tmp_path / "people.eval")
    log = read_eval_log(str(path))
    assert len(log.samples) == 2 * n_items
    per_item = study.item_scores(frame).set_index("sample_id")["score"]
    assert log.results.scores[0].metrics["mean"].value == pytest.approx(per_item.mean())


# ---------------------------------------------------------------- what registration refuses

def _member(**declared):
    """A member module declaring the required names (as a numeric benchmark would) and ``declared``."""
    import types

    from structext_core.protocol import Place, ShownQuestion
    module = types.ModuleType("refused_member")
    module.__dict__.update(
        NAME="refused", DISPLAY_NAME="Refused", SUMMARY="s", PLACES=(Place("results", "r"),), ITEM_FIELDS=("id",),
        AXES=("topic",), STRATA={"topic": str}, item_id=lambda item: item["id"],
        show_question=lambda item: ShownQuestion(text="q"), score_answer=lambda item, reply: 0.0,
        load_items=lambda path: [])
    module.__dict__.update(declared)
    for name, value in list(module.__dict__.items()):
        if value is ...:  # ... takes a default name away
            del module.__dict__[name]
    return module


@pytest.mark.parametrize("declared, says", [
    ({"STRATA": {"annotator": str}}, "stratum 'annotator' has the name of a shared column"),
    ({"STRATA": {"score": int}}, "stratum 'score' has the name of a shared column"),
    ({"STRATA": {"topic": float}}, "stratum 'topic' must be str or int"),
    ({"STRATA": {"two words": str}}, "stratum 'two words' must be a name"),
    ({"STRATA": ("topic",)}, "STRATA must be a mapping"),
    ({"STUDY": "yes"}, "STUDY must be a StudyKind"),
    ({"load_items": ..., "STUDY": protocol.StudyKind()}, "declares STUDY but no form to open one"),
    ({"STUDY": protocol.StudyKind(groupings={"Level": ["level"]})}, "'level', which is no stratum"),
    ({"STUDY": protocol.StudyKind(time_cells=("steps",))}, "'steps', which is no stratum"),
    ({"show_question": ...}, "does not offer show_question"),
    ({"NAME": "other"}, "the entry point's name and NAME must be the same"),
], ids=lambda value: str(value)[:40])
def test_registration_refuses_an_inconsistent_member_saying_what_to_change(declared, says):
    with pytest.raises(protocol.RegistryError, match=re.escape(says)):
        protocol.check_member("refused", _member(**declared))


def test_a_member_with_items_and_no_study_gets_the_default_study_and_views():
    member = _member()
    protocol.check_member("refused", member)
    assert protocol.declared_study(member) == protocol.StudyKind()
    assert protocol.declared_study(_member(load_items=...)) is None  # no items, no studies
    assert protocol.declared_study(_member(load_items=..., STUDY=None)) is None


def test_two_members_of_one_display_name_are_refused_at_registration(install_member):
    """People tell benchmarks apart by their display names (Home's sections, every chooser)."""
    with pytest.raises(protocol.RegistryError, match=r"'twin' and 'labset' .* both call themselves .The lab's own.: give"):
        install_member("twin_bench", "twin", "tests.protocol.twin_member")
