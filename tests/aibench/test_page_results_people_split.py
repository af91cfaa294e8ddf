"""AIBench's people beside the solvers split by a questionnaire field (issue 45, AppTest): each group
of people is a row set beside the solvers, each answer counted once."""
from __future__ import annotations

from tests.aibench.test_page_results_aibench import aibench_dir, env, own_copy  # noqa: F401 (fixtures)
from tests.aibench.test_page_results_people import SOLVER, open_people, table, world  # noqa: F401
from tests.pages.light_choices import send
from tests.studio.study.crowd_answers import answer, set_questionnaire


def test_people_beside_the_solvers_split_by_expertise(world):  # noqa: F811
    """ann1 and ann3 experts (3 answers, 1 right), ann2 a novice (2 answers, 1 right)."""
    db = world["db"]
    study_id = db.execute("SELECT id FROM studies WHERE name = 'image study'").fetchone()[0]
    set_questionnaire(db, study_id)
    for person, level in zip(world["people"], ("expert", "novice", "expert")):
        answer(db, study_id, person["id"], expertise=level)
    at = open_people(world["lead"])
    send(at, "rs_aib_people", True)
    assert table(at, "accuracy")["who"].iloc[0] == "People"  # pooled until a split is chosen
    at.selectbox(key="rs_aib_people_split").set_value("expertise").run()
    assert not at.exception, [e.value for e in at.exception]
    accuracy = table(at, "accuracy").set_index(["who", "level"])
    novice, expert = accuracy.loc[("People: expertise = novice", "all")], accuracy.loc[("People: expertise = expert", "all")]
    assert (novice["n"], novice["correct"], expert["n"], expert["correct"]) == (2, 1, 3, 1)
    assert [w for w in accuracy.index.get_level_values("who").unique() if w.startswith("People")] == [
        "People: expertise = novice", "People: expertise = expert"]  # the options' order
    assert accuracy.loc[(SOLVER, "all"), "pairs"] == 2
