"""The Markdown, LaTeX and Org family: the section-content question."""

from structext_core.structext_eval import suites


def test_markup_pathwalk_asks_every_level():
    questions = [s["question"] for s in suites.generate_cell(22, 3, 1, 60)]
    assert any("subsubsection" in q for q in questions)
    assert any(" subsection" in q and "subsubsection" not in q for q in questions)
    assert any("subsection" not in q for q in questions)
