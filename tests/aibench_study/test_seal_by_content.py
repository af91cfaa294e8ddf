"""Issue 31: the seal knows AIBench papers and questions by their content, so a copy of a data set
under another name (the question review's curated export is made to be imported again) is sealed
as the original is; and the question review and blind pairwise seal each other. Each test failed
on 820246e, where the seal knew a data set by its name."""
from __future__ import annotations

import json
import shutil

import pytest

from structext_core.aibench import config as aibench_config
from structext_core.aibench import pairwise as pws
from structext_core.aibench import question_review as qr
from structext_core.aibench import seal
from structext_core.aibench import study as aibench_study
from structext_core.aibench import visibility as aibench_visibility
from structext_core.studio import access, study


@pytest.fixture
def copied(world, aibench_root, tmp_path, monkeypatch):
    """The stored sets of the session with the synthetic set stored again as ``curated`` (ids and
    content the same, as a re-imported export), in a folder of this test's own."""
    root = tmp_path / "aibench"
    shutil.copytree(aibench_root, root)
    shutil.copytree(root / "synthetic", root / "curated")
    monkeypatch.setenv(aibench_config.DIR_ENV, str(root))
    return world


def _items(db, study_id, kind=None):
    rows = db.execute("SELECT sample_json, kind FROM study_items WHERE study_id = ?", [study_id]).fetchall()
    return [json.loads(r[0]) for r in rows if kind is None or r[1] == kind]


def _aibench_study(world, name, dataset, who, **options):
    p = world["people"]
    return aibench_study.create_aibench_study(world["db"], name=name, dataset=dataset, annotator_ids=[p[w]["id"] for w in who],
                                      created_by=p["lead"]["id"], **options)


def test_a_copy_is_sealed_on_results_in_public_mode(copied):
    """820246e: the copy's drill-down showed an annotator the keys of their open questions, and the
    system names beside the images of pairs they had not voted on."""
    db, p = copied["db"], copied["people"]
    access.set_public_mode(db, True, p["lead"])
    names = ["synthetic", "curated"]
    assert aibench_visibility.visible_datasets(db, p["ann1"], names) == names
    first = _aibench_study(copied, "answering", "synthetic", ("ann1",), n_items=4)
    assert aibench_visibility.visible_datasets(db, p["ann1"], names) == []
    assert aibench_visibility.visible_datasets(db, p["reader"], names) == names  # researchers see answers anyway
    study.set_study_status(db, first, "closed")
    assert aibench_visibility.visible_datasets(db, p["ann1"], names) == names
    voting = pws.create_study(db, "voting", "synthetic", [p["ann2"]["id"]], n_pairs=3, practice=0)
    assert aibench_visibility.visible_datasets(db, p["ann2"], names) == []
    pws.set_status(db, voting, "closed", by_user=p["lead"]["id"])
    assert aibench_visibility.visible_datasets(db, p["ann2"], names) == names


def test_practice_over_a_copy_shows_no_original_of_a_paper_still_answered(copied):
    """820246e: a study over the copy gave practice on the original figures (and keys) of papers the
    annotator was still answering in a study over the original."""
    db, p = copied["db"], copied["people"]
    data = aibench_study.load("synthetic")
    first = _aibench_study(copied, "first", "synthetic", ("ann1",), n_items=1, seed=3)
    answering = {i["paper_id"] for i in _items(db, first)}
    assert 0 < len(answering) < len(data.papers)
    for seed in range(6):  # the draw is seeded: every seed must keep the originals out
        second = _aibench_study(copied, f"second-{seed}", "curated", ("ann1",), n_items=2, practice_items=2,
                                gold_items=1, seed=seed)
        originals = {i["paper_id"] for i in _items(db, second, "practice") + _items(db, second, "gold")}
        assert originals and not originals & answering, seed
        study.set_study_status(db, second, "closed")  # its own questions are then no longer open
    # a question open in the original is open in the copy: its key is withheld after practice there
    item = _items(db, first)[0]
    assert seal.is_open_for(db, p["ann1"]["id"], {**item, "suite": "curated"})
    assert seal.question_key("curated", item["paper_id"], item["question_id"]) == \
        seal.question_key("synthetic", item["paper_id"], item["question_id"])


def test_a_paper_reviewed_in_one_copy_is_in_no_pair_of_another(copied):
    """820246e: a reviewer who opened paper P (its page shows the original figure) was added to a
    pairwise study over the same papers and met P's original figure, pixel-identical, in a pair."""
    db, p = copied["db"], copied["people"]
    ann1 = p["ann1"]
    campaign = qr.create_campaign(db, "review", "synthetic", [ann1["id"]], p["lead"], double_share=0)
    shown = qr.list_items(db, campaign, ann1["id"])[0]
    qr.paper_for(db, shown, ann1)
    qr.heartbeat(db, shown["id"], ann1)  # the review page shows the paper: its clock starts
    voting = pws.create_study(db, "voting", "curated", [ann1["id"]], n_pairs=6, practice=1)
    papers = {row[0] for row in db.execute("SELECT paper_id FROM pairwise_pairs WHERE study_id = ?", [voting])}
    assert papers and shown["paper_id"] not in papers
    everyone = pws.create_study(db, "everyone", "curated", [p["ann2"]["id"]], n_pairs=30, practice=0)
    assert shown["paper_id"] in {row[0] for row in db.execute(
        "SELECT paper_id FROM pairwise_pairs WHERE study_id = ?", [everyone])}
    before = db.execute("SELECT COUNT(*) FROM pairwise_tasks").fetchone()[0]
    with pytest.raises(study.StudyError, match=rf"'ann1' opened 1 of this study's papers in the question review "
                                               rf"\({shown['paper_id']}\)"):
        pws.add_annotator(db, everyone, ann1["id"], by_user=p["lead"]["id"])
    assert db.execute("SELECT COUNT(*) FROM pairwise_tasks").fetchone()[0] == before


def test_a_voter_is_given_no_paper_of_their_open_pairs_in_the_review(copied):
    """Decided in issue 31: while a person still has pairs of paper P to judge, the question review
    (over any copy) does not show them P, whose page shows the original figure; once judged, it may."""
    db, p = copied["db"], copied["people"]
    ann1 = p["ann1"]
    voting = pws.create_study(db, "voting", "synthetic", [ann1["id"]], n_pairs=3, practice=0)
    pending = {row[0] for row in db.execute("SELECT paper_id FROM pairwise_pairs WHERE study_id = ?", [voting])}
    campaign = qr.create_campaign(db, "review", "curated", [ann1["id"]], p["lead"], double_share=0)
    items = qr.list_items(db, campaign, ann1["id"])
    sealed = [i for i in items if i["paper_id"] in pending]
    assert sealed
    assert qr.next_item(db, campaign, ann1["id"]) is None or qr.next_item(db, campaign, ann1["id"])["paper_id"] \
        not in pending
    with pytest.raises(qr.ReviewError, match="pairs you still have to judge"):
        qr.paper_for(db, sealed[0], ann1)
    pws.set_status(db, voting, "closed", by_user=p["lead"]["id"])
    assert qr.paper_for(db, sealed[0], ann1).id == sealed[0]["paper_id"]
