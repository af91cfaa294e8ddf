"""Light elements drawn together as one element (structext_core/ui/light_panel.py): the order of a page kept
whatever of Streamlit's own comes between them, each part's event handed to its own handler (anything else
ignored), notes in our captions' Markdown written as text, a note written later. The Results page drawn this
way: tests/pages/test_page_results.py; in Chromium: tests/browser/test_results_views.py."""

from __future__ import annotations

import json
import textwrap

import pytest
from streamlit.testing.v1 import AppTest

from structext_core.ui import light_panel
from tests.pages.light_choices import choice, choose, open_section, save, sections
from tests.pages.light_parts import is_panel, notes, panels, run_script, send_event, walk

SCRIPT = textwrap.dedent('''
    import streamlit as st
    from structext_core.ui import light_choice, light_html, light_panel, widgets

    light_html.page_draws_light()
    calls = st.session_state.setdefault("calls", [])
    with light_panel.panel("p"):
        fruit = light_choice.choose("Fruit", ["apple", "pear"], key="fruit", on_change=lambda: calls.append("fruit"))
        widgets.caption(f"You chose **{fruit}**.")
        later = light_panel.placeholder()
        st.markdown("Streamlit's own")
        widgets.html_block("<p>A block</p>")
        left, right = st.columns(2)
        light_choice.choose("Colour", ["red", "blue"], key="colour", where=left)
        widgets.info("An info box", icon=":material/info:")
        box = widgets.lazy_section("More", key="more")
        if box:
            box.write("Drawn open")
        light_choice.downloads("files", [light_choice.Download("Fruit list", "fruit.txt", lambda: fruit)])
        if st.session_state.get("write_later"):
            later.caption(f"Written later: {fruit}")
    widgets.caption("Outside the panel")
''')


def run(**state) -> AppTest:
    return run_script(SCRIPT, **state)


def shown(at) -> list[str]:
    """What the main area shows in order: each element's type (a part: its kind and label or text)."""
    out = []
    for node in walk(at.main):
        kind = getattr(node, "kind", None)
        if kind is not None:
            data = node.data
            out.append(f"{kind}:{data.get('label') or data.get('text') or data.get('html', '')}")
        elif getattr(node, "type", "") == "bidi_component":
            data = json.loads(node.proto.json)
            out.append(f"element:{data.get('label') or data.get('html', '')}")
        elif getattr(node, "type", "") in ("markdown", "caption", "info"):
            out.append(f"{node.type}:{node.value}")
    return out


def test_the_page_order_is_kept_and_parts_between_streamlits_elements_share_one_element():
    at = run()
    assert not at.exception
    assert shown(at) == ["choice:Fruit", "note:You chose **apple**.", "note:", "markdown:Streamlit's own",
                         "element:<p>A block</p>", "element:Colour", "note:An info box", "section:More",
                         "choice:Downloads", "caption:Outside the panel"]
    drawn = [json.loads(e.proto.json) for e in panels(at._tree)]
    # one element for what comes before Streamlit's Markdown and one after the columns; the block between them,
    # alone, is its own element (a panel carries every kind's code)
    assert [[p["kind"] for p in panel["parts"]] for panel in drawn] == [["choice", "note", "note"], ["note", "section", "choice"]]
    assert [e for e in at.get("bidi_component") if e.proto.component_name.endswith("structext_light_html")]
    assert choice(at, "colour").label == "Colour"  # given a column of its own: an element of its own
    info, = notes(at, "info")
    assert info.value == "An info box"


def test_a_choice_in_a_panel_is_kept_and_its_callback_runs():
    at = choose(run(), "fruit", "pear")
    assert not at.exception and at.session_state["fruit"] == "pear" and at.session_state["calls"] == ["fruit"]
    assert "You chose **pear**." in [n.value for n in notes(at)]
    assert choice(at, "fruit").shown == "pear"


@pytest.mark.parametrize("forged", [{"id": "nobody:choice", "value": "pear"}, {"id": "fruit:choice", "value": "plum"},
                                    {"value": "pear"}, "fruit:choice", None, [1, 2]])
def test_anything_but_a_part_drawn_and_one_of_its_values_is_ignored(forged):
    at = run()
    panel = next(e for e in at.get("bidi_component") if is_panel(e))
    at = send_event(at, panel, "part", forged)
    assert not at.exception and at.session_state["fruit"] == "apple" and at.session_state["calls"] == []


def test_a_section_in_a_panel_opens_and_its_content_follows_it():
    at = open_section(run(), "More")
    assert not at.exception and [e.label for e in at.expander] == ["More"]
    assert [m.value for m in at.expander[0].markdown] == ["Drawn open"]
    assert "More" in sections(at)


def test_a_download_in_a_panel_is_made_on_the_click():
    at = choose(run(), "fruit", "pear")
    at, file = save(at, "Fruit list")
    assert not at.exception and file["name"] == "fruit.txt" and file["nonce"] > 0


def test_a_note_written_later_shows_what_was_last_written_in_its_place_and_nothing_until_then():
    at = run(write_later=True)
    assert [n.value for n in notes(at)][:2] == ["You chose **apple**.", "Written later: apple"]
    assert "Written later: apple" not in [n.value for n in notes(run())]


def test_two_parts_of_one_key_are_refused():
    at = AppTest.from_string(textwrap.dedent('''
        import streamlit as st
        from structext_core.ui import light_choice, light_html, light_panel
        light_html.page_draws_light()
        try:
            with light_panel.panel("p"):
                light_choice.choose("A", ["x"], key="same")
                light_choice.choose("B", ["y"], key="same")
        except ValueError as error:
            st.session_state["refused"] = str(error)
    '''), default_timeout=30).run()
    assert at.session_state["refused"] == "two light elements of one key on this page: 'same:choice'"


def test_a_page_that_does_not_draw_light_elements_draws_each_on_its_own():
    at = AppTest.from_string(textwrap.dedent('''
        from structext_core.ui import light_choice, light_panel, widgets
        with light_panel.panel("p"):
            light_choice.choose("Fruit", ["apple", "pear"], key="fruit")
            widgets.caption("A caption")
    '''), default_timeout=30).run()
    assert not [e for e in at.get("bidi_component") if is_panel(e)] and choice(at, "fruit").label == "Fruit"
    assert [c.value for c in at.caption] == ["A caption"]


def test_without_a_panel_notes_are_streamlits_own():
    at = AppTest.from_string(textwrap.dedent('''
        from structext_core.ui import widgets
        widgets.caption("A caption")
        widgets.warning("A warning", icon=":material/info:")
    '''), default_timeout=30).run()
    assert [c.value for c in at.caption] == ["A caption"] and [w.value for w in at.warning] == ["A warning"]
    assert not at.get("bidi_component")


@pytest.mark.parametrize("text, runs", [
    ("plain", [["", "plain"]]),
    ("A **bold** and `code`.", [["", "A "], ["b", "bold"], ["", " and "], ["c", "code"], ["", "."]]),
    ("*em* **b *both* b**", [["i", "em"], ["", " "], ["b", "b "], ["bi", "both"], ["b", " b"]]),
    ("\\*not em\\* and \\[link\\]", [["", "*not em* and [link]"]]),
    ("two\nlines", [["", "two"], ["\n", ""], ["", "lines"]]),
    ("Not imported:\n- line 1: **bad**", [["", "Not imported:"], ["\n", ""], ["", "\u2022 line 1: "], ["b", "bad"]]),
    ("``a`b`` and `open", [["c", "a`b"], ["", " and `open"]]),
    ("2 * 3 * 4 and ** spaced **", [["", "2 * 3 * 4 and ** spaced **"]]),
    ("<script>alert(1)</script>", [["", "<script>alert(1)</script>"]]),  # text, never markup
])
def test_our_captions_markdown_becomes_runs_of_text(text, runs):
    assert light_panel.runs(text) == runs


def test_a_hostile_note_is_read_in_one_pass():
    for text in ("*" * 200_000, "`" * 100_001, "*a" * 100_000, "\\" * 200_001, "**x " * 50_000, "`` ` " * 40_000):
        out = light_panel.runs(text)
        assert sum(len(words) for _, words in out) <= len(text)


def test_what_a_panel_holds_is_drawn_when_the_page_stops():
    """st.stop() makes Streamlit raise again at every element drawn after it: the parts a panel drew at its end
    were lost, so a light page that stopped after a note showed nothing of it (Adjudication's "No study to
    adjudicate" for a lead with none, in the app, where ui.run_page draws the page in a panel)."""
    at = AppTest.from_string(textwrap.dedent('''
        import streamlit as st
        from structext_core.ui import light_choice, light_html, light_panel, widgets
        light_html.page_draws_light()
        with light_panel.panel("p"):
            widgets.info("No study yet.")
            light_choice.choose("Fruit", ["apple", "pear"], key="fruit")
            st.markdown("Streamlit's own")
            widgets.caption("The last caption before the stop.")
            st.stop()
            widgets.caption("Never drawn.")
    '''), default_timeout=30).run()
    assert not at.exception
    assert shown(at) == ["note:No study yet.", "choice:Fruit", "markdown:Streamlit's own",
                         "caption:The last caption before the stop."]  # alone: its own element


ROW_SCRIPT = textwrap.dedent('''
    import streamlit as st
    from structext_core.ui import light_choice, light_html, light_panel

    if st.session_state.get("light", True):
        light_html.page_draws_light()
    calls = st.session_state.setdefault("calls", [])
    with light_panel.panel("p"):
        light_choice.choose("Before", ["a", "b"], key="before")
        with light_panel.row(vertical_alignment="bottom"):
            light_panel.note("**Reference** · JSON", "markdown")
            light_choice.check("Match case", key="case", toggle=True, width="content",
                               on_change=lambda: calls.append("case"))
            light_choice.number("Go to line", key="goto", min_value=1, max_value=9, optional=True, width=160)
        light_choice.choose("After", ["c", "d"], key="after")
''')


def test_a_row_is_one_part_of_the_panel_whose_parts_answer_as_their_own():
    at = run_script(ROW_SCRIPT)
    (panel,) = panels(at._tree)
    parts = json.loads(panel.proto.json)["parts"]
    assert [p["kind"] for p in parts] == ["choice", "row", "choice"]  # one element: before, the row, after
    row = parts[1]["data"]
    assert (row["align"], [p["kind"] for p in row["parts"]]) == ("bottom", ["note", "choice", "choice"])
    assert [p["width"] for p in row["parts"]] == [None, "content", 160]
    assert row["parts"][0]["data"]["runs"] == [["b", "Reference"], ["", " · JSON"]]
    # a part of the row sends as a part of the panel: its own handler runs
    (case,) = [node for node in walk(at._tree) if getattr(node, "data", {}).get("label") == "Match case"]
    at = send_event(at, case, "choose", True)
    assert at.session_state["calls"] == ["case"] and at.session_state["case"] is True


def test_a_row_on_a_page_that_draws_no_light_elements_is_a_row_of_streamlits():
    at = run_script(ROW_SCRIPT, light=False)
    assert not panels(at._tree)
    assert [m.value for m in at.markdown] == ["**Reference** · JSON"]
    labels = [json.loads(e.proto.json).get("label") for e in at.get("bidi_component")]
    assert labels == ["Before", "Match case", "Go to line", "After"]  # each its own element, in order
