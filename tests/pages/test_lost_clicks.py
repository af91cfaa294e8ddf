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
    widget.id = "$$ID-pv_rule_start"
    widget.trigger_value = True
    return state


def holds(fragment_id: str) -> bool:
    return fragment_id == HELD


def test_a_click_in_a_fragment_gone_runs_the_whole_app_with_the_click():
    sent = click_in("gone")
    state = lost_clicks.rerun_state(sent, holds)
    assert state.fragment_id == ""  # the whole app
    assert [(w.id, w.trigger_value) for w in state.widget_states.widgets] == [("$$ID-pv_rule_start", True)]
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
