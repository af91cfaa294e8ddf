"""Issue 46, item 2: a pairwise study's counts, one source for every page, practice never counted.

Regression: the lead's chooser said "6 pairs", the progress table 8, the annotator "Pair 1 of 8",
the votes column counted practice while Results said "7 counted votes". Here a study of 6 pairs, 2
practice pairs and one repeat, voted on part-way, is read on each page (AppTest): the same numbers.
"""
from __future__ import annotations

import re

import pytest

from structext_core.aibench import pairwise as pws
from structext_core.aibench import people as aibench_people
from tests.pages.html_tables import html_figures
from tests.pages.test_screens_say_true_things import raw_missing
from tests.pairwise.test_pages import open_page

PAIRS, PRACTICE = 6, 2


@pytest.fixture
def voted(world):
    """ann1: both practice pairs and the next 3 (so 3 counted votes at most, fewer when the repeat came
    among them); ann2: one practice pair; 6 pairs, 2 practice, one repeat each."""
    db, p = world["db"], world["people"]
    study_id = pws.create_study(db, "pilot", "synthetic", [p["ann1"]["id"], p["ann2"]["id"]], n_pairs=PAIRS,
                                practice=PRACTICE, repeat_share=0.2, seed=3)
    clock = 100.0
    for who, votes in (("ann1", PRACTICE + 3), ("ann2", 1)):
        for _ in range(votes):
            view = pws.current_task(db, study_id, p[who]["id"], at=clock)
            clock += 6
            pws.vote(db, p[who]["id"], view.token, "left", at=clock)
    return {**world, "study": study_id}


def _counted_by_hand(db, study_id) -> dict[str, int]:
    """Counted votes recounted from the rows: votes on study pairs, a repeat's left out."""
    rows = db.execute("SELECT u.username, COUNT(v.id) FROM pairwise_votes v JOIN pairwise_tasks t ON t.id = v.task_id"
                      " JOIN pairwise_pairs p ON p.id = t.pair_id JOIN users u ON u.id = t.user_id"
                      " WHERE t.study_id = ? AND p.kind = 'study' AND t.repeat_of IS NULL GROUP BY u.username",
                      [study_id]).fetchall()
    return {"ann1": 0, "ann2": 0, **dict(rows)}


def test_each_count_has_one_source_and_practice_is_never_counted(voted):
    db, study_id = voted["db"], voted["study"]
    counts = {c.annotator: c for c in pws.person_counts(db, study_id)}
    by_hand = _counted_by_hand(db, study_id)
    assert {name: c.votes for name, c in counts.items()} == by_hand
    assert all(c.pairs == PAIRS and c.practice == PRACTICE and c.repeats == 1 for c in counts.values())
    assert counts["ann1"].practice_done == PRACTICE and counts["ann2"].practice_done == 1
    assert counts["ann2"].votes == 0  # a practice vote is not counted
    assert pws.counted_votes(db, study_id) == sum(by_hand.values()) == pws.results(db, study_id, n_boot=5).votes
    assert aibench_people.pairwise_studies(db, "synthetic")[0]["votes"] == sum(by_hand.values())


def test_every_page_says_the_same_numbers(voted, monkeypatch):
    db, p, study_id = voted["db"], voted["people"], voted["study"]
    by_hand = _counted_by_hand(db, study_id)
    counted = sum(by_hand.values())
    # the lead's page: the chooser, the progress table, Results
    lead = open_page("pairwise_admin.py", p["lead"], pwa_study=study_id)
    chooser = lead.selectbox(key="pwa_study")
    assert f"{PAIRS} pairs + {PRACTICE} practice" in chooser.format_func(chooser.value)
    progress = next(d.value for d in lead.dataframe if "counted votes" in d.value.columns).set_index("annotator")
    assert progress["pairs"].tolist() == [PAIRS, PAIRS]
    assert progress["counted votes"].to_dict() == by_hand
    assert progress.loc["ann2", "practice"] == f"1 of {PRACTICE}"
    said = [c.value for c in lead.caption if re.match(r"\d+ counted votes? \(", c.value)]
    assert len(said) == 1 and said[0].startswith(f"{counted} counted vote"), said
    assert raw_missing(lead) == []
    # the annotators' page: the study's pairs, practice numbered apart, then what counts
    ann1 = open_page("pairwise.py", p["ann1"])
    assert f"This study has {PAIRS} pairs to judge" in " ".join(c.value for c in ann1.caption)
    judged = 3  # after practice: three votes (a repeat among them or not)
    assert ann1.get("progress")[0].proto.text == f"Judgement {judged + 1} of {PAIRS + 1}"
    studies = ann1.selectbox(key="pw_study")
    assert studies.format_func(studies.value) == f"pilot ({judged} of {PAIRS + 1} judged)"
    assert raw_missing(ann1) == []
    ann2 = open_page("pairwise.py", p["ann2"])
    assert ann2.get("progress")[0].proto.text == f"Practice pair 2 of {PRACTICE} · not counted"
    assert f"after {PRACTICE} practice pairs (not counted)" in " ".join(c.value for c in ann2.caption)


def test_kendalls_w_and_the_rank_interval_read_alike_on_the_lead_page(voted):
    # regression: "undefined" here, "—" with a reason on Results; a rank interval "2.125-5"
    lead = open_page("pairwise_admin.py", voted["people"]["lead"], pwa_study=voted["study"])
    figures = {m.label: m.value for m in html_figures(lead)}
    assert figures["Kendall's W"] == "—"  # one person voted: W needs two
    assert any("Kendall's W (needs two or more such people" in c.value for c in lead.caption)
    assert not any("undefined" in str(v) for v in figures.values())
    rank = next(d.value for d in lead.dataframe if "rank 95%" in d.value.columns)
    assert all(re.fullmatch(r"\d+( to \d+)?|—", span) for span in rank["rank 95%"]), list(rank["rank 95%"])
    assert "rank_low" not in rank.columns
