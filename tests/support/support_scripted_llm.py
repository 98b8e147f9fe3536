"""A scripted *stub* of an OpenAI-compatible chat server, for tests.

Why a stub: no real language model can run on the test machines (no GPU, no
network), yet the code under test must go through the real ``openai`` client
and real HTTP. So this server speaks the real wire protocol on 127.0.0.1 and
answers with replies the test scripts in advance (or computes with a
``responder`` function). It records every request body and header so tests
can check what the client actually sent.

Endpoints:

* ``POST /v1/chat/completions`` -> the next scripted reply, with a ``usage`` block;
* ``GET /v1/models``            -> one model, ``stub-model``.

A scripted reply is either the assistant's message content (``str``) or a
``dict`` with any of::

    content            str   assistant message content (default "")
    status             int   HTTP status (default 200); >= 400 sends an OpenAI-style error
    error              str   error message for a status >= 400
    prompt_tokens      int   usage reported (default: rough count of the request text)
    completion_tokens  int   usage reported (default: rough count of the content)
    finish_reason      str   default "stop"
    delay_s            float sleep before answering (to provoke client timeouts)
    retry_after_ms     int   for errors: hint to the client's own retry loop (default 10,
                             so openai's transport retries do not slow tests down)

When the script is empty the ``responder(body)`` hook answers (``str`` or
``dict`` as above); without a responder the server answers HTTP 418
"no scripted reply left", which the client reports as an error.

Usage::

    with ScriptedLLMServer() as server:
        server.script(['{"ok": true}'])
        client = LLMClient(base_url=server.base_url, model="stub-model", api_key="k")
        ...
        assert server.requests[0]["temperature"] == 0
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Optional, Union

Reply = Union[str, dict]

__all__ = ["ScriptedLLMServer", "Reply", "request_text"]


def request_text(body: dict) -> str:
    """All text of a chat request's messages, joined by newlines (images skipped)."""
    parts: list[str] = []
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(p.get("text", "") for p in content if p.get("type") == "text")
    return "\n".join(parts)


def _rough_tokens(text: str) -> int:
    # about four characters per token, like common BPE vocabularies on English
    return max(1, len(text) // 4)


class ScriptedLLMServer:
    """A stub OpenAI-compatible server on 127.0.0.1 answering scripted replies."""

    def __init__(
        self,
        responder: Optional[Callable[[dict], Reply]] = None,
        *,
        reject_json_schema: bool = False,
        model: str = "stub-model",
    ):
        #: computes a reply when the script is empty
        self.responder = responder
        #: behave like a server without structured outputs: any request whose
        #: response_format is ``json_schema`` gets HTTP 400
        self.reject_json_schema = reject_json_schema
        self.model = model
        #: JSON bodies of every chat request received, in order
        self.requests: list[dict] = []
        #: headers of every chat request received (lower-cased names), in order
        self.headers: list[dict[str, str]] = []
        self._queue: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._httpd: Optional[ThreadingHTTPServer] = None
        self._thread: Optional[threading.Thread] = None

    # --- lifecycle ---------------------------------------------------------

    def start(self) -> "ScriptedLLMServer":
        handler = _make_handler(self)
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,),
                                        name="scripted-llm",
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> "ScriptedLLMServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("ScriptedLLMServer is not started")
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        """e.g. ``http://127.0.0.1:50123/v1`` (what ``LLMConfig.base_url`` expects)."""
        return f"http://127.0.0.1:{self.port}/v1"

    # --- scripting ---------------------------------------------------------

    def script(self, replies: list[Reply]) -> None:
        """Queue replies; each chat request consumes the next one."""
        with self._lock:
            self._queue.extend(replies)

    @property
    def pending(self) -> int:
        """How many scripted replies are not consumed yet."""
        with self._lock:
            return len(self._queue)

    def _next_reply(self, body: dict) -> dict:
        with self._lock:
            self.requests.append(body)
            reply: Optional[Reply] = self._queue.popleft() if self._queue else None
        if (self.reject_json_schema
                and (body.get("response_format") or {}).get("type") == "json_schema"):
            # the scripted reply is kept for the client's next (fallback) request
            if reply is not None:
                with self._lock:
                    self._queue.appendleft(reply)
            return {"status": 400, "error": "response_format type 'json_schema' is not supported"}
        if reply is None and self.responder is not None:
            reply = self.responder(body)
        if reply is None:
            return {"status": 418, "error": "ScriptedLLMServer: no scripted reply left"}
        return {"content": reply} if isinstance(reply, str) else dict(reply)

    def _completion(self, body: dict, reply: dict) -> dict:
        content = reply.get("content", "")
        with self._lock:
            n = len(self.requests)
        return {
            "id": f"chatcmpl-stub-{n}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", self.model),
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": reply.get("finish_reason", "stop"),
            }],
            "usage": {
                "prompt_tokens": int(reply.get("prompt_tokens", _rough_tokens(request_text(body)))),
                "completion_tokens": int(reply.get("completion_tokens", _rough_tokens(content))),
                "total_tokens": 0,  # filled below
            },
        }


def _make_handler(server: ScriptedLLMServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass  # keep test output clean

        def _send_json(self, status: int, payload: dict, extra: Optional[dict] = None) -> None:
            data = json.dumps(payload).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (extra or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802
            if self.path.rstrip("/") == "/v1/models":
                self._send_json(200, {"object": "list", "data": [
                    {"id": server.model, "object": "model", "created": 0, "owned_by": "stub"}]})
            else:
                self._send_json(404, {"error": {"message": f"no route {self.path}"}})

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            if self.path.rstrip("/") != "/v1/chat/completions":
                self._send_json(404, {"error": {"message": f"no route {self.path}"}})
                return
            try:
                body = json.loads(raw)
            except json.JSONDecodeError:
                self._send_json(400, {"error": {"message": "body is not JSON"}})
                return
            with server._lock:
                server.headers.append({k.lower(): v for k, v in self.headers.items()})
            reply = server._next_reply(body)
            if reply.get("delay_s"):
                time.sleep(float(reply["delay_s"]))
            status = int(reply.get("status", 200))
            if status >= 400:
                error = {"message": reply.get("error", f"scripted error {status}"),
                         "type": "invalid_request_error" if status < 500 else "server_error",
                         "param": None, "code": None}
                hint = {"retry-after-ms": str(int(reply.get("retry_after_ms", 10)))}
                self._send_json(status, {"error": error}, hint)
                return
            payload = server._completion(body, reply)
            usage = payload["usage"]
            usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
            try:
                self._send_json(200, payload)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout test)

    return Handler
