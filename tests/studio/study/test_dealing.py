"""Places that fill (issue 45): k people per item, dealt one at a time so coverage stays balanced,
a cap per person, questions held too long going back to the pool, and the study as before when k
is not set."""

import threading
from collections import Counter

import pytest

from structext_core.studio import accounts, storage, study
from structext_core.studio.crowd import dealing, settings
from tests.studio.study.support import make_study, on_screen


def people(db, n, prefix="p"):
    return [accounts.create_user(db, f"{prefix}{i}", "password-123", "annotator") for i in range(n)]


def dealt_study(db, samples, annotators, *, per_item=2, per_person=None, hold_seconds=None, **options):
    """A study created with nobody, its places set, then everyone added (as a study link does)."""
    first, *rest = annotators
    study_id = make_study(db, samples, [first], **options)
    settings.save_settings(db, study_id, None, per_item=per_item, per_person=per_person, hold_seconds=hold_seconds)
    for person in rest:
        study.add_annotator(db, study_id, person["id"])
    for person in annotators:
        study.accept_rule(db, study_id, person["id"], at=0.0)
    return study_id


def answer_next(db, study_id, user_id, at):
    view = study.open_question(db, study_id, user_id, at=at)
    if view is None:
        return None
    study.submit_answer(db, user_id, view.assignment_id, "an answer", at=at + 1)
    return view


def counted_answers(db, study_id):
    return Counter(item for (item,) in db.execute(
        "SELECT r.item_id FROM responses r JOIN study_items i ON i.id = r.item_id"
        " WHERE r.study_id = ? AND i.kind = 'study'", [study_id]))


def test_default_study_gives_everyone_every_item_at_once(db, samples, annotators):
    study_id = make_study(db, samples, annotators)
    assert dealing.places(db, study_id) is None
    for person in annotators:
        rows = db.execute("SELECT COUNT(*) FROM assignments WHERE study_id = ? AND user_id = ?",
                          [study_id, person["id"]]).fetchone()[0]
        assert rows == 10
        assert not dealing.queue_done(db, study_id, person["id"])
    # Opening a question deals nothing more and the counts are the store's.
    study.accept_rule(db, study_id, annotators[0]["id"], at=0.0)
    view = study.open_question(db, study_id, annotators[0]["id"], at=1.0)
    assert (view.seq, view.total) == (1, 10)


def test_a_dealt_person_joins_with_no_counted_question_and_gets_one_when_needed(db, samples):
    crowd = people(db, 3)
    study_id = dealt_study(db, samples, crowd, per_item=2)
    user_id = crowd[1]["id"]
    assert db.execute("SELECT COUNT(*) FROM assignments WHERE study_id = ? AND user_id = ?",
                      [study_id, user_id]).fetchone()[0] == 0
    view = study.open_question(db, study_id, user_id, at=10.0)
    assert view is not None and view.seq == 1
    # 10 items, k = 2, 3 people: each may have all 10 as far as they know now.
    assert view.total == 10
    again = study.open_question(db, study_id, user_id, at=11.0)
    assert again.assignment_id == view.assignment_id  # held, not dealt twice


def test_coverage_stays_balanced_and_k_is_never_exceeded(db, samples):
    crowd = people(db, 5)
    study_id = dealt_study(db, samples, crowd, per_item=2)
    clock = 100.0
    # Round robin: each person one answer at a time, as people arrive in turn.
    active = [p["id"] for p in crowd]
    while active:
        for user_id in list(active):
            clock += 5
            if answer_next(db, study_id, user_id, clock) is None:
                active.remove(user_id)
            covered = counted_answers(db, study_id)
            # Balanced: answers per item never differ by more than one while places remain.
            if len(covered) == 10:
                assert max(covered.values()) - min(covered.values()) <= 1
    covered = counted_answers(db, study_id)
    assert sorted(covered.values()) == [2] * 10
    for person in crowd:
        assert dealing.queue_done(db, study_id, person["id"])
        # Nobody answered an item twice.
        items = [row[0] for row in db.execute("SELECT item_id FROM responses WHERE study_id = ? AND user_id = ?",
                                              [study_id, person["id"]])]
        assert len(items) == len(set(items))


def test_per_person_caps_the_counted_questions(db, samples):
    crowd = people(db, 2)
    study_id = dealt_study(db, samples, crowd, per_item=2, per_person=3)
    user_id = crowd[0]["id"]
    seen = []
    clock = 10.0
    while (view := answer_next(db, study_id, user_id, clock)) is not None:
        seen.append(view)
        clock += 10
    assert len(seen) == 3
    assert [v.total for v in seen] == [3, 3, 3]
    assert [v.seq for v in seen] == [1, 2, 3]
    assert dealing.queue_done(db, study_id, user_id)
    mine = study.studies_for_annotator(db, user_id)[0]
    assert mine.finished and mine.n_items == 3
    member = next(m for m in study.study_members(db, study_id) if m.user_id == user_id)
    assert (member.answered, member.total) == (3, 3)
    other = next(m for m in study.study_members(db, study_id) if m.user_id == crowd[1]["id"])
    assert (other.answered, other.total) == (0, 3)  # may still be dealt three


def test_gold_and_practice_are_everyones_and_not_counted(db, samples):
    crowd = people(db, 3)
    study_id = dealt_study(db, samples, crowd, per_item=1, per_person=4, practice_items=1, gold_items=2)
    user_id = crowd[2]["id"]
    kinds = dict(db.execute("SELECT a.item_id, i.kind FROM assignments a JOIN study_items i ON i.id = a.item_id"
                            " WHERE a.study_id = ? AND a.user_id = ?", [study_id, user_id]).fetchall())
    assert sorted(kinds.values()) == ["gold", "gold", "practice"]
    clock, asked = 10.0, []
    while (view := study.open_question(db, study_id, user_id, at=clock)) is not None:
        asked.append((view.practice, view.item_id))
        study.submit_answer(db, user_id, view.assignment_id, "x", at=clock + 1)
        study.pending_practice_feedback(db, study_id, user_id)
        clock += 10
    assert asked[0][0] is True  # practice first
    kinds = dict(db.execute("SELECT id, kind FROM study_items WHERE study_id = ?", [study_id]).fetchall())
    assert Counter(kinds[item] for _p, item in asked) == {"practice": 1, "gold": 2, "study": 4}
    assert dealing.queue_done(db, study_id, user_id)


def test_two_people_racing_for_the_last_place_never_make_k_plus_one(tmp_path, samples):
    path = tmp_path / "race.db"
    db = storage.open_db(path)
    crowd = people(db, 12)
    study_id = dealt_study(db, samples, crowd, per_item=3, n_items=4)
    barrier = threading.Barrier(len(crowd))
    errors = []

    def person(user_id):
        own = storage.open_db(path)
        try:
            barrier.wait()
            clock = 100.0
            while answer_next(own, study_id, user_id, clock) is not None:
                clock += 1
        except Exception as error:  # any error here would have reached a person
            errors.append(repr(error))
        finally:
            own.conn.close()

    threads = [threading.Thread(target=person, args=(p["id"],)) for p in crowd]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert sorted(counted_answers(db, study_id).values()) == [3, 3, 3, 3]
    held = db.execute("SELECT COUNT(*) FROM assignments a LEFT JOIN responses r ON r.assignment_id = a.id"
                      " WHERE a.study_id = ? AND r.id IS NULL", [study_id]).fetchone()[0]
    assert held == 0


def test_a_question_held_past_the_hold_time_goes_back_to_the_pool(db, samples):
    crowd = people(db, 2)
    study_id = dealt_study(db, samples, crowd, per_item=1, hold_seconds=600, n_items=2)
    away, other = crowd[0]["id"], crowd[1]["id"]
    held = study.open_question(db, study_id, away, at=100.0)
    on_screen(db, away, held.assignment_id, 100.0, 161.0)  # a minute of work, then the tab closes
    # Within the hold time: the other person gets the other item, and nothing more.
    first = answer_next(db, study_id, other, 200.0)
    assert first.item_id != held.item_id
    assert study.open_question(db, study_id, other, at=700.0) is None
    assert dealing.queue_done(db, study_id, other)
    # Past it (600 s after the last heartbeat at 160): the held item goes to the one who asks.
    second = study.open_question(db, study_id, other, at=800.0)
    assert second is not None and second.item_id == held.item_id
    released = dealing.release_notice(db, study_id, away)
    assert released == "Your previous question went back to the pool after 11 minutes away."
    # The person away: their tab learns it at its next heartbeat, and nothing is left for them.
    assert study.heartbeat(db, away, held.assignment_id, None, at=801.0).state == "released"
    with pytest.raises(study.StaleQuestionError, match="went back to the pool"):
        study.submit_answer(db, away, held.assignment_id, "late", at=802.0)
    assert study.open_question(db, study_id, away, at=803.0) is None
    assert dealing.queue_done(db, study_id, away)
    # The minute they worked stays in their day.
    assert dealing.released_seconds(db, study_id)[away]["active_seconds"] == pytest.approx(60.0)
    assert study.own_progress(db, study_id, away, at=900.0).active_seconds == pytest.approx(60.0)


def test_the_released_person_gets_another_question_and_the_notice_until_they_answer(db, samples):
    crowd = people(db, 2)
    study_id = dealt_study(db, samples, crowd, per_item=1, hold_seconds=300, n_items=4)
    away, other = crowd[0]["id"], crowd[1]["id"]
    held = study.open_question(db, study_id, away, at=0.0)
    answer_next(db, study_id, other, 1000.0)  # someone needs a question: the sweep releases it
    assert dealing.release_notice(db, study_id, away) is not None
    back = study.open_question(db, study_id, away, at=1100.0)
    assert back is not None and back.item_id != held.item_id
    study.submit_answer(db, away, back.assignment_id, "x", at=1110.0)
    assert dealing.release_notice(db, study_id, away) is None
    # Never dealt the released item again.
    items = {row[0] for row in db.execute("SELECT item_id FROM assignments WHERE user_id = ?", [away])}
    assert held.item_id not in items


def test_a_question_answered_in_time_is_never_released(db, samples):
    crowd = people(db, 2)
    study_id = dealt_study(db, samples, crowd, per_item=1, hold_seconds=120, n_items=2)
    view = study.open_question(db, study_id, crowd[0]["id"], at=0.0)
    on_screen(db, crowd[0]["id"], view.assignment_id, 0.0, 400.0)  # a long question, worked on all along
    answer_next(db, study_id, crowd[1]["id"], 400.0)
    assert dealing.release_stale(db, study_id, at=401.0) == []
    study.submit_answer(db, crowd[0]["id"], view.assignment_id, "x", at=402.0)


def test_setting_k_on_a_study_with_people_deals_their_unseen_questions_again(db, samples, annotators):
    study_id = make_study(db, samples, annotators)
    user_id = annotators[0]["id"]
    study.accept_rule(db, study_id, user_id, at=0.0)
    answer_next(db, study_id, user_id, 1.0)
    settings.save_settings(db, study_id, None, per_item=1)
    view = study.open_question(db, study_id, user_id, at=10.0)
    assert view is not None
    rows = db.execute("SELECT COUNT(*) FROM assignments WHERE study_id = ? AND user_id = ?",
                      [study_id, user_id]).fetchone()[0]
    assert rows == 2  # the one answered and the one dealt now
    with pytest.raises(study.StudyError, match="cannot be switched off"):
        dealing.check_change(db, study_id, None)
    settings.save_settings(db, study_id, None, per_item=2)
    assert "keep them and get no more" in dealing.check_change(db, study_id, 1)
    assert dealing.check_change(db, study_id, 3) is None


def test_statuses_follow_consent_answers_queue_and_outcomes(db, samples):
    from structext_core.studio.crowd import status

    crowd = people(db, 6)
    study_id = dealt_study(db, samples, crowd, per_item=2, per_person=1, n_items=4)
    ids = [p["id"] for p in crowd]
    assert set(status.statuses(db, study_id)["status"]) == {"consented"}  # no consent asked
    db.execute("UPDATE study_crowd SET consent_version = 1 WHERE study_id = ?", [study_id])
    db.execute("UPDATE study_annotators SET consent_at = 5, consent_version = 1"
               " WHERE study_id = ? AND user_id IN (?, ?, ?, ?, ?)",
               [study_id, *ids[1:]])
    view = study.open_question(db, study_id, ids[2], at=10.0)  # holds a question, has answered none
    answer_next(db, study_id, ids[3], 20.0)  # answered their one question: queue done
    for user_id, outcome in ((ids[4], "screened_out"), (ids[5], "timed_out")):
        db.execute("UPDATE study_annotators SET outcome = ? WHERE study_id = ? AND user_id = ?",
                   [outcome, study_id, user_id])
    got = dict(status.statuses(db, study_id)[["username", "status"]].itertuples(index=False))
    assert got == {"p0": "invited", "p1": "consented", "p2": "consented", "p3": "done",
                   "p4": "screened out", "p5": "timed out"}
    study.submit_answer(db, ids[2], view.assignment_id, "x", at=30.0)
    assert status.statuses(db, study_id).set_index("username").loc["p2", "status"] == "done"
    cover = status.coverage(db, study_id)
    assert list(cover.columns) == ["item_id", "position", "answers", "held", "k"]
    assert cover["answers"].sum() == 2 and cover["held"].sum() == 0 and set(cover["k"]) == {2}
    assert status.coverage_words(cover) == "Items with 2 answers: 0 of 4"


def test_answering_status_while_more_may_be_dealt(db, samples):
    from structext_core.studio.crowd import status

    crowd = people(db, 2)
    study_id = dealt_study(db, samples, crowd, per_item=2, n_items=4)
    answer_next(db, study_id, crowd[0]["id"], 10.0)
    held = study.open_question(db, study_id, crowd[1]["id"], at=11.0)
    got = status.statuses(db, study_id).set_index("username")["status"].to_dict()
    assert got == {"p0": "answering", "p1": "consented"}
    cover = status.coverage(db, study_id).set_index("item_id")
    assert cover.loc[held.item_id, "held"] == 1


def test_items_not_dealt_yet_are_sealed_for_the_person(db, samples, annotators):
    from structext_core.studio import seal

    crowd = people(db, 2)
    study_id = dealt_study(db, samples, crowd, per_item=1, n_items=4)
    user_id = crowd[0]["id"]
    # Nothing dealt yet, yet every item may still be dealt to them: all four are open.
    assert seal.open_item_count(db, user_id) == 4
    answer_next(db, study_id, user_id, 10.0)
    assert seal.open_item_count(db, user_id) == 3
    # A study that does not deal: its open items are those given and not answered, as before.
    plain = make_study(db, samples, annotators[:1], name="plain", n_items=3)
    assert seal.open_item_count(db, annotators[0]["id"]) == 3
    study.accept_rule(db, plain, annotators[0]["id"], at=0.0)
    answer_next(db, plain, annotators[0]["id"], 20.0)
    assert seal.open_item_count(db, annotators[0]["id"]) == 2


def test_agreement_is_computed_when_people_answered_different_items(db, samples):
    crowd = people(db, 6)
    study_id = dealt_study(db, samples, crowd, per_item=3, n_items=4)
    clock = 10.0
    for person in crowd:  # six people, two items each: every item gets its three answers
        for _ in range(2):
            clock += 5
            answer_next(db, study_id, person["id"], clock)
    df = study.responses_frame(db, study_id)
    assert sorted(df.groupby("item_id").size()) == [3, 3, 3, 3]
    result = study.agreement_summary(df)
    # Nobody answered every item, yet each item has three answers: Fleiss is computed over them.
    assert result["fleiss_basis"] == "same number" and result["fleiss_raters"] == 3
    assert result["fleiss_items"] == 4 and result["alpha_items"] == 4
    # The pairwise table lists only the pairs with an item in common, each counted once.
    pairs = result["pairwise"]
    assert (pairs["n"] > 0).all() and len(pairs) < 15
    table = study.progress_table(db, study_id).set_index("annotator")
    assert set(table["total"]) == {2} and set(table["remaining"]) == {0}


def test_a_person_arriving_by_the_study_link_is_dealt_one_question_at_a_time(db, samples, annotators):
    from structext_core.studio.crowd import links

    study_id = make_study(db, samples, annotators[:1], n_items=4, gold_items=1)
    settings.save_settings(db, study_id, None, per_item=1, per_person=2)
    link = links.create_link(db, study_id, places=5, expires_at=None, id_param="PROLIFIC_PID", by=None)
    arrived = links.enrol(db, link.token, {"PROLIFIC_PID": "abc123"})
    user_id = arrived.user["id"]
    kinds = [row[0] for row in db.execute("SELECT i.kind FROM assignments a JOIN study_items i ON i.id = a.item_id"
                                          " WHERE a.study_id = ? AND a.user_id = ?", [study_id, user_id])]
    assert kinds == ["gold"]  # the gold question now, the counted ones when needed
    study.accept_rule(db, study_id, user_id, at=0.0)
    asked = []
    clock = 10.0
    while (view := answer_next(db, study_id, user_id, clock)) is not None:
        asked.append((view.seq, view.total))
        clock += 10
    assert asked == [(1, 3), (2, 3), (3, 3)]  # two counted (the cap) and the gold one
    assert dealing.queue_done(db, study_id, user_id)


def test_someone_arriving_when_every_place_is_taken_is_done_at_once(db, samples):
    from structext_core.studio.crowd import status

    crowd = people(db, 3)
    study_id = dealt_study(db, samples, crowd, per_item=1, n_items=2)
    for moment, person in enumerate(crowd[:2], 1):
        answer_next(db, study_id, person["id"], 10.0 * moment)
    late = crowd[2]["id"]
    assert study.open_question(db, study_id, late, at=50.0) is None
    assert dealing.queue_done(db, study_id, late)
    assert status.statuses(db, study_id).set_index("username").loc["p2", "status"] == "done"


def test_the_visit_ends_completed_when_the_dealt_queue_is_done_not_after_each_question(db, samples):
    from structext_core.studio.crowd import outcomes

    crowd = people(db, 2)
    study_id = dealt_study(db, samples, crowd, per_item=1, per_person=2, n_items=4)
    user_id = crowd[0]["id"]
    answer_next(db, study_id, user_id, 10.0)  # one answered, nothing held: a second may still be dealt
    assert outcomes.end_state(db, study_id, user_id) is None
    answer_next(db, study_id, user_id, 20.0)
    assert outcomes.end_state(db, study_id, user_id).outcome == "completed"
