"""A click in a fragment is never lost: when Streamlit no longer holds the fragment a click was made in,
the click runs the whole app instead of being dropped.

What happens without this (Streamlit 1.67, ``AppSession.request_rerun``): a click, a tab, a form
submitted inside a fragment asks the server to rerun that fragment by its id. When a full run of the
app has just ended and a new run began before the old one's end was handled (a fragment that calls
``st.rerun()``, then a click soon after on a loaded machine), the session may no longer hold the
fragment whose elements the browser shows. Streamlit then logs "The fragment with id ... does not exist
anymore" and drops the request: the click does nothing, and every later click in that fragment is
dropped too until something outside it reruns the app. Seen on the Studies page: "Preview as an
annotator" and "I have read the rule: start" did nothing (the crowd journey, CI at 27640c5 and 2018c57).

With :func:`install` (``server.py``), such a request runs the whole app with the widget states the
browser sent, as a click outside any fragment does: the click's callback runs and the fragment is held
again. A timer's rerun of a fragment gone (``run_every``) is still dropped, as Streamlit does: a fragment
no longer drawn must not rerun the whole app every second.
"""

from __future__ import annotations

from collections.abc import Callable

from streamlit.logger import get_logger
from streamlit.proto.ClientState_pb2 import ClientState
from streamlit.runtime.app_session import AppSession

_LOGGER = get_logger(__name__)


def rerun_state(client_state: ClientState | None, holds: Callable[[str], bool]) -> ClientState | None:
    """The client state to rerun with: ``client_state`` as sent, or, for a person's rerun of a fragment
    the session no longer holds (``holds(fragment_id)`` false), a copy that runs the whole app."""
    if client_state is None or not client_state.fragment_id or client_state.is_auto_rerun:
        return client_state
    if holds(client_state.fragment_id):
        return client_state
    _LOGGER.info("Fragment %s is no longer held by this session: its rerun (a click, a form, a component's "
                 "state) runs the whole app.", client_state.fragment_id)
    whole = ClientState()
    whole.CopyFrom(client_state)
    whole.fragment_id = ""
    return whole


def install() -> None:
    """Make every app session of this process rerun the whole app for a click in a fragment it no
    longer holds (:func:`rerun_state`). Installing again changes nothing."""
    original = AppSession.request_rerun
    if getattr(original, "keeps_lost_clicks", False):
        return

    def request_rerun(self: AppSession, client_state: ClientState | None) -> None:
        return original(self, rerun_state(client_state, self.has_fragment))

    request_rerun.keeps_lost_clicks = True
    request_rerun.__doc__ = original.__doc__
    AppSession.request_rerun = request_rerun
