"""A click in a fragment Streamlit no longer holds runs the whole app (structext_core/ui/lost_clicks.py)."""

from __future__ import annotations

import pytest
from streamlit.proto.ClientState_pb2 import ClientState
from streamlit.runtime.app_session import AppSession

from structext_core.ui import lost_clicks

HELD = "held-fragment"


def click_in(fragment_id: str, *, auto: bool = False) -> ClientState:
    """What the browser sends for a click on a button drawn by ``fragment_id`` (its trigger set)."""
    state = ClientState(fragment_id=fragment_id, is_auto_rerun=auto, page_script_hash="studies")
    widget = state.widget_states.widgets.add()
    widget.id = "$$ID-5e1f0c2a9b7d-pv_rule_start"
    widget.trigger_value = True
    return state


def holds(fragment_id: str) -> bool:
    return fragment_id == HELD


def test_a_click_in_a_fragment_gone_runs_the_whole_app_with_the_click():
    sent = click_in("gone")
    state = lost_clicks.rerun_state(sent, holds)
    assert state.fragment_id == ""  # the whole app
    assert [(w.id, w.trigger_value) for w in state.widget_states.widgets] == [("$$ID-5e1f0c2a9b7d-pv_rule_start", True)]
    assert state.page_script_hash == "studies" and not state.is_auto_rerun
    assert sent.fragment_id == "gone"  # what the browser sent is left as it was


@pytest.mark.parametrize("sent", [click_in(HELD), click_in("gone", auto=True), ClientState(), None],
                         ids=["fragment held", "timer of a fragment gone", "whole app", "no client state"])
def test_every_other_rerun_goes_as_it_was_sent(sent):
    assert lost_clicks.rerun_state(sent, holds) is sent


def test_installed_once_every_session_reruns_the_whole_app_for_a_lost_click(monkeypatch):
    asked = []
    monkeypatch.setattr(AppSession, "request_rerun", lambda session, state: asked.append(state))
    lost_clicks.install()
    lost_clicks.install()  # again: still one layer

    class Session:  # what the patched method reads of its session: whether it holds a fragment
        has_fragment = staticmethod(holds)

    AppSession.request_rerun(Session(), click_in("gone"))
    AppSession.request_rerun(Session(), click_in(HELD))
    assert [state.fragment_id for state in asked] == ["", HELD]


def test_each_request_is_kept_for_the_servers_log(monkeypatch):
    """Whether a click a page seems to have lost reached the server: the last requests, with the widgets that
    sent something (by key), written with the stacks on ``kill -USR1`` (run_gate)."""
    monkeypatch.setattr(lost_clicks, "_RECENT", lost_clicks.collections.deque(maxlen=2))
    form = ClientState()
    submit, typed = form.widget_states.widgets.add(), form.widget_states.widgets.add()
    submit.id, submit.trigger_value = "$$ID-0a1b2c3d4e5f-FormSubmitter:sl_create_3-Make the link", True
    typed.id, typed.int_value = "$$ID-99aa88bb77cc-sl_places", 5  # a value, not a click: not named
    unkeyed = form.widget_states.widgets.add()
    unkeyed.id, unkeyed.json_trigger_value = "$$ID-77dd66ee55ff44-None", '{"part": 1}'  # no key: its hash
    lost_clicks.record("f00dcafe-session", click_in("gone"), lost_clicks.rerun_state(click_in("gone"), holds))
    lost_clicks.record("f00dcafe-session", form, form)
    lines = lost_clicks.recent_requests().splitlines()
    assert lines[0] == "the last 2 rerun requests:"
    assert lines[1].endswith("session f00dcafe: fragment gone, no longer held: ran the whole app; sent by pv_rule_start")
    assert lines[2].endswith("session f00dcafe: the whole app; sent by FormSubmitter:sl_create_3-Make the link, #77dd66ee")
    lost_clicks.record("f00dcafe-session", click_in(HELD, auto=True), None)  # the oldest goes
    assert [line.split(": ", 1)[1] for line in lost_clicks.recent_requests().splitlines()[1:]] == [
        "the whole app; sent by FormSubmitter:sl_create_3-Make the link, #77dd66ee",
        "fragment held-fragmen, a timer's; sent by pv_rule_start"]


def test_a_forged_request_leaves_a_bounded_line(monkeypatch):
    """The browser writes the ids: a million widgets, or one id of a megabyte, leave one short line."""
    monkeypatch.setattr(lost_clicks, "_RECENT", lost_clicks.collections.deque(maxlen=2))
    forged = ClientState(fragment_id="f" * 1_000_000)
    for n in range(20_000):
        widget = forged.widget_states.widgets.add()
        widget.id, widget.trigger_value = f"$$ID-{n:040x}-k{n}", True
    forged.widget_states.widgets[0].id = "$$ID-" + "0" * 40 + "-" + "x" * 1_000_000
    lost_clicks.record("s" * 1_000_000, forged, forged)
    line = lost_clicks.recent_requests().splitlines()[1]
    assert len(line) < 1_000
    assert line.endswith(f"session ssssssss: fragment ffffffffffff; sent by {'x' * (lost_clicks.NAME_CHARS - 1)}…, "
                         f"k1, k2, k3, k4, k5 and {20_000 - lost_clicks.NAMES:,} more")
