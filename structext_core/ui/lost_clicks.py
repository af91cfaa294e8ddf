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

import collections
import time
from collections.abc import Callable

from streamlit.logger import get_logger
from streamlit.proto.ClientState_pb2 import ClientState
from streamlit.runtime.app_session import AppSession

from structext_core.studio import run_gate

_LOGGER = get_logger(__name__)

#: The last rerun requests of this process, written to the server's log with every thread's stack on
#: ``kill -USR1`` (``run_gate``; the journeys' failure report sends it): whether a click a page seems to have
#: lost reached the server, and how it ran.
_RECENT: collections.deque = collections.deque(maxlen=40)
#: The kinds of a widget's value that say it was clicked or sent something (a button, a form, an element's event).
_TRIGGERS = ("trigger_value", "string_trigger_value", "json_trigger_value")
#: What one request may leave in the list: a widget's name cut to this many characters, this many widgets named
#: (the browser writes the ids: a forged request must not fill the server's memory or log).
NAME_CHARS, NAMES = 80, 6


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


def _widget_name(widget_id: str) -> str:
    """A widget as its id names it: its key (``$$ID-<hash>-<key>``), else the start of its hash."""
    head = widget_id[:NAME_CHARS + 60]  # its prefix and hash take 45 characters
    parts = head.split("-", 2)
    if len(parts) < 3:
        name = head
    elif parts[2] in ("", "None"):
        name = f"#{parts[1][:8]}"
    else:
        name = parts[2]
    return name if len(name) <= NAME_CHARS else name[:NAME_CHARS - 1] + "…"


def record(session_id: str, sent: ClientState | None, ran: ClientState | None) -> None:
    """Keep one rerun request for :func:`recent_requests`: the session, what it asked for (the whole app or a
    fragment, a timer's or a person's), the widgets that sent something and how it ran."""
    if sent is None:
        asked = "the whole app (no state)"
    else:
        asked = f"fragment {sent.fragment_id[:12]}" if sent.fragment_id else "the whole app"
        if sent.is_auto_rerun:
            asked += ", a timer's"
        if ran is not None and sent.fragment_id and not ran.fragment_id:
            asked += ", no longer held: ran the whole app"
        triggers = [w.id for w in sent.widget_states.widgets if w.WhichOneof("value") in _TRIGGERS]
        named = ", ".join(_widget_name(widget_id) for widget_id in triggers[:NAMES])
        more = f" and {len(triggers) - NAMES:,} more" if len(triggers) > NAMES else ""
        asked += f"; sent by {named}{more}" if triggers else ""
    _RECENT.append((time.time(), session_id[:8], asked))


def recent_requests() -> str:
    """The rerun requests kept by :func:`record`, oldest first, one a line (UTC)."""
    lines = [f"{time.strftime('%H:%M:%S', time.gmtime(at))}.{int(at * 1000) % 1000:03d} session {session}: {asked}"
             for at, session, asked in list(_RECENT)]
    return f"the last {len(lines)} rerun requests:\n" + "".join(f"  {line}\n" for line in lines)


def install() -> None:
    """Make every app session of this process rerun the whole app for a click in a fragment it no
    longer holds (:func:`rerun_state`), keeping each request for the server's log (:func:`record`).
    Installing again changes nothing."""
    original = AppSession.request_rerun
    if getattr(original, "keeps_lost_clicks", False):
        return

    def request_rerun(self: AppSession, client_state: ClientState | None) -> None:
        ran = rerun_state(client_state, self.has_fragment)
        record(getattr(self, "id", "?"), client_state, ran)
        return original(self, ran)

    request_rerun.keeps_lost_clicks = True
    request_rerun.__doc__ = original.__doc__
    AppSession.request_rerun = request_rerun
    run_gate.add_report(recent_requests)
