"""AIBench's human side on the Results page (AppTest): people beside the solvers, the disagreements on
the original figure with the send-back action (admins), the pairwise human rank; annotators get none."""
from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from structext_core.aibench import pairwise as pws
from structext_core.aibench import question_review as qr
from structext_core.aibench import store as aibench_store
from structext_core.studio import access, accounts, changes, storage
from tests.aibench import people_data
from tests.aibench.test_page_results_aibench import PAGE, aibench_dir, env, own_copy  # noqa: F401 (fixtures)
from tests.pages.heatmap_tables import heatmap_tables
from tests.pages.html_tables import html_figures
from tests.pages.light_choices import choices, choose, send
from tests.pages.light_parts import notes

SOLVER = "vlm-test"
DATASET = aibench_store.SYNTHETIC


@pytest.fixture
def world(request, tmp_path, monkeypatch):
    """Accounts, an image study where people and the solver part on one question of the original
    figure, and a pairwise study with votes (on a copy of the stored sets: predictions are added)."""
    request.getfixturevalue("own_copy")
    monkeypatch.setattr(accounts.credentials, "SCRYPT_N", 2**4)
    db = storage.open_db(tmp_path / "structext.db")
    lead = accounts.create_user(db, "lead", "password1", "admin")
    reader = accounts.create_user(db, "reader", "password1", "researcher")
    return {"db": db, "lead": lead, "reader": reader, **people_data.people_and_votes(db, DATASET, SOLVER)}


def open_people(user) -> AppTest:
    at = AppTest.from_file(str(PAGE), default_timeout=120)
    at.session_state["user"] = user
    at.run()
    choose(at, "rs_benchmark", "aibench")
    assert not at.exception, [e.value for e in at.exception]
    return at


#: Each table of the section by a column only it has.
TABLES = {"accuracy": "who", "agreement": "agree", "persons": "answers", "disagreements": "why",
          "rank": "comparisons", "correlations": "spearman_rho"}


def shown(at, name):
    return [d.value for d in at.dataframe if TABLES[name] in d.value.columns]


def table(at, name):
    (found,) = shown(at, name)
    return found


def test_admin_sees_people_beside_solvers_and_sends_a_question_back(world):
    at = open_people(world["lead"])
    assert not shown(at, "accuracy")  # closed until asked for
    send(at, "rs_aib_people", True)
    assert not at.exception, [e.value for e in at.exception]
    accuracy = table(at, "accuracy").set_index(["who", "level"])
    assert accuracy.loc[("People", "all"), "n"] == 5 and accuracy.loc[("People", "all"), "correct"] == 2
    assert accuracy.loc[(SOLVER, "all"), "pairs"] == 2 and accuracy.loc[(SOLVER, "all"), "correct"] == 1
    (cells,) = [frame for data, frame in heatmap_tables(at) if "solver x level" in data["title"]]
    assert set(cells["row_label"]) == {"People", SOLVER, aibench_store.REFERENCE_SOLVER}
    assert cells.set_index(["row_label", "col_label"])["n"].loc["People"].sum() == 5
    persons = table(at, "persons")
    assert sorted(persons["annotator"]) == ["ann1", "ann2", "ann3"]
    found = table(at, "disagreements")
    assert (found["question_id"].iloc[0], found["why"].iloc[0].split(":")[0]) == (
        world["q1"], "people and the solver agree on another letter than the key")
    # the pairwise human rank: the same numbers as the lead's page
    rank = table(at, "rank")
    expected = pws.results(world["db"], world["study"]).ranking.table
    assert list(rank["system"]) == list(expected["system"])
    assert rank["strength"].tolist() == pytest.approx(expected["strength"].tolist())
    assert "spearman_rho" in table(at, "correlations").columns
    # regression (issue 32, item 8): the rank table was cut on the right, Kendall's W said "undefined"
    assert list(rank.columns) == ["rank", "rank 95%", "system", "strength", "strength 95%", "win_rate",
                                  "comparisons"]
    assert [d for d in at.dataframe if "both_bad_share" in d.value.columns]  # the vote counts, apart
    assert "paper rho" in table(at, "correlations").columns and "rho_low" not in table(at, "correlations").columns
    figures = {m.label: m.value for m in html_figures(at)}
    assert set(figures) == {"Per-pair agreement", "Kendall's W", "Swap consistency"}
    assert not any(word in value for value in figures.values() for word in ("undefined", "None", "nan"))
    if figures["Kendall's W"] == "—":
        assert any("Kendall's W (needs two or more such people" in c.value for c in notes(at, "caption"))
    # send the question back, to the next review campaign
    pick = at.selectbox(key="rs_aib_sb_pick")
    pick.set_value(next(i for i, label in enumerate(pick.options) if world["q1"] in label and SOLVER in label)).run()
    at.text_input(key="rs_aib_sb_reason").input("people and the solver agree against the key").run()
    at.button(key="rs_aib_sb_go").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("sent back to expert review" in s.value for s in notes(at, "success"))
    (sent,) = qr.sendbacks(world["db"], dataset=DATASET)
    assert (sent["paper_id"], sent["question_id"], sent["state"]) == (world["paper"], world["q1"], "queued")
    assert sent["evidence"]["letters"] == f"{world['wrong']}×3" and sent["evidence"]["solver_letter"] == world["wrong"]
    assert changes.history(world["db"], prefix="aibench-question:")[0].action == "qreview.send_back"
    assert "waiting for the next review campaign" in " ".join(table(at, "disagreements")["in review"])
    # a second time: refused, said so, nothing written
    at.text_input(key="rs_aib_sb_reason").input("once more please").run()
    at.button(key="rs_aib_sb_go").click().run()
    assert any("already back in review" in e.value for e in notes(at, "error"))
    assert len(qr.sendbacks(world["db"], dataset=DATASET)) == 1


def test_researchers_see_the_aggregates_but_no_ones_answers(world):
    at = open_people(world["reader"])
    send(at, "rs_aib_people", True)
    assert not at.exception
    assert shown(at, "accuracy") and shown(at, "rank")
    assert not shown(at, "persons") and not shown(at, "disagreements")
    assert not [b for b in at.button if b.key == "rs_aib_sb_go"]
    text = " ".join(str(d.value.to_csv()) for d in at.dataframe)
    assert not any(p["username"] in text for p in world["people"])


@pytest.mark.parametrize("public", [False, True], ids=["public-off", "public-on"])
def test_annotators_get_none_of_it(world, public):
    if public:
        access.set_public_mode(world["db"], True, world["lead"])
    at = open_people(world["people"][0])
    assert "rs_aib_people" not in choices(at)
    assert not any(shown(at, name) for name in TABLES)
    # the data set is in an open image study the annotator takes part in: none of its keys either
    assert not [s for s in at.selectbox if s.key == "rs_aib_data"]
    assert not [d for d in at.dataframe if "reply" in d.value.columns or "C_interval" in d.value.columns]
    text = " ".join(c.value for c in notes(at, "caption"))
    if public:
        assert "in an open study" in text
