"""A tiny OpenAI-compatible chat server on 127.0.0.1, in a thread, for the harness tests.

It answers ``POST .../chat/completions`` with ``### Answer:\\n`` and the answer of the sample
whose question the prompt holds (or "I do not know"), the way a local vLLM or llama.cpp server
answers, and records every request. ``GET .../models`` lists the one model.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def _text(content) -> str:
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content or [] if isinstance(part, dict))


class StubServer:
    def __init__(self, samples: list[dict], model: str = "stub-model"):
        self.samples = samples
        self.model = model
        self.requests: list[dict] = []
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def _send(self, payload: dict, status: int = 200) -> None:
                data = json.dumps(payload).encode("utf-8")
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):  # noqa: N802 (http.server's naming)
                if self.path.rstrip("/").endswith("/models"):
                    self._send({"object": "list", "data": [{"id": server.model, "object": "model", "created": 0,
                                                             "owned_by": "stub"}]})
                else:
                    self._send({"error": {"message": f"no route {self.path}"}}, 404)

            def do_POST(self):  # noqa: N802
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                with server.lock:
                    server.requests.append({"path": self.path, "body": body, "headers": dict(self.headers)})
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send({"error": {"message": f"no route {self.path}"}}, 404)
                    return
                prompt = "\n".join(_text(m.get("content")) for m in body.get("messages", []))
                content = server.reply(prompt)
                self._send({
                    "id": f"chatcmpl-{len(server.requests)}", "object": "chat.completion", "created": int(time.time()),
                    "model": body.get("model", server.model),
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                                 "finish_reason": "stop", "logprobs": None}],
                    "usage": {"prompt_tokens": len(prompt.split()), "completion_tokens": len(content.split()),
                              "total_tokens": len(prompt.split()) + len(content.split())},
                })

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()
        self.port = self.server.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"

    def reply(self, prompt: str) -> str:
        # the evaluated sample's question comes last in a prompt (demonstrations come before it)
        found = [(prompt.rfind(s["question"]), s) for s in self.samples if s["question"] in prompt]
        if not found:
            return "I do not know."
        return "### Answer:\n" + max(found, key=lambda pair: pair[0])[1]["answer"]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
