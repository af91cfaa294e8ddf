"""The expert review of AIBench questions (structext_core.aibench.question_review), without Streamlit."""
from __future__ import annotations

import json
from dataclasses import replace

import pytest

from structext_core.aibench import dataset, images
from structext_core.aibench import question_review as qr
from structext_core.aibench.model import INSUFFICIENT, Question
from structext_core.aibench.review_checks import check_question, rule_of
from structext_core.studio import changes
from structext_core.studio.clock import ClockSettings
from tests.aibench import review_data


@pytest.fixture
def env(tmp_path, monkeypatch):
    return review_data.setup(tmp_path, monkeypatch)


def first_paper(env):
    return qr.load_dataset(review_data.DATASET).papers


def decide_all(db, item, user, action="accept", reason=""):
    for q in qr.paper_of(item).questions:
        qr.save_decision(db, item["id"], user, q.id, action, reason=reason)


# ---- checks -------------------------------------------------------------------------------

def test_rule_is_read_from_the_question_text():
    assert rule_of('Which component directly feeds into "Local Decoder"?') == {"kind": "predecessor",
                                                                              "of": "Local Decoder"}
    assert rule_of("Which component's output splits into parallel branches?") == {"kind": "fan_out"}
    assert rule_of("What does the figure mean to you?") is None


def test_checks_block_bad_questions_and_warn_where_the_graph_disagrees(env):
    paper = next(iter(first_paper(env).values()))
    q2 = next(q for q in paper.questions if q.level == 2)
    assert check_question(q2, paper.graph).ok and not check_question(q2, paper.graph).warnings
    wrong = next(L for L in "ABCD" if L != q2.answer and q2.options["ABCD".index(L)] != INSUFFICIENT)
    found = check_question(replace(q2, answer=wrong), paper.graph)
    assert found.ok and len(found.warnings) == 1 and "logic graph answers" in found.warnings[0]
    assert found.graph_answer == q2.options["ABCD".index(q2.answer)]
    no_insufficient = replace(q2, options=tuple(o if o != INSUFFICIENT else "Something else" for o in q2.options))
    assert any("needs the option" in p for p in check_question(no_insufficient, paper.graph).problems)
    same = replace(q2, options=(q2.options[0], q2.options[0].upper(), *q2.options[2:]))
    assert any("distinct" in p for p in check_question(same, paper.graph).problems)
    assert any("not one of the options" in p
               for p in check_question(replace(q2, options=q2.options[:2], answer="D"), paper.graph).problems)
    # a level-1 question: the graph decides whether a label is drawn
    q1 = next(q for q in paper.questions if q.level == 1)
    flipped = replace(q1, answer="A" if q1.answer == "B" else "B")
    assert check_question(flipped, paper.graph).warnings
    # level 4 is not decided by the graph: no warning whatever the answer
    q4 = next(q for q in paper.questions if q.level == 4)
    other = next(L for L in "ABCD" if L != q4.answer)
    assert not check_question(replace(q4, answer=other), paper.graph).warnings


# ---- campaign ------------------------------------------------------------------------------

def test_deal_is_seeded_and_doubles_a_share_with_two_different_reviewers():
    dealt = qr.deal([f"p{i}" for i in range(10)], [1, 2, 3], 0.3, seed=4)
    assert dealt == qr.deal([f"p{i}" for i in range(10)], [1, 2, 3], 0.3, seed=4)
    doubles = [d for d in dealt if d[2]]
    assert len({p for p, _, _ in doubles}) == 3 and len(doubles) == 6
    for paper in {p for p, _, _ in doubles}:
        assert len({r for p, r, _ in doubles if p == paper}) == 2
    loads = [sum(r == who for _, r, _ in dealt) for who in (1, 2, 3)]
    assert max(loads) - min(loads) <= 1
    with pytest.raises(qr.ReviewError, match="two reviewers"):
        qr.deal(["p1"], [1], 0.5, 0)


def test_create_refuses_non_leads_and_unknown_sets(env):
    db, rev = env["db"], env["reviewers"][0]
    with pytest.raises(qr.ReviewError, match="lead"):
        qr.create_campaign(db, "x", review_data.DATASET, [rev["id"]], rev)
    with pytest.raises(qr.ReviewError, match="no stored AIBench"):
        qr.create_campaign(db, "x", "nope", [rev["id"]], env["lead"])


def test_a_whole_review_with_double_review_agreement_adjudication_and_export(env, tmp_path):
    db, lead, (r1, r2) = env["db"], env["lead"], env["reviewers"]
    cid = qr.create_campaign(db, "Pilot", review_data.DATASET, [r1["id"], r2["id"]], lead, double_share=0.34)
    items = qr.list_items(db, cid)
    doubled = sorted({i["paper_id"] for i in items if i["double"]})
    assert len(doubled) == 1 and len(items) == 4
    # the single papers: reviewer accepts all
    for item in items:
        if not item["double"]:
            who = r1 if item["reviewer_id"] == r1["id"] else r2
            with pytest.raises(qr.ReviewError, match="no decision yet"):
                qr.submit(db, item["id"], who)
            decide_all(db, item, who)
            qr.submit(db, item["id"], who)
    # the double paper: r1 edits the first level-2 question and removes one; r2 accepts all
    i1 = next(i for i in items if i["double"] and i["reviewer_id"] == r1["id"])
    i2 = next(i for i in items if i["double"] and i["reviewer_id"] == r2["id"])
    paper = qr.paper_of(i1)
    decide_all(db, i1, r1)
    q2 = next(q for q in paper.questions if q.level == 2)
    edited = replace(q2, question=q2.question + " (in the main branch)")
    qr.save_decision(db, i1["id"], r1, q2.id, "edit", edited, "")
    with pytest.raises(qr.ReviewError, match="needs a reason"):
        qr.submit(db, i1["id"], r1)
    qr.save_decision(db, i1["id"], r1, q2.id, "edit", edited, "clearer")
    q1 = paper.questions[0]
    qr.save_decision(db, i1["id"], r1, q1.id, "remove", reason="label is unreadable")
    bad = Question("x", 3, "Which part is new?", ("A thing", "Another"), "A")
    added = qr.add_question(db, i1["id"], r1, bad, "harder question")
    with pytest.raises(qr.ReviewError, match="needs the option"):
        qr.submit(db, i1["id"], r1)
    good = replace(bad, options=("A thing", "Another", INSUFFICIENT))
    qr.save_decision(db, i1["id"], r1, added, "add", good, "harder question")
    qr.submit(db, i1["id"], r1)
    decide_all(db, i2, r2)
    qr.submit(db, i2["id"], r2)
    with pytest.raises(qr.ReviewError, match="submitted"):
        qr.save_decision(db, i2["id"], r2, q1.id, "accept")
    # the other reviewer's item is not theirs
    with pytest.raises(qr.ReviewError, match="another reviewer"):
        qr.save_decision(db, i2["id"], r1, q1.id, "accept")
    # agreement: n = questions of the double paper, 2 disagreements
    rows = {r["level"]: r for r in qr.agreement(db, cid)}
    n = len(paper.questions)
    assert rows["all"]["n"] == n
    assert rows["all"]["agreement_pct"] == round(100 * (n - 2) / n, 1)
    assert rows["all"]["kappa"] is not None and rows["all"]["kappa"] < 1
    assert sum(rows[k]["n"] for k in rows if k != "all") == n
    found = qr.disagreements(db, cid)
    assert {d["question_id"] for d in found} == {q1.id, q2.id}
    # the lead approves all; the double paper stays out until adjudicated
    for item in qr.list_items(db, cid):
        qr.review(db, item["id"], lead, "approved")
    cur = qr.curated(db, cid)
    assert doubled[0] in cur.left_out and "adjudicated" in cur.left_out[doubled[0]]
    with pytest.raises(qr.ReviewError, match="reason"):
        qr.adjudicate(db, cid, doubled[0], q1.id, lead, "remove")
    qr.adjudicate(db, cid, doubled[0], q1.id, lead, "remove", reason="r1 is right: unreadable")
    qr.adjudicate(db, cid, doubled[0], q2.id, lead, "edit", edited, reason="r1's wording")
    cur = qr.curated(db, cid)
    assert not cur.left_out and len(cur.papers) == 3
    prov = {(p["paper_id"], p["question_id"]): p for p in cur.provenance}
    assert prov[(doubled[0], q1.id)]["status"] == "removed"
    assert prov[(doubled[0], q2.id)]["status"] == "revised" and "lead" in prov[(doubled[0], q2.id)]["by"]
    assert prov[(doubled[0], added)]["status"] == "added" and prov[(doubled[0], added)]["by"] == "rev1"
    assert {p["status"] for p in cur.provenance} == {"generated", "revised", "added", "removed"}
    # export re-imports through the AIBench import
    out = qr.export(db, cid, tmp_path / "export", lead)
    assert out.papers == 3
    back = dataset.import_folder(out.folder, tmp_path / "reimported", images.check_image)
    got = back.papers[doubled[0]]
    assert q1.id not in {q.id for q in got.questions}
    assert next(q for q in got.questions if q.id == q2.id).question == edited.question
    assert next(q for q in got.questions if q.id == added).options == good.options
    assert len(back.images) == len(qr.load_dataset(review_data.DATASET).images)
    log = [json.loads(line) for line in (out.folder / "review" / "review_log.jsonl").read_text().splitlines()]
    assert {r["event"] for r in log} >= {"submitted", "approved", "adjudicated"}
    with pytest.raises(qr.ReviewError, match="not an empty folder"):
        qr.export(db, cid, tmp_path / "export", lead)
    actions = {c.action for c in changes.history(db, prefix="qreview:")}
    assert {"qreview.create", "qreview.approved", "qreview.adjudicate", "qreview.export"} <= actions


def test_send_back_reopens_the_paper_and_flags_reach_the_lead(env):
    db, lead, (r1, _) = env["db"], env["lead"], env["reviewers"]
    cid = qr.create_campaign(db, "One", review_data.DATASET, [r1["id"]], lead, double_share=0)
    item = qr.next_item(db, cid, r1["id"])
    decide_all(db, item, r1)
    q2 = next(q for q in qr.paper_of(item).questions if q.level == 2)
    wrong = next(L for k, L in enumerate("ABCD"[:len(q2.options)]) if L != q2.answer and q2.options[k] != INSUFFICIENT)
    qr.save_decision(db, item["id"], r1, q2.id, "edit", replace(q2, answer=wrong), "the figure shows otherwise")
    qr.submit(db, item["id"], r1)  # a graph warning does not block
    rows = {r.question_id: r for r in qr.submission_rows(db, item["id"])}
    assert rows[q2.id].action == "edit" and rows[q2.id].check.warnings
    assert not any(r.check.warnings for qid, r in rows.items() if qid != q2.id)
    with pytest.raises(qr.ReviewError, match="comment"):
        qr.review(db, item["id"], lead, "returned")
    qr.review(db, item["id"], lead, "returned", "look at L2-1 again")
    assert qr.next_item(db, cid, r1["id"])["id"] == item["id"]
    assert qr.get_item(db, item["id"])["status"] == "returned"
    qr.save_decision(db, item["id"], r1, "L1-1", "remove", reason="not drawn legibly")
    flag = qr.flag(db, item["id"], r1, "the figure is cut off at the right", "L1-1")
    assert qr.list_flags(db, cid, open_only=True)[0]["id"] == flag
    with pytest.raises(qr.ReviewError, match="lead"):
        qr.resolve_flag(db, flag, r1, "fixed")
    qr.resolve_flag(db, flag, lead, "figure replaced")
    assert not qr.list_flags(db, cid, open_only=True)


def clock_item(env, name: str, t: float):
    """A one-reviewer campaign; its paper shown to rev1 at ``t`` (heartbeat every 5 s, idle pause after 60 s)."""
    db, lead, r1 = env["db"], env["lead"], env["reviewers"][0]
    cid = qr.create_campaign(db, name, review_data.DATASET, [r1["id"]], lead, double_share=0)
    item = qr.next_item(db, cid, r1["id"])
    s = ClockSettings(heartbeat_seconds=5, idle_pause_seconds=60)
    qr.heartbeat(db, item["id"], r1, settings=s, at=t)
    return db, lead, r1, item, s


def test_the_clock_books_active_away_idle_and_paused_time(env):
    t = 1_000_000.0
    db, lead, r1, item, s = clock_item(env, "Clock", t)
    for k in range(1, 7):  # 30 s on screen, an input at the end
        qr.heartbeat(db, item["id"], r1, settings=s, at=t + 5 * k)
    qr.save_decision(db, item["id"], r1, "L1-2", "accept", settings=s, at=t + 30)
    qr.heartbeat(db, item["id"], r1, settings=s, at=t + 130)  # a 100 s gap: away, and 100 s without input: idle pause
    row = qr.get_item(db, item["id"])
    clock = qr.clock_of(row, s, t + 130)
    assert clock["active"] == pytest.approx(30) and clock["away"] == pytest.approx(100) and clock["is_paused"]
    assert row["idle_seconds"] == pytest.approx(0)
    qr.resume(db, item["id"], r1, at=t + 190)
    qr.save_decision(db, item["id"], r1, "L1-1", "accept", settings=s, at=t + 200)
    for k in range(1, 15):  # no input for 60 s: an idle pause, the 60 s since the input become idle time
        qr.heartbeat(db, item["id"], r1, settings=s, at=t + 200 + 5 * k)
    row = qr.get_item(db, item["id"])
    assert row["paused_at"] == t + 260 and row["idle_seconds"] == pytest.approx(60)
    clock = qr.clock_of(row, s, t + 270)
    assert clock["active"] == pytest.approx(40) and clock["is_paused"]
    assert clock["paused"] == pytest.approx(60 + 10)
    # the Pause button: time since the last beat is booked, then paused
    qr.resume(db, item["id"], r1, at=t + 280)
    qr.heartbeat(db, item["id"], r1, settings=s, at=t + 285)
    qr.pause(db, item["id"], r1, settings=s, at=t + 290)
    row = qr.get_item(db, item["id"])
    assert row["pause_count"] == 3 and row["paused_at"] == t + 290
    clock = qr.clock_of(row, s, t + 300)
    assert clock["active"] == pytest.approx(50) and clock["paused"] == pytest.approx(60 + 20 + 10)
    # the lead looking at the paper does not move the reviewer's clock
    qr.heartbeat(db, item["id"], lead, settings=s, at=t + 400)
    assert qr.get_item(db, item["id"])["active_seconds"] == row["active_seconds"]


def test_input_reports_keep_the_idle_pause_away_and_a_hidden_tab_counts_as_away(env):
    t = 2_000_000.0
    db, _, r1, item, s = clock_item(env, "Activity", t)
    for k in range(1, 25):  # two minutes of reading: mouse and scroll input reported every 10 s
        qr.heartbeat(db, item["id"], r1, settings=s, at=t + 5 * k)
        if k % 2 == 0:
            qr.record_activity(db, item["id"], r1, input_age=1.0, settings=s, at=t + 5 * k)
    row = qr.get_item(db, item["id"])
    assert row["paused_at"] is None and row["idle_seconds"] == 0
    assert qr.clock_of(row, s, t + 120)["active"] == pytest.approx(120)
    # the tab is hidden for 20 s: away, not active
    qr.record_activity(db, item["id"], r1, visible=False, settings=s, at=t + 125)
    for k in range(1, 5):
        qr.heartbeat(db, item["id"], r1, visible=False, settings=s, at=t + 125 + 5 * k)
    qr.record_activity(db, item["id"], r1, visible=True, input_age=0.0, settings=s, at=t + 145)
    row = qr.get_item(db, item["id"])
    assert row["active_seconds"] == pytest.approx(125) and row["away_seconds"] == pytest.approx(20)


# ---- lifecycle: archive, copy, the audit log ---------------------------------------------------

def test_archive_stops_every_change_and_hides_the_campaign_from_its_reviewers(env):
    db, lead, (r1, _) = env["db"], env["lead"], env["reviewers"]
    cid = qr.create_campaign(db, "Arch", review_data.DATASET, [r1["id"]], lead, double_share=0)
    item = qr.next_item(db, cid, r1["id"])
    decide_all(db, item, r1)
    qr.submit(db, item["id"], r1)
    other = qr.next_item(db, cid, r1["id"])
    flag = qr.flag(db, other["id"], r1, "the figure is cut off at the right")
    with pytest.raises(qr.ReviewError, match="lead"):
        qr.set_archived(db, cid, True, r1)
    qr.set_archived(db, cid, True, lead)
    with pytest.raises(qr.ReviewError, match="archived already"):
        qr.set_archived(db, cid, True, lead)
    with pytest.raises(qr.ReviewError, match="archived"):
        qr.save_decision(db, other["id"], r1, qr.paper_of(other).questions[0].id, "accept")
    with pytest.raises(qr.ReviewError, match="archived"):
        qr.flag(db, other["id"], r1, "another problem with it")
    with pytest.raises(qr.ReviewError, match="archived"):
        qr.review(db, item["id"], lead, "approved")
    with pytest.raises(qr.ReviewError, match="archived"):
        qr.resolve_flag(db, flag, lead, "figure replaced")
    paper = qr.paper_of(item)
    with pytest.raises(qr.ReviewError, match="archived"):
        qr.adjudicate(db, cid, paper.id, paper.questions[0].id, lead, "accept", reason="fine")
    assert qr.get_item(db, item["id"])["status"] == "submitted"  # nothing written
    assert qr.list_flags(db, cid, open_only=True)[0]["id"] == flag
    assert qr.campaign(db, cid)["archived_at"] is not None
    qr.set_archived(db, cid, False, lead)
    qr.review(db, item["id"], lead, "approved")
    qr.resolve_flag(db, flag, lead, "figure replaced")
    got = [(c.action, c.by, c.detail) for c in qr.history(db, cid)]
    assert [a for a, _, _ in got] == ["qreview.resolve_flag", "qreview.approved", "qreview.unarchive",
                                      "qreview.archive", "qreview.create"]
    assert all(by == "lead" for _, by, _ in got) and got[0][2] == {"flag": flag, "resolution": "figure replaced"}


def test_a_copy_has_the_same_data_set_papers_and_settings_and_none_of_the_work(env):
    db, lead, (r1, r2) = env["db"], env["lead"], env["reviewers"]
    papers = sorted(qr.load_dataset(review_data.DATASET).papers)[:2]
    cid = qr.create_campaign(db, "Source", review_data.DATASET, [r1["id"], r2["id"]], lead, double_share=0.5,
                             seed=7, paper_ids=papers)
    item = qr.list_items(db, cid)[0]
    who = r1 if item["reviewer_id"] == r1["id"] else r2
    decide_all(db, item, who)
    qr.submit(db, item["id"], who)
    with pytest.raises(qr.ReviewError, match="exists already"):
        qr.copy_campaign(db, cid, "source", [r1["id"], r2["id"]], lead)
    with pytest.raises(qr.ReviewError, match="lead"):
        qr.copy_campaign(db, cid, "Copy", [r1["id"], r2["id"]], r1)
    new = qr.copy_campaign(db, cid, "Copy", qr.campaign_reviewers(db, cid), lead)
    source, copy = qr.campaign(db, cid), qr.campaign(db, new)
    assert (copy["dataset"], copy["seed"], copy["double_share"]) == (source["dataset"], 7, 0.5)

    def dealt(campaign_id):
        return sorted((i["paper_id"], i["reviewer_id"], i["double"], i["position"])
                      for i in qr.list_items(db, campaign_id))
    assert dealt(new) == dealt(cid)  # the same reviewers: the same deal
    assert {i["status"] for i in qr.list_items(db, new)} == {"todo"}
    assert not any(qr.decisions(db, i["id"]) for i in qr.list_items(db, new))
    # dealt afresh to one reviewer: the same papers, no doubles possible with one reviewer
    with pytest.raises(qr.ReviewError, match="two reviewers"):
        qr.copy_campaign(db, cid, "Solo", [r1["id"]], lead)
    assert len(qr.list_campaigns(db)) == 2  # nothing half-written
    entry = qr.history(db, new)[0]
    assert entry.action == "qreview.copy" and entry.detail["source"] == cid and entry.detail["papers"] == 2
