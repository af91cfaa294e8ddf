"""The light chooser (structext_core/ui/light_choice.py): what the browser is sent, the choice kept under its
key, what a forged or stale id does. In Chromium: tests/browser/test_light_choice_browser.py."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

import pytest
from streamlit.testing.v1 import AppTest

from structext_core.ui import light_choice as lc
from tests.pages.light_choices import choice, choices, choose, press, save, send


@dataclass(frozen=True)
class Thing:
    id: int
    name: str
    count: int = 0


def test_the_browser_is_sent_ids_and_labels_and_a_placeholder_only_when_nothing_is_chosen():
    things = [Thing(1, "one"), Thing(2, "two")]
    data = lc.choice_data("k", "Thing", things, things[1], format_func=lambda t: t.name.title(),
                          ident=lambda t: str(t.id), help="Which one.")
    assert data["options"] == [["1", "One"], ["2", "Two"]] and data["value"] == "2"
    assert data["placeholder"] is None and data["help"] == "Which one." and data["kind"] == "select"
    none = lc.choice_data("k", "Thing", things, None, format_func=str, ident=lambda t: str(t.id),
                          placeholder="Choose a thing")
    assert none["value"] is None and none["placeholder"] == "Choose a thing"
    with pytest.raises(ValueError, match="two options with one id"):
        lc.choice_data("k", "Thing", [Thing(1, "a"), Thing(1, "b")], None, format_func=str,
                       ident=lambda t: str(t.id))


SCRIPT = textwrap.dedent('''
    from dataclasses import dataclass
    import streamlit as st
    from structext_core.ui import light_choice as lc

    @dataclass(frozen=True)
    class Thing:
        id: int
        name: str
        count: int

    n = st.session_state.get("n", 3)
    things = [Thing(i, f"thing {i}", n) for i in range(1, 4)]  # read anew each run: new objects, same ids
    chosen = lc.choose("Thing", things, key="thing", format_func=lambda t: f"{t.name} ({t.count})",
                       ident=lambda t: str(t.id), on_change=lambda: st.session_state.update(changes=st.session_state.get("changes", 0) + 1))
    order = lc.choose("Order", ["a", "b"], key="order", buttons=True, format_func=str.upper)
    st.write(f"chosen {chosen.id} of count {chosen.count}; order {order}")
''')


def run_script(**state) -> AppTest:
    at = AppTest.from_string(SCRIPT, default_timeout=30)
    for key, value in state.items():
        at.session_state[key] = value
    return at.run()


def said(at) -> str:
    return at.markdown[-1].value


def test_a_choice_reruns_with_the_option_kept_found_again_by_its_id():
    at = run_script()
    assert said(at) == "chosen 1 of count 3; order a"  # the first option of each, as st.selectbox
    assert choice(at, "thing").options == ["thing 1 (3)", "thing 2 (3)", "thing 3 (3)"]
    assert choice(at, "order").buttons and choice(at, "order").options == ["A", "B"]
    choose(at, "thing", "thing 3 (3)")  # by the label a person reads
    assert said(at) == "chosen 3 of count 3; order a" and at.session_state["changes"] == 1
    at.session_state["n"] = 7  # the list read again: other objects, other labels
    at.run()
    assert said(at) == "chosen 3 of count 7; order a"  # the same option, as it is now
    assert choice(at, "thing").shown == "thing 3 (7)"
    choose(at, "order", "b")
    assert said(at) == "chosen 3 of count 7; order b" and at.session_state["changes"] == 1


def test_a_page_chooses_by_setting_the_key_and_a_forged_id_changes_nothing():
    at = run_script(thing=Thing(2, "set by the page"))
    assert said(at) == "chosen 2 of count 3; order a" and choice(at, "thing").value == "2"
    at = run_script(thing=Thing(9, "gone"))  # a choice no longer offered: the first one
    assert said(at) == "chosen 1 of count 3; order a"
    assert said(run_script(thing="a name, not a thing")) == "chosen 1 of count 3; order a"  # no id: the first
    with pytest.raises(AssertionError, match="offers no"):
        choose(at, "thing", "thing 9")
    for forged in ("9", 2, None, ["1"], {"id": "1"}, "x" * 100_000):  # never offered, or not an id at all
        at = send(at, "thing", forged)
        assert not at.exception and said(at) == "chosen 1 of count 3; order a" and "changes" not in at.session_state


def test_the_script_writes_every_label_as_text_and_sends_only_an_id():
    """Labels and options come from the lab's files and people's names: the browser never parses them as
    markup, and what it sends is one option's id."""
    assert "innerHTML" not in lc.CHOICE_JS and "insertAdjacentHTML" not in lc.CHOICE_JS
    assert "outerHTML" not in lc.CHOICE_JS and "textContent" in lc.CHOICE_JS
    assert lc.CHOICE_JS.count("setTriggerValue(") == 1


CHECK_AND_BUTTONS = textwrap.dedent('''
    import streamlit as st
    from structext_core.ui import light_choice as lc

    ticked = lc.check("Practice too", key="practice", help="Never counted.")
    lc.actions("row", [("add", "Add one", lambda: st.session_state.update(n=st.session_state.get("n", 0) + 1)),
                       ("box", "Box", lambda: st.session_state.update(box=not st.session_state.get("box", False)))],
               expanded={"box": bool(st.session_state.get("box"))}, tips={"add": "Adds one."})
    st.write(f"ticked {ticked}; n {st.session_state.get('n', 0)}; box {st.session_state.get('box', False)}")
''')


def test_a_check_box_and_a_row_of_buttons_act_on_what_the_browser_sends_and_nothing_else():
    at = AppTest.from_string(CHECK_AND_BUTTONS, default_timeout=30).run()
    assert said(at) == "ticked False; n 0; box False"
    assert choice(at, "row").options == ["Add one", "Box"] and choices(at)["row"]["tips"] == {"add": "Adds one."}
    send(at, "practice", True)
    press(at, "Add one")
    press(at, "Box")
    assert said(at) == "ticked True; n 1; box True" and choices(at)["row"]["expanded"] == {"box": True}
    for forged in ("yes", 1, None, ["add"]):  # not a bool; not a button's name
        send(at, "practice", forged)
        send(at, "row", forged)
    send(at, "row", "delete")
    assert not at.exception and said(at) == "ticked True; n 1; box True"


DOWNLOADS = textwrap.dedent('''
    import streamlit as st
    from structext_core.ui import light_choice as lc

    def made(name):
        st.session_state[name] = st.session_state.get(name, 0) + 1
        return "a,b\\n1,2\\n"

    def broken():
        raise RuntimeError("no such table")

    lc.downloads("files", [lc.Download("CSV", "table.csv", lambda: made("csv"), "text/csv", "The table"),
                           lc.Download("Broken", "broken.png", broken, "image/png")])
    st.write(f"made {st.session_state.get('csv', 0)}")
''')


def test_a_download_is_made_on_its_click_only_and_saved_once_each_click():
    at = AppTest.from_string(DOWNLOADS, default_timeout=30).run()
    row = choices(at)["files"]
    assert row["kind"] == "downloads" and row["options"] == [["table.csv", "CSV"], ["broken.png", "Broken"]]
    assert row["tips"] == {"table.csv": "The table"} and row["file"] is None and said(at) == "made 0"
    at, first = save(at, "CSV")
    assert said(at) == "made 1" and first["name"] == "table.csv"
    assert first["url"].startswith("/") and "/media/" in first["url"] and first["url"].endswith(".csv")
    at.run()  # a run the click did not start: nothing made, nothing to save
    assert said(at) == "made 1" and choices(at)["files"]["file"] is None
    at, second = save(at, "CSV")
    assert said(at) == "made 2" and second["nonce"] != first["nonce"]  # saved again: a new number
    for forged in ("../table.csv", 1, None, ["table.csv"]):
        send(at, "files", forged)
        assert said(at) == "made 2" and choices(at)["files"]["file"] is None


def test_a_file_that_cannot_be_made_says_so_and_saves_nothing():
    at, file = save(AppTest.from_string(DOWNLOADS, default_timeout=30).run(), "Broken")
    assert file["url"] == "" and not at.exception
    assert [e.value for e in at.error] == ["broken.png could not be made; nothing was saved. The server's log says why."]
    assert "no such table" not in str([e.value for e in at.error])


def test_two_files_of_one_name_in_a_row_are_refused():
    with pytest.raises(ValueError, match="two files of one name"):
        lc.downloads("files", [lc.Download("A", "a.csv", lambda: b""), lc.Download("B", "a.csv", lambda: b"")])


def test_a_files_address_keeps_the_servers_base_path(monkeypatch):
    """Served under a path (``server.baseUrlPath``, a proxy's prefix), the file is fetched under it, as
    Streamlit's own download button builds its address."""
    added = []

    class Files:
        def add(self, content, mime, where, file_name=None, is_for_static_download=False):
            added.append((content, mime, where, file_name, is_for_static_download))
            return "/media/abc.csv"

    monkeypatch.setattr(lc.runtime, "exists", lambda: True)
    monkeypatch.setattr(lc.runtime, "get_instance", lambda: type("Runtime", (), {"media_file_mgr": Files()})())
    for base, url in (("", "/media/abc.csv"), ("/studio/", "/studio/media/abc.csv"), ("a/b", "/a/b/media/abc.csv")):
        monkeypatch.setattr(lc.st, "get_option", lambda name, base=base: base)
        assert lc.media_url(b"a,b\n", "text/csv", "t.csv", "k:choice:t.csv") == url
    assert added[0] == (b"a,b\n", "text/csv", "k:choice:t.csv", "t.csv", True)


TEXT_AND_LINE = textwrap.dedent('''
    import streamlit as st
    from structext_core.ui import light_choice as lc

    seen = st.session_state.setdefault("seen", [])
    found = lc.text("Search", key="find", max_chars=5, placeholder="a word", on_change=lambda: seen.append("find"))
    line = lc.number("Line", key="line", min_value=1, max_value=9, optional=True, placeholder="Line",
                     on_change=lambda: seen.append("line"))
    st.write(f"find {found!r}; line {line!r}; changes {','.join(seen)}")
''')


def test_a_text_box_and_an_empty_number_box_keep_what_the_browser_sends_within_bounds():
    """The question page's reference tools (issue 46): a line of text (at most its length), a line number that
    starts empty and may be emptied again; anything else is ignored, and a change calls its callback once."""
    at = AppTest.from_string(TEXT_AND_LINE, default_timeout=30).run()
    assert said(at) == "find ''; line None; changes"  # (Markdown drops the trailing space)
    assert choices(at)["find"]["max_chars"] == 5 and choices(at)["line"]["optional"] is True
    send(at, "find", "word")
    send(at, "line", 4)
    assert said(at) == "find 'word'; line 4; changes find,line"
    for forged in ("longer", 7, None, ["w"]):  # over five characters; not text
        send(at, "find", forged)
    for forged in (0, 10, 2.5, float("nan"), "3", True):  # out of bounds; not a whole number
        send(at, "line", forged)
    assert not at.exception and said(at) == "find 'word'; line 4; changes find,line"
    send(at, "line", None)  # emptied
    send(at, "line", None)  # empty already: no change
    assert said(at) == "find 'word'; line None; changes find,line,line"
