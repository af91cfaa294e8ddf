"""structext_core/ui/light_form.py without a browser: what a form declares, and what the server accepts
back from it (the browser's checks are a convenience; these are the ones that hold)."""

import pytest

from structext_core.ui import light_form as lf

ROWS = [
    lf.Text("name", "Campaign name", placeholder="e.g. <b>Real</b>", max_chars=20),
    (lf.Number("n", "Number of samples", 928, min_value=1, max_value=3712),
     lf.Number("share", "Share", 0.5, min_value=0.0, max_value=1.0, step=0.05)),
    lf.Choices("people", "Annotators", {7: "ann<7>", 3: "ann3", 12: "ann12"}),
    lf.Choice("suite", "Suite", {"test": "Test", "test-hard": "Test-Hard"}, value="test"),
]


def test_the_browser_is_sent_the_fields_in_rows_with_options_as_text():
    data = lf.form_data("k", ROWS, "Create", generation=2, answers=5)
    assert [[f["name"] for f in row] for row in data["rows"]] == [["name"], ["n", "share"], ["people"], ["suite"]]
    people = data["rows"][2][0]
    assert people["options"] == [["7", "ann<7>"], ["3", "ann3"], ["12", "ann12"]] and people["value"] == []
    assert data["rows"][0][0]["placeholder"] == "e.g. <b>Real</b>"  # data: the browser writes it as text
    assert (data["submit"], data["generation"], data["answers"]) == ("Create", 2, 5)
    assert data["rows"][3][0]["value"] == "test"
    unset = lf.form_data("k", [lf.Choice("c", "C", {"a": "A", "b": "B"})], "Go")["rows"][0][0]
    assert unset["value"] == "a"  # as the browser's select box shows it: its first option
    with pytest.raises(ValueError, match="two fields named alike"):
        lf.form_data("k", [lf.Text("a", "A"), lf.Text("a", "B")], "Go")


def test_what_comes_back_is_typed_and_choices_keep_their_values_and_order():
    sent = {"name": "Pilot", "n": 58.0, "share": 0.25, "people": ["12", "7"], "suite": "test-hard"}
    assert lf.checked(ROWS, sent) == {"name": "Pilot", "n": 58, "share": 0.25, "people": [7, 12],
                                      "suite": "test-hard"}
    assert isinstance(lf.checked(ROWS, sent)["n"], int)


@pytest.mark.parametrize("change, message", [
    ({"name": "x" * 21}, "Campaign name: at most 20 characters of text."),
    ({"name": None}, "Campaign name: at most 20 characters of text."),
    ({"n": 0}, "Number of samples: 0 is not between 1 and 3,712."),
    ({"n": 4000}, "Number of samples: 4,000 is not between 1 and 3,712."),
    ({"n": 2.5}, "Number of samples: a whole number is needed, not 2.5."),
    ({"n": "58"}, "Number of samples: a number is needed."),
    ({"n": True}, "Number of samples: a number is needed."),
    ({"n": None}, "Number of samples: a number is needed."),
    ({"n": 10**400}, "Number of samples: this number is not between 1 and 3,712."),  # forged: no float holds it
    ({"n": float("inf")}, "Number of samples: a number is needed."),
    ({"share": 1.5}, "Share: 1.5 is not between 0.0 and 1.0."),
    ({"people": ["7", "99"]}, "Annotators: 1 of the chosen are not among the options"),
    ({"people": "7"}, "Annotators: the choice sent is not a list of names."),
    ({"people": [7]}, "Annotators: the choice sent is not a list of names."),
    ({"suite": "train"}, "Suite: choose one of the options."),
    ({"name": {"a": [[["deep"]]]}}, "Campaign name: at most 20 characters of text."),  # hostile: nested, huge
    ({"people": [[["7"]]]}, "Annotators: the choice sent is not a list of names."),
    ({"people": [str(n) for n in range(100_000)]}, "Annotators: 99,997 of the chosen are not among the options"),
    ({"name": "x" * 10_000_000}, "Campaign name: at most 20 characters of text."),
])
def test_what_no_browser_sends_is_refused_naming_the_field(change, message):
    sent = {"name": "Pilot", "n": 58, "share": 0.5, "people": [], "suite": "test", **change}
    with pytest.raises(lf.FormError) as refused:
        lf.checked(ROWS, sent)
    assert str(refused.value).startswith(message)
    with pytest.raises(lf.FormError, match="sent nothing readable"):
        lf.checked(ROWS, ["not", "a", "mapping"])


def test_the_script_writes_every_label_as_text_and_sends_only_on_the_button():
    """Labels, options, help and placeholders come from the lab's files and people's names: the browser
    never parses them as markup."""
    assert "innerHTML" not in lf.FORM_JS and "insertAdjacentHTML" not in lf.FORM_JS
    assert "outerHTML" not in lf.FORM_JS and "textContent" in lf.FORM_JS
    assert lf.FORM_JS.count("setTriggerValue(") == 1  # one event: the button's (or Enter's) submit


def test_a_number_with_one_bound_says_which():
    rows = [lf.Number("seed", "Seed", 0, min_value=0), lf.Number("cap", "Cap", 1, max_value=5)]
    with pytest.raises(lf.FormError, match=r"^Seed: -1, where it must be at least 0\.$"):
        lf.checked(rows, {"seed": -1, "cap": 1})
    with pytest.raises(lf.FormError, match=r"^Cap: 6, where it must be at most 5\.$"):
        lf.checked(rows, {"seed": 0, "cap": 6})


def test_choices_that_follow_a_select_box_offer_and_accept_that_choices_options():
    rows = [lf.Choice("set", "Data set", {"a": "A", "b": "B"}),
            lf.Choices("systems", "Systems", {}, follows="set", options_by={"a": {"x": "X", "y": "Y"}, "b": {"z": "Z"}})]
    declared = lf.form_data("k", rows, "Go")["rows"][1][0]
    assert declared["follows"] == "set"
    assert declared["options_by"] == [["a", [["x", "X"], ["y", "Y"]]], ["b", [["z", "Z"]]]]
    assert lf.checked(rows, {"set": "a", "systems": ["y", "x"]}) == {"set": "a", "systems": ["x", "y"]}
    with pytest.raises(lf.FormError, match="Systems: 1 of the chosen are not among the options"):
        lf.checked(rows, {"set": "b", "systems": ["x"]})  # x is a's, not b's
    with pytest.raises(ValueError, match="follows 'set', which is no select box above it"):
        lf.form_data("k", list(reversed(rows)), "Go")


def test_a_box_of_lines_and_a_check_box_are_declared_and_read_back():
    rows = [lf.Text("rule", "Rule", value="Answer alone.", lines=4, max_chars=50), lf.Check("tell", "Tell them", help="Off.")]
    declared = [f for row in lf.form_data("k", rows, "Go")["rows"] for f in row]
    assert [(f["kind"], f.get("lines"), f["value"]) for f in declared] == [("text", 4, "Answer alone."), ("check", None, False)]
    assert lf.checked(rows, {"rule": "Two\nlines", "tell": True}) == {"rule": "Two\nlines", "tell": True}
    for forged in ("true", 1, None, ["x"]):
        with pytest.raises(lf.FormError, match=r"^Tell them: yes or no \(a check box\) is needed\.$"):
            lf.checked(rows, {"rule": "x", "tell": forged})
    with pytest.raises(lf.FormError, match="^Rule: at most 50 characters"):
        lf.checked(rows, {"rule": "x" * 51, "tell": False})
