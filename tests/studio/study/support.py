"""Shared set-up of the study tests: a grid of samples, a study, an annotator's screen time,
a whole study answered by a policy."""

from structext_core.structext_eval import study as structext_study
from structext_core.structext_eval import suites
from structext_core.studio import study

#: A heartbeat every 5 s and the idle pause after a minute.
IDLE_MINUTE = study.ClockSettings(heartbeat_seconds=5, idle_pause_seconds=60)

# Task ids chosen to cover several formats and categories.
GRID_TASKS = (1, 5, 8, 10, 18, 21)


def grid_samples(depths=(1, 2), widths=(1, 2), per_cell=2, tasks=GRID_TASKS):
    return [
        suites.generate_sample(task_id, depth, width, suite="test-hard", index=index)
        for task_id in tasks for depth in depths for width in widths for index in range(per_cell)
    ]


def make_study(db, samples, annotators, **options):
    options = {"name": "pilot", "suite": "test-hard", "samples": samples, "n_items": 10,
               "annotator_ids": [a["id"] for a in annotators], **options}
    return structext_study.create_study(db, **options)


def count(db, table):
    return db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]


def on_screen(db, user_id, assignment_id, start, end, tab=None, every=5.0):
    """What the page does while the question is on screen from ``start`` to ``end``: a
    heartbeat every ``every`` seconds, and an input report (scrolling, typing) each minute."""
    moment = start + every
    while moment < end:
        if int(moment - start) % 60 < every:
            study.record_activity(db, user_id, assignment_id, tab, at=moment)
        else:
            study.heartbeat(db, user_id, assignment_id, tab, at=moment)
        moment += every


def answer_of(db, assignment_id):
    return db.execute(
        "SELECT json_extract(i.sample_json, '$.answer') FROM assignments a"
        " JOIN study_items i ON i.id = a.item_id WHERE a.id = ?", [assignment_id]
    ).fetchone()[0]


def run_study(db, samples, annotators, policy, n_items=12):
    """Every annotator answers every item; ``policy(username, index, answer)`` gives the
    response (None = give up). Item k takes 10 * (k + 1) seconds."""
    study_id = make_study(db, samples, annotators, n_items=n_items)
    clock = 1000.0
    for annotator in annotators:
        study.accept_rule(db, study_id, annotator["id"])
        index = 0
        while (view := study.open_question(db, study_id, annotator["id"], at=clock)) is not None:
            on_screen(db, annotator["id"], view.assignment_id, clock, clock + 10 * (index + 1))
            clock += 10 * (index + 1)
            response = policy(annotator["username"], index, answer_of(db, view.assignment_id))
            if response is None:
                study.give_up(db, annotator["id"], view.assignment_id, at=clock)
            else:
                study.submit_answer(db, annotator["id"], view.assignment_id, response, at=clock)
            index += 1
    return study_id


def policy_all_half_none(username, index, answer):
    if username == "ann1":
        return answer
    if username == "ann2":
        return answer if index % 2 == 0 else "zzz nothing alike"
    return None
