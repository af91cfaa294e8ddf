"""Shared fixtures: a worker pool for image checks, a small valid AIBench folder, and a JSON endpoint
on loopback for the commands that ask one."""
from __future__ import annotations

import io
import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from PIL import Image

from structext_core.studio import sandbox


@pytest.fixture(scope="module")
def pool():
    """One worker for the module's image checks, shut down afterwards."""
    workers = sandbox.WorkerPool(workers=1, timeout=20, memory_mb=1024)
    yield workers
    workers.shutdown()


def png_bytes(size=(64, 48), color=(200, 30, 30), **save) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, color).save(out, "PNG", **save)
    return out.getvalue()


def paper_json(paper_id="p1", **overrides) -> dict:
    """A valid paper in the authors' shape (``correct_option``, named levels, lettered options)."""
    paper = {
        "id": paper_id, "conference": "CVPR", "year": 2025, "method_text": "We encode, then decode.",
        "original_figure": f"figures/{paper_id}.png",
        "logic_graph": {
            "title": "A pipeline", "layout_direction": "left-to-right",
            "phases": [{"id": "ph1", "label": "Training"}],
            "nodes": [{"id": "n1", "label": "Encoder", "phase_id": "ph1", "type": "model", "icon_hint": ""},
                      {"id": "n2", "label": "Decoder", "phase_id": "ph1", "type": "model", "icon_hint": ""},
                      {"id": "n3", "label": "Image", "phase_id": None, "type": "data", "icon_hint": ""}],
            "edges": [{"source": "n3", "target": "n1", "label": ""}, {"source": "n1", "target": "n2", "label": ""},
                      {"source": "n2", "target": "n1", "label": "feedback"}],
        },
        "questions": [
            {"id": "q1", "level": "Level 1: Component Existence", "question": "Is an Encoder drawn?",
             "options": {"A": "No", "B": "Yes"}, "correct_option": "B", "rationale": "n1"},
            {"id": "q2", "level": 2, "question": "Where does the Encoder's output go?",
             "options": ["Image", "Decoder", "Loss", "The image does not contain sufficient information to answer "
                                                  "or none of the other options are correct."],
             "answer": "Decoder"},
        ],
    }
    paper.update(overrides)
    return paper


def write_folder(root: Path, papers=None, systems=("Sys A",)) -> Path:
    """An import folder: the papers, their original figures and one image per system and paper."""
    papers = papers if papers is not None else [paper_json("p1"), paper_json("p2")]
    (root / "papers").mkdir(parents=True)
    (root / "figures").mkdir()
    for paper in papers:
        (root / "papers" / f"{paper['id']}.json").write_text(json.dumps(paper))
        (root / "figures" / f"{paper['id']}.png").write_bytes(png_bytes())
        for system in systems:
            (root / "images" / system).mkdir(parents=True, exist_ok=True)
            (root / "images" / system / f"{paper['id']}.png").write_bytes(png_bytes(color=(0, 0, 255)))
    return root


class JsonEndpoint:
    """A server on 127.0.0.1 in a thread: every POST's JSON body goes to ``answer(path, body)``, which
    returns (status, the reply's JSON value) or (status, the reply's JSON value, more headers) (a reply
    that is an iterator of bytes is sent chunk by chunk as it yields them, after those headers); ``url``
    ends in ``/v1``. ``connections`` counts every connection made to it, request or not; ``headers``
    holds each POST's headers. :meth:`close` stops it."""

    def __init__(self, answer: Callable[[str, dict], tuple]):
        self.connections = 0
        self.headers: list[dict] = []
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def setup(self):
                endpoint.connections += 1
                super().setup()

            def do_POST(self):  # noqa: N802 (http.server's naming)
                endpoint.headers.append(dict(self.headers))
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                status, reply, *more = answer(self.path, body)
                self.send_response(status)
                for name, value in (more[0] if more else {}).items():
                    self.send_header(name, value)
                if isinstance(reply, Iterator):  # bytes sent as they come (a slow server), headers given
                    self.end_headers()
                    try:
                        for chunk in reply:
                            self.wfile.write(chunk)
                    except (BrokenPipeError, ConnectionResetError):
                        pass  # the client gave up
                    return
                data = json.dumps(reply).encode()
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
