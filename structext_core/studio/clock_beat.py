"""The honest clock's heartbeat, heard without a page run (issue 23).

The time on screen ticks in the browser; every ``heartbeat_seconds`` the page tells the server
it is still there. Sent as a Streamlit component value, each heartbeat costs a fragment run on
the server (about 13 ms of CPU: the script-run machinery, a connection, the element sent
back), and at 300 annotators those runs fill a core. So the page posts its heartbeat to a
small route beside the app instead (``server.py`` mounts it at :data:`BEAT_PATH`), which
books it with the same functions as the fragment did (:func:`study.heartbeat` for a study's
question; a benchmark's own timed work through the kinds its member declares, ``CLOCK_BEATS`` of
:mod:`structext_core.protocol`; all of them :func:`structext_core.studio.clock.beat`) and answers
with the clock's state and time, in about a millisecond. Only when the answer says the page must change (paused as idle, answered or
taken over in another tab, logged out) does the page fall back to a run of its fragment,
which redraws it. A page served by a plain ``streamlit run app.py`` (no route: 404) or a
session without a log-in token (Streamlit's AppTest) keeps the fragment heartbeat.

The route trusts nothing it is sent: the body is bounded and checked field by field, and it
speaks for a user only with a pass the page got from its own run
(:func:`accounts.session_pass`): signed for one clock kind, one item and one tab, worth
nothing once the log-in session ends.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass

import sqlite_utils
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from structext_core import protocol
from structext_core.studio import accounts, storage
from structext_core.studio import study as study_mod
from structext_core.studio.study.store import StudyError

#: Where ``server.py`` mounts the route (outside Streamlit's reserved ``/_stcore/`` and others).
BEAT_PATH = "/api/clock/beat"
#: A heartbeat's body is about 200 bytes; anything much larger is refused unread.
MAX_BODY_BYTES = 2_048
MAX_ITEM_CHARS = 80
MAX_TAB_CHARS = 64


@dataclass(frozen=True)
class BeatReply:
    """The route's answer: an HTTP status and a JSON body."""

    status: int
    body: dict


#: A clock kind: books a heartbeat of ``user_id`` for ``item`` in ``tab`` and returns the
#: clock's state and active seconds. Items are validated by :func:`_item` first.
Booker = Callable[[sqlite_utils.Database, int, "int | str", str, bool], tuple[str, float]]


def _study_beat(db: sqlite_utils.Database, user_id: int, item: int | str, tab: str, visible: bool) -> tuple[str, float]:
    status = study_mod.heartbeat(db, user_id, int(item), tab, visible=visible, settings=study_mod.clock_settings())
    return status.state, status.seconds


#: The clock the shared study machinery runs: a study's question, its item the assignment's id.
SHARED_KINDS: dict[str, tuple[Booker, bool]] = {"study": (_study_beat, True)}


def kinds() -> dict[str, tuple[Booker, bool]]:
    """The clocks whose heartbeats the route books: kind -> (booker, whether the item is a number):
    the study's, then each benchmark's own (``CLOCK_BEATS`` of its member)."""
    found = dict(SHARED_KINDS)
    for kind, (target, numeric) in protocol.declared("CLOCK_BEATS").items():
        if kind in found:
            raise protocol.RegistryError(f"the clock kind {kind!r} is the studio's own; a benchmark may not declare it")
        found[kind] = (protocol.resolve(target), numeric)
    return found


def scope(kind: str, item: int | str, tab: str) -> str:
    """What a page's pass is signed for: one clock kind, one item, one tab."""
    return f"beat|{kind}|{item}|{tab}"


def page_pass(db: sqlite_utils.Database, session_token: str | None, kind: str, item: int | str,
              tab: str) -> str | None:
    """The pass a page puts in its clock's data, or None without a log-in token (AppTest)."""
    if not session_token:
        return None
    return accounts.session_pass(db, session_token, scope(kind, item, tab))


def _item(kind: str, value: object) -> int | str | None:
    numeric = kinds()[kind][1]
    if numeric:
        return value if isinstance(value, int) and not isinstance(value, bool) and 0 < value < 2**62 else None
    if isinstance(value, str) and 0 < len(value) <= MAX_ITEM_CHARS and value.isascii() and value.isprintable():
        return value
    return None


def _refused(status: int, why: str) -> BeatReply:
    return BeatReply(status, {"error": why})


def parse(body: bytes) -> tuple[str, int | str, str, bool, object] | BeatReply:
    """The fields of a heartbeat's body, each checked, or the reply that refuses it."""
    if len(body) > MAX_BODY_BYTES:
        return _refused(413, f"a heartbeat is at most {MAX_BODY_BYTES} bytes")
    try:
        data = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return _refused(400, "the body is not JSON")
    if not isinstance(data, dict):
        return _refused(400, "the body is not a JSON object")
    kind = data.get("kind")
    known = kinds()
    if not isinstance(kind, str) or kind not in known:
        return _refused(400, f"kind must be one of {', '.join(known)}")
    item = _item(kind, data.get("item"))
    if item is None:
        return _refused(400, "item is missing or not an item of this kind")
    tab = data.get("tab")
    if not isinstance(tab, str) or not 0 < len(tab) <= MAX_TAB_CHARS or not tab.isascii() or not tab.isalnum():
        return _refused(400, "tab is missing or not a tab id")
    visible = data.get("visible")
    if not isinstance(visible, bool):
        return _refused(400, "visible must be true or false")
    return kind, item, tab, visible, data.get("pass")


def answer(db: sqlite_utils.Database, body: bytes) -> BeatReply:
    """Book one heartbeat posted to the route. 200 with ``state`` and ``seconds`` (the
    clock's active time as of now); 400/413 for a body that is not a heartbeat, 401 when the
    pass is not valid for it (or its session ended), 404 when the item is not the user's."""
    parsed = parse(body)
    if isinstance(parsed, BeatReply):
        return parsed
    kind, item, tab, visible, given_pass = parsed
    check = accounts.check_session_pass(db, given_pass, scope(kind, item, tab))
    if check.user is None:
        return _refused(401, f"not logged in ({check.reason})")
    booker = kinds()[kind][0]
    try:
        state, seconds = booker(db, check.user["id"], item, tab, visible)
    except StudyError as error:
        return _refused(404, str(error))
    return BeatReply(200, {"state": state, "seconds": round(float(seconds), 3)})


# ---------------------------------------------------------------- the route (server.py)

_local = threading.local()


def _thread_db() -> sqlite_utils.Database:
    """This worker thread's connection: the route runs in Starlette's thread pool (at most
    its 40 threads), each keeping one connection for its life, so a heartbeat opens none."""
    path = str(storage.default_db_path())
    if getattr(_local, "path", None) != path:
        if getattr(_local, "db", None) is not None:
            _local.db.conn.close()
        _local.db, _local.path = storage.open_db(path), path
    return _local.db


def _answer_in_thread(body: bytes) -> BeatReply:
    try:
        return answer(_thread_db(), body)
    except sqlite3.Error:
        _local.path = None  # a broken connection is not kept
        return _refused(503, "the database is busy; the page tries again")


async def endpoint(request: Request) -> JSONResponse:
    """The route: a POST of one heartbeat, its body read up to :data:`MAX_BODY_BYTES`."""
    declared = request.headers.get("content-length", "")
    if declared and (not declared.isdigit() or int(declared) > MAX_BODY_BYTES):
        reply = _refused(413, f"a heartbeat is at most {MAX_BODY_BYTES} bytes")
    else:
        body = b""
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_BODY_BYTES:
                break
        reply = await run_in_threadpool(_answer_in_thread, body)
    return JSONResponse(reply.body, status_code=reply.status, headers={"Cache-Control": "no-store"})


def routes() -> list[Route]:
    """What ``server.py`` mounts beside the app."""
    return [Route(BEAT_PATH, endpoint, methods=["POST"])]
