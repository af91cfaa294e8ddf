"""Issue 32, item 6: Explore lists AIBench's stored data sets and shows a paper (method text,
original figure, questions; keys only where the seal allows), and never a set (or a copy of it under
another name) holding a paper of an open study to a visitor or annotator. The page tests failed on
820246e, where Explore listed only StrucText's suites."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from structext_core import protocol
from structext_core.aibench import config as aibench_config
from structext_core.aibench import explore as aibench_explore
from structext_core.aibench import pairwise as pws
from structext_core.aibench import study as aibench_study
from structext_core.studio import access, study
from tests.pages.light_choices import choice, choose

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def copied(world, aibench_root, tmp_path, monkeypatch):
    """The session's stored sets, with the synthetic set stored again as ``curated`` (same content)."""
    root = tmp_path / "aibench"
    shutil.copytree(aibench_root, root)
    shutil.copytree(root / "synthetic", root / "curated")
    monkeypatch.setenv(aibench_config.DIR_ENV, str(root))
    return world


def explore_page(user) -> AppTest:
    at = AppTest.from_file(str(ROOT / "pages" / "explore.py"), default_timeout=60)
    at.session_state["user"] = user
    return at.run()


def _aibench(at: AppTest) -> AppTest:
    return choose(at, "explore_benchmark", "aibench")


def test_explore_lists_an_aibench_set_and_shows_a_paper(copied):
    p = copied["people"]
    at = explore_page(p["reader"])
    assert not at.exception
    assert choice(at, "explore_benchmark").options == [b.display_name for b in protocol.REGISTRY.values()]  # every member, in order
    at = _aibench(at)
    assert not at.exception
    assert at.selectbox(key="explore_aib_data").options == ["curated", "synthetic"]
    at.selectbox(key="explore_aib_data").select("synthetic").run()
    data = aibench_study.load("synthetic")
    second = sorted(data.papers)[1]
    at.selectbox(key="explore_aib_paper").select(second).run()
    assert not at.exception
    paper = data.papers[second]
    assert at.subheader[0].value == second
    assert len(at.get("image")) == 1  # the original figure
    text = "\n".join(m.value for m in at.markdown)
    assert paper.method_text.split()[0] in text
    for question in paper.questions:
        assert f"Key: **{question.answer}**" in text
    assert text.count("Key: **") == len(paper.questions)


def test_keys_shown_to_visitors_only_in_public_mode_and_only_of_sealed_free_sets(copied):
    db, p = copied["db"], copied["people"]
    at = explore_page(None)
    assert not at.radio and not at.selectbox  # the page is refused while the public mode is off
    access.set_public_mode(db, True, p["lead"])
    at = AppTest.from_file(str(ROOT / "pages" / "explore.py"), default_timeout=60).run()
    at = _aibench(at)
    assert not at.exception
    assert at.selectbox(key="explore_aib_data").options == ["curated", "synthetic"]
    assert "Key: **" in "\n".join(m.value for m in at.markdown)


def test_an_annotator_of_an_open_study_sees_neither_the_set_nor_a_copy(copied):
    """The seal on Explore: an open AIBench study over ``synthetic`` hides it and its copy
    ``curated`` (same papers by content) from visitors and annotators, in public read-only mode."""
    db, p = copied["db"], copied["people"]
    access.set_public_mode(db, True, p["lead"])
    study_id = aibench_study.create_aibench_study(db, name="answering", dataset="synthetic", annotator_ids=[p["ann1"]["id"]],
                                          created_by=p["lead"]["id"], n_items=4)
    for who in ("ann1", "ann2"):
        assert aibench_explore.aibench_datasets(db, p[who]) == []
        assert aibench_explore.aibench_paper_ids(db, p[who], "curated") == []
        with pytest.raises(PermissionError):
            aibench_explore.aibench_paper(db, p[who], "curated", sorted(aibench_study.load("curated").papers)[0])
    assert aibench_explore.aibench_datasets(db, None) == []
    at = _aibench(explore_page(p["ann1"]))
    assert not at.exception
    assert not at.selectbox and "open study" in at.info[0].value
    assert not at.get("image") and "Key: **" not in "\n".join(m.value for m in at.markdown)
    assert aibench_explore.aibench_datasets(db, p["reader"]) == ["curated", "synthetic"]  # researchers see answers anyway
    study.set_study_status(db, study_id, "closed")
    at = _aibench(explore_page(p["ann1"]))
    assert at.selectbox(key="explore_aib_data").options == ["curated", "synthetic"]


def test_an_open_pairwise_study_seals_its_papers_on_explore(copied):
    db, p = copied["db"], copied["people"]
    access.set_public_mode(db, True, p["lead"])
    voting = pws.create_study(db, "voting", "curated", [p["ann2"]["id"]], n_pairs=3, practice=0)
    assert aibench_explore.aibench_datasets(db, p["ann2"]) == []
    pws.set_status(db, voting, "closed", by_user=p["lead"]["id"])
    assert aibench_explore.aibench_datasets(db, p["ann2"]) == ["curated", "synthetic"]

