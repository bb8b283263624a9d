"""A real HTTP server that speaks the OpenAI chat-completions format, for judge tests.

Each POST /v1/chat/completions pops the next scripted reply: a string becomes the
assistant message content, an int an HTTP error status, a float seconds to stall before
replying "SCORE: 10". When the script is empty it repeats the last reply. Requests are
recorded for assertions.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = str | int | float


class JudgeServer:
    def __init__(self) -> None:
        self.script: list[Reply] = ["SCORE: 10"]
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def reply(self, *replies: Reply) -> None:
        with self.lock:
            self.script = list(replies)
            self.requests.clear()

    def _next(self) -> Reply:
        with self.lock:
            return self.script.pop(0) if len(self.script) > 1 else self.script[0]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server.lock:
                    server.requests.append({"path": self.path, "body": body})
                reply = server._next()
                if isinstance(reply, float):
                    time.sleep(reply)
                    reply = "SCORE: 10"
                if isinstance(reply, int):
                    self._send(reply, {"error": {"message": "scripted failure"}})
                    return
                self._send(200, _completion(body.get("model", ""), reply))

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler


def _completion(model: str, content: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


@contextmanager
def running_judge() -> Iterator[JudgeServer]:
    server = JudgeServer()
    thread = threading.Thread(target=server.httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.httpd.shutdown()
        server.httpd.server_close()
        thread.join(timeout=5)
