"""A minimal Streamlit websocket client that speaks the browser's protocol.

It lets a benchmark put dozens of simulated people on one running ``streamlit run app.py``
without dozens of browsers competing with the server for two cores. It does what the
frontend does, and nothing more: it opens ``/_stcore/stream``, asks for script runs with the
widget values a person has set (``BackMsg.rerun_script``), answers ``auto_rerun`` requests of
fragments (``@st.fragment(run_every=...)``) at their interval, and reads the elements the
server sends back (``ForwardMsg``). A run is over when ``script_finished`` arrives.

Only what the benchmarks need is modelled: text inputs and areas, number inputs, radio
choices, buttons and form submitters, the navigation (the page a run drew, and a page switched to
by the server), the address's query string (sent with every run as the browser does: the one it was
opened with, then as the app changes it: ``st.query_params``, ``st.switch_page``), fragments, and components v2 (their data, and a state value
sent as the browser's script would: :meth:`StreamlitClient.set_component_state`, e.g. the
question page's clock heartbeat), the URLs of the images and download buttons drawn (a
deferred download is asked for as the browser does: :meth:`StreamlitClient.download_url`; so is a file
of a light download row, ``structext_core/ui/light_choice.py``, by its button's event).
File uploads are not.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from dataclasses import dataclass, field

import websockets
from streamlit.components.v2.bidi_component.main import _make_trigger_id
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

WIDGET_TYPES = {"text_input", "text_area", "number_input", "button", "selectbox", "checkbox", "toggle", "radio"}
#: The component of a typed answer's screen drawn as one element (structext_core/ui/light_answer.py's COMPONENT_NAME).
LIGHT_ANSWER = "structext_light_answer"


@dataclass
class Widget:
    id: str
    kind: str
    label: str
    form_id: str = ""
    fragment_id: str = ""  # the fragment that drew it ("" for the page)
    options: tuple[str, ...] = ()  # a radio's or select box's options, as shown


@dataclass
class Component:
    """A components-v2 element as last drawn: its widget id, its fragment and its data."""

    id: str
    fragment_id: str
    data: object = None
    part_id: str | None = None  # a part of a panel (structext_core/ui/light_panel.py): its id there


@dataclass
class RunResult:
    seconds: float
    texts: list[str] = field(default_factory=list)
    status: str = ""
    drawn: set[str] = field(default_factory=set)  # the ids of the widgets this run drew


class StreamlitClient:
    """One browser tab's worth of protocol: ``await client.connect()``, then ``run``/``click``."""

    def __init__(self, base_url: str, cookies: dict[str, str] | None = None):
        self.base_url = base_url.rstrip("/")
        self.cookies = cookies or {}
        self.ws = None
        self.widgets: dict[str, Widget] = {}  # by label, the latest element with that label
        self.values: dict[str, WidgetState] = {}  # by widget id: what this "person" has set
        self.pages: dict[str, str] = {}  # page name -> page_script_hash
        self.page_hash = ""  # the page the server last drew (its navigation says), asked for again by each run
        self.page_name = ""  # the address's path, sent until the server has said which page it is (a first visit)
        self.query_string = ""  # the address's query string, as the app last set it
        self.fragments: dict[str, float] = {}  # fragment id -> interval (s)
        self.delta_fragments: list[str] = []  # the fragment of each delta received ("" for the page)
        self.components: dict[str, Component] = {}  # by component name, the latest drawn
        self.images: list[str] = []  # the URLs of the images drawn (/media/...), in order
        self.downloads: dict[str, tuple[str, str]] = {}  # by label: (url, deferred file id), one of them set
        # a light download row's buttons by label: (the row's key, the file's name); the rows by key
        self.light_downloads: dict[str, tuple[str, str]] = {}
        self.light_rows: dict[str, Component] = {}
        # a light answer's box (structext_core/ui/light_answer.py) by element id: (the version shown, its text)
        self.answer_texts: dict[str, tuple[int, str]] = {}
        self._operations: dict[str, asyncio.Future] = {}  # backend operations asked for, by request id
        self._operation_ids = itertools.count(1)
        self.session_id = ""  # the server's id of this session (new_session), which backend operations name
        self._reader: asyncio.Task | None = None
        self._finished = asyncio.Event()
        self._texts: list[str] = []
        self._drawn: set[str] = set()  # widget ids drawn by the current run
        self._status = ""
        self._lock = asyncio.Lock()  # one run at a time, as the frontend does
        self._fragment_tasks: dict[str, asyncio.Task] = {}
        self._auto_this_run: set[str] | None = None  # fragments with a timer drawn by the current whole-app run
        self.fragment_latencies: list[float] = []
        self.fragment_latencies_by_interval: dict[float | str, list[float]] = {}  # interval (s) -> run times
        self.errors: list[str] = []

    # ------------------------------------------------------------------ connection
    async def connect(self) -> None:
        host = self.base_url.split("://", 1)[1]
        headers = {}
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        self.ws = await websockets.connect(
            f"ws://{host}/_stcore/stream", subprotocols=["streamlit"], origin=self.base_url,
            max_size=None, additional_headers=headers or None, open_timeout=30,
        )
        self._reader = asyncio.create_task(self._read_loop())

    @property
    def handshake_headers(self):
        """The headers of the server's answer to the websocket handshake (a proxy's among them)."""
        return self.ws.response.headers

    async def close(self) -> None:
        for task in self._fragment_tasks.values():
            task.cancel()
        if self._reader:
            self._reader.cancel()
        if self.ws is not None:
            await self.ws.close()

    async def _read_loop(self) -> None:
        try:
            async for data in self.ws:
                message = ForwardMsg()
                message.ParseFromString(data)
                self._handle(message)
        except (asyncio.CancelledError, websockets.ConnectionClosed):
            pass

    def _handle(self, message: ForwardMsg) -> None:
        kind = message.WhichOneof("type")
        if kind == "navigation":
            for page in message.navigation.app_pages:
                self.pages[page.page_name] = page.page_script_hash
            if message.navigation.page_script_hash:  # the page this run draws (after a switch_page too)
                self.page_hash = message.navigation.page_script_hash
                self.page_name = ""
        elif kind == "page_info_changed":  # st.query_params changed: the browser's address changes with it
            self.query_string = message.page_info_changed.query_string
        elif kind == "delta":
            self._handle_delta(message.delta)
        elif kind == "auto_rerun":
            fragment, interval = message.auto_rerun.fragment_id, message.auto_rerun.interval
            if fragment and self._auto_this_run is not None:
                self._auto_this_run.add(fragment)
            if fragment and fragment not in self._fragment_tasks:
                self.fragments[fragment] = interval
                self._fragment_tasks[fragment] = asyncio.create_task(self._auto_rerun(fragment, interval))
        elif kind == "new_session":
            self.session_id = message.new_session.initialize.session_id
            if not message.metadata.run.fragment_ids:  # a run of the whole app: it says which timers stay
                self._auto_this_run = set()
        elif kind == "backend_operation_response":
            future = self._operations.pop(message.backend_operation_response.request_id, None)
            if future is not None and not future.done():
                future.set_result(message.backend_operation_response)
        elif kind == "script_finished":
            # A run that ended in st.rerun() is followed by the rerun: wait for that one.
            if message.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                if not message.metadata.run.fragment_ids and self._auto_this_run is not None:
                    self._stop_timers_not_drawn(self._auto_this_run)
                    self._auto_this_run = None
                self._status = ForwardMsg.ScriptFinishedStatus.Name(message.script_finished)
                self._finished.set()

    def _stop_timers_not_drawn(self, kept: set[str]) -> None:
        """As the browser does after a run of the whole app: the timers of fragments that run did not
        draw stop (a screen replaced by another). Left running, each asked the server for a fragment it
        no longer holds, which it drops without an answer, and the client waited out the run's timeout
        holding the lock every run needs (60 s in the stale-fragment journey)."""
        for fragment in [f for f in self._fragment_tasks if f not in kept]:
            self._fragment_tasks.pop(fragment).cancel()
            self.fragments.pop(fragment, None)

    def _handle_delta(self, delta) -> None:
        self.delta_fragments.append(delta.fragment_id)
        if delta.WhichOneof("type") != "new_element":
            return
        element = delta.new_element
        kind = element.WhichOneof("type")
        inner = getattr(element, kind)
        if kind == "bidi_component":
            data = json.loads(inner.json) if inner.json else None
            self.components[inner.component_name] = Component(inner.id, delta.fragment_id, data)
            self._drawn.add(inner.id)
            if inner.component_name.endswith(LIGHT_ANSWER) and isinstance(data, dict):
                self._light_answer(inner.id, delta.fragment_id, data)
                return
            # a light download row alone, or as a part of a panel (the parts' data are the rows' own)
            parts = [(None, data)] if not (isinstance(data, dict) and "parts" in data) else [
                (part["id"], part["data"]) for part in data["parts"] if part["kind"] == "choice"]
            for part_id, row in parts:
                if isinstance(row, dict) and row.get("kind") == "downloads":
                    self.light_rows[row["key"]] = Component(inner.id, delta.fragment_id, row, part_id)
                    for name, label in row["options"]:
                        self.downloads[label] = ("", "")
                        self.light_downloads[label] = (row["key"], name)
            return
        if kind == "imgs":
            self.images.extend(image.url for image in inner.imgs)
            return
        if kind == "download_button":
            self.downloads[inner.label] = (inner.url, inner.deferred_file_id)
        if kind in WIDGET_TYPES:
            self.widgets[inner.label] = Widget(inner.id, kind, inner.label, getattr(inner, "form_id", ""),
                                               delta.fragment_id, tuple(getattr(inner, "options", ())))
            self._drawn.add(inner.id)
        elif kind == "exception":
            self.errors.append(inner.message)
        for attribute in ("body", "text", "label"):
            value = getattr(inner, attribute, None)
            if isinstance(value, str) and value:
                self._texts.append(value)
                break

    def _light_answer(self, element_id: str, fragment_id: str, data: dict) -> None:
        """A light answer element: its box and buttons as widgets by their labels; the box keeps what was typed
        in it until the server writes it anew (a new version), as the browser's does."""
        self.widgets[data["label"]] = Widget(element_id, "light_answer", data["label"], "", fragment_id)
        shown = self.answer_texts.get(element_id)
        if shown is None or shown[0] != data["version"]:
            self.answer_texts[element_id] = (data["version"], data["text"])
        for button in data["buttons"]:
            self.widgets[button["label"]] = Widget(element_id, "light_answer_button", button["label"], "", fragment_id,
                                                   (button["name"],))

    # ------------------------------------------------------------------ runs
    async def run(self, fragment_id: str = "", triggers: tuple[Widget, ...] = (), timeout: float = 60,
                  auto: bool | None = None) -> RunResult:
        """Ask for one script run (or one fragment run) and wait until it has finished."""
        async with self._lock:
            message = self._rerun_message(fragment_id, triggers, auto)
            self._finished.clear()
            self._texts = []
            self._drawn = set()
            started = time.perf_counter()
            await self.ws.send(message.SerializeToString())
            await asyncio.wait_for(self._finished.wait(), timeout)
            if not fragment_id:  # as the browser does, forget the values of widgets no longer drawn
                self.values = {key: value for key, value in self.values.items() if key in self._drawn}
            return RunResult(time.perf_counter() - started, list(self._texts), self._status, set(self._drawn))

    def _rerun_message(self, fragment_id: str, triggers: tuple[Widget, ...], auto: bool | None) -> BackMsg:
        message = BackMsg()
        state = message.rerun_script
        state.query_string = self.query_string
        state.page_script_hash = self.page_hash
        state.page_name = self.page_name
        state.fragment_id = fragment_id
        state.is_auto_rerun = (bool(fragment_id) and not triggers) if auto is None else auto
        for value in self.values.values():
            state.widget_states.widgets.append(value)
        for widget in triggers:
            trigger = state.widget_states.widgets.add()
            if widget.kind == "light_answer_button":  # the box's text goes with the click, as the browser sends it
                trigger.id = _make_trigger_id(widget.id, "events")
                value = {"action": widget.options[0], "text": self.answer_texts.get(widget.id, (0, ""))[1]}
                trigger.json_trigger_value = json.dumps([{"event": "action", "value": value}])
                continue
            trigger.id = widget.id
            trigger.trigger_value = True
        return message

    def _set_component_value(self, name: str, state: dict) -> Component:
        """The component's new state, sent with every run from now on; the component."""
        component = self.components[name]
        value = WidgetState()
        value.id = component.id
        value.json_value = json.dumps(state)
        self.values[component.id] = value
        return component

    async def send_component_state(self, name: str, state: dict) -> None:
        """As :meth:`set_component_state`, without waiting for the run: the server may ignore
        the request (a fragment it no longer holds) and then sends nothing back."""
        component = self._set_component_value(name, state)
        async with self._lock:
            await self.ws.send(self._rerun_message(component.fragment_id, (), False).SerializeToString())

    async def _auto_rerun(self, fragment_id: str, interval: float) -> None:
        while True:
            await asyncio.sleep(interval)
            try:
                result = await self.run(fragment_id=fragment_id)
                self.fragment_latencies.append(result.seconds)
                self.fragment_latencies_by_interval.setdefault(interval, []).append(result.seconds)
            except (asyncio.TimeoutError, websockets.ConnectionClosed) as error:
                self.errors.append(f"fragment run: {error!r}")
                return

    async def open_page(self, name: str) -> RunResult:
        self.page_hash = self.pages[name]
        self.values.clear()
        return await self.run()

    async def open_address(self, path_and_query: str, timeout: float = 60) -> RunResult:
        """The first run of a tab opened at an address of the app (``/join?join=...&PROLIFIC_PID=...``),
        as a browser's first run asks for it: the page by its path, the query string as it is."""
        path, _, query = path_and_query.partition("?")
        self.page_hash, self.page_name, self.query_string = "", path.strip("/"), query
        self.values.clear()
        return await self.run(timeout=timeout)

    def widget(self, label: str) -> Widget:
        try:
            return self.widgets[label]
        except KeyError:
            raise KeyError(f"no widget labelled {label!r}; have {sorted(self.widgets)}") from None

    def drew(self, result: RunResult, label: str) -> bool:
        """Whether the run of ``result`` drew the widget labelled ``label`` (not only an earlier run)."""
        widget = self.widgets.get(label)
        return widget is not None and widget.id in result.drawn

    def type_text(self, label: str, text: str) -> None:
        """Set a text input or area, as typing and leaving the box does (a light answer's box: kept for its
        buttons' next click)."""
        widget = self.widget(label)
        if widget.kind == "light_answer":
            self.answer_texts[widget.id] = (self.answer_texts.get(widget.id, (0, ""))[0], text)
            return
        value = WidgetState()
        value.id = widget.id
        value.string_value = text
        self.values[widget.id] = value

    def choose(self, label: str, option: str) -> None:
        """Pick ``option`` of a radio (as clicking it does; sent with the next run)."""
        widget = self.widget(label)
        if option not in widget.options:
            raise KeyError(f"{label!r} has no option {option!r}; it has {list(widget.options)}")
        value = WidgetState()
        value.id = widget.id
        value.string_value = option
        self.values[widget.id] = value

    def type_number(self, label: str, number: float) -> None:
        """Set a number input, as typing a number and leaving the box does."""
        widget = self.widget(label)
        value = WidgetState()
        value.id = widget.id
        value.double_value = float(number)
        self.values[widget.id] = value

    async def set_component_state(self, name: str, state: dict, timeout: float = 60) -> RunResult:
        """Set a components-v2 element's state (``{"beat": {...}}``), as its script's
        ``setStateValue`` does: a run of the component's fragment (or of the page)."""
        component = self._set_component_value(name, state)
        return await self.run(fragment_id=component.fragment_id, timeout=timeout, auto=False)

    async def download_url(self, label: str, timeout: float = 60) -> str:
        """The URL of the file behind the download button ``label``: its own, or for a button whose
        file is made on click (``data=`` a callable), the one the server answers a deferred-file
        request with (the file is made in the process that holds this session)."""
        if label in self.light_downloads:
            return await self._light_download_url(label, timeout)
        url, deferred = self.downloads[label]
        if url or not deferred:
            return url
        message = BackMsg()
        request_id = f"download-{next(self._operation_ids)}"
        message.backend_operation_request.request_id = request_id
        message.backend_operation_request.session_id = self.session_id
        message.backend_operation_request.deferred_file.file_id = deferred
        future = asyncio.get_running_loop().create_future()
        self._operations[request_id] = future
        await self.ws.send(message.SerializeToString())
        response = await asyncio.wait_for(future, timeout)
        if response.error_msg:
            raise RuntimeError(f"download {label!r}: {response.error_msg}")
        return response.deferred_file.url

    async def _light_download_url(self, label: str, timeout: float) -> str:
        """As the browser does for a light download button: its event (the file's name), one run of the
        row's fragment or page, and the URL the row is then sent to save."""
        key, name = self.light_downloads[label]
        row = self.light_rows[key]
        async with self._lock:
            message = self._rerun_message(row.fragment_id, (), False)
            trigger = message.rerun_script.widget_states.widgets.add()
            trigger.id = _make_trigger_id(row.id, "events")
            event = ({"event": "choose", "value": name} if row.part_id is None else
                     {"event": "part", "value": {"id": row.part_id, "value": name}})
            trigger.json_trigger_value = json.dumps([event])
            self._finished.clear()
            await self.ws.send(message.SerializeToString())
            await asyncio.wait_for(self._finished.wait(), timeout)
        file = (self.light_rows[key].data or {}).get("file") or {}
        if not file.get("url"):
            raise RuntimeError(f"download {label!r}: the row was sent no file ({self.errors[-1:] or 'no error'})")
        return file["url"]

    async def click(self, label: str) -> RunResult:
        """Press a button or form submit button (a trigger, sent once)."""
        widget = self.widget(label)
        # As the browser does: a button drawn by a fragment asks for a run of that fragment.
        return await self.run(fragment_id=widget.fragment_id, triggers=(widget,))
