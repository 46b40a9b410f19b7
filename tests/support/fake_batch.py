"""A fake server of the providers' batch APIs, as documented, beside their live endpoints.

OpenAI (https://platform.openai.com/docs/api-reference/batch, .../files):
``POST /v1/files`` (multipart, ``purpose=batch``) -> a file object; ``POST /v1/batches``
(``input_file_id``, ``endpoint``, ``completion_window``) -> a batch object;
``GET /v1/batches/{id}`` (``status``: validating, in_progress, completed, expired,
cancelled, failed; ``request_counts``; ``output_file_id``, ``error_file_id``);
``POST /v1/batches/{id}/cancel``; ``GET /v1/files/{id}/content``: a JSONL line per request
(``id``, ``custom_id``, ``response: {status_code, request_id, body}``, ``error``).

Anthropic (https://docs.anthropic.com/en/api/creating-message-batches and after):
``POST /v1/messages/batches`` (``requests: [{custom_id, params}]``) -> a batch
(``processing_status`` in_progress | ended, ``request_counts``, ``results_url``);
``GET /v1/messages/batches/{id}``; ``GET`` the results URL: a JSONL line per request
(``custom_id``, ``result: {type: succeeded, message} | {type: errored, error}``).

The live endpoints (``POST /v1/chat/completions``, ``POST /v1/messages``) answer with the
same replies, so a batch run and a live run meet the same model. The reply to a request
is the responder's (:data:`toolbench.providers.fake.Responder`); a :class:`Fault` reply is
a request the batch answers with that error. Knobs: ``reject`` (the batch refused at
creation), ``polls`` (asks before it ends), ``never_end`` (it never ends; a cancel ends it
``cancelled`` with what ``answer_before`` says it answered), ``expire`` (it ends
``expired`` having answered what ``answer_before`` says), ``missing`` (requests it ends
without a line for).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from typing import Any

from toolbench.providers.fake import Fault, LocalServer, Responder, completion

Pick = Callable[[dict[str, Any]], bool]
"""Says of a request's body whether a knob applies to it."""


def _never(_body: dict[str, Any]) -> bool:
    return False


def _always(_body: dict[str, Any]) -> bool:
    return True


def anthropic_message(request: dict[str, Any], item: str | dict[str, Any]) -> dict[str, Any]:
    """The Messages API reply answering ``request`` with ``item`` (text, or tool calls as
    ``tool_use`` blocks)."""
    blocks: list[dict[str, Any]] = []
    stop = "end_turn"
    if isinstance(item, str):
        blocks.append({"type": "text", "text": item})
    else:
        if item.get("content"):
            blocks.append({"type": "text", "text": item["content"]})
        for i, call in enumerate(item.get("tool_calls") or ()):
            args = call["arguments"]
            blocks.append(
                {
                    "type": "tool_use",
                    "id": f"toolu_{i}",
                    "name": call["name"],
                    "input": json.loads(args) if isinstance(args, str) else args,
                }
            )
            stop = "tool_use"
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": request.get("model", "fake"),
        "content": blocks,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }


class FakeBatchServer(LocalServer):
    """``with FakeBatchServer(respond) as s: ... s.base_url ...`` (OpenAI's ``/v1``)."""

    url_prefix = "/v1"

    def __init__(self, respond: Responder | None = None, default: str = "Hello.") -> None:
        self.respond: Responder = respond or (lambda _request: default)
        self.reject = False
        self.polls = 1
        self.never_end = False
        self.expire = False
        self.answer_before: Pick = _never
        self.missing: Pick = _never
        self.live: list[dict[str, Any]] = []
        """Bodies of live requests received (chat completions, messages)."""
        self.batches: dict[str, dict[str, Any]] = {}
        self.files: dict[str, bytes] = {}
        self.cancelled: list[str] = []
        self.invalid = False
        """OpenAI: the batch fails its validation (``status: failed`` with ``errors``)."""
        self.files_fail = False
        """Answer every file download with a 500 (results that cannot be fetched)."""
        self._lock = threading.Lock()
        self.serve(self._handler())

    # ------------------------------------------------------------ the batch's life

    def _requests(self, batch: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
        return list(batch["_requests"])

    def _finish(self, batch: dict[str, Any], status: str, answered: Pick) -> None:
        """End ``batch`` as ``status``, with lines for the requests ``answered`` picks."""
        out: list[dict[str, Any]] = []
        err: list[dict[str, Any]] = []
        anthropic = batch["_anthropic"]
        for cid, body in self._requests(batch):
            if not answered(body) or self.missing(body):
                continue
            item = self.respond(body)
            if isinstance(item, Fault):
                error = json.loads(item.body or b"{}")
                if anthropic:
                    err.append({"custom_id": cid, "result": {"type": "errored", "error": error}})
                else:
                    err.append(
                        {
                            "id": f"batch_req_{cid}",
                            "custom_id": cid,
                            "error": None,
                            "response": {"status_code": item.status, "body": error},
                        }
                    )
                continue
            assert isinstance(item, str | dict)
            if anthropic:
                reply = anthropic_message(body, item)
                out.append({"custom_id": cid, "result": {"type": "succeeded", "message": reply}})
            else:
                reply = completion(body, item)
                out.append(
                    {
                        "id": f"batch_req_{cid}",
                        "custom_id": cid,
                        "error": None,
                        "response": {"status_code": 200, "body": reply},
                    }
                )
        if anthropic:
            batch["processing_status"] = "ended"
            lines = out + err
            batch["results_url"] = self._file(lines, f"{self.base_url}/files/")
            batch["request_counts"] = {
                "processing": 0,
                "succeeded": len(out),
                "errored": len(err),
                "canceled": 0,
                "expired": 0,
            }
            return
        batch["status"] = status
        batch["output_file_id"] = self._file(out) if out else None
        batch["error_file_id"] = self._file(err) if err else None
        total = len(batch["_requests"])
        batch["request_counts"] = {"total": total, "completed": len(out), "failed": len(err)}

    def _file(self, lines: list[dict[str, Any]], prefix: str = "") -> str:
        file_id = f"file-{len(self.files)}"
        self.files[file_id] = "".join(json.dumps(x) + "\n" for x in lines).encode()
        return f"{prefix}{file_id}/content" if prefix else file_id

    def _asked(self, batch: dict[str, Any]) -> None:
        """One more ask of ``batch``: it ends after :attr:`polls` of them."""
        if batch.get("status") in ("completed", "expired", "cancelled", "failed"):
            return
        if batch.get("processing_status") == "ended":
            return
        batch["_asks"] += 1
        if self.invalid and not batch["_anthropic"]:
            batch["status"] = "failed"
            line = {"code": "invalid_request", "message": "line 1: model not found", "line": 1}
            batch["errors"] = {"object": "list", "data": [line]}
            return
        if self.never_end or batch["_asks"] < self.polls:
            return
        if self.expire:
            self._finish(batch, "expired", self.answer_before)
        else:
            self._finish(batch, "completed", _always)

    def _create(
        self, requests: list[tuple[str, dict[str, Any]]], anthropic: bool
    ) -> dict[str, Any]:
        batch_id = f"batch_{len(self.batches)}"
        batch: dict[str, Any] = {
            "id": batch_id,
            "_requests": requests,
            "_asks": 0,
            "_anthropic": anthropic,
        }
        if anthropic:
            batch.update(
                type="message_batch",
                processing_status="in_progress",
                results_url=None,
                request_counts={
                    "processing": len(requests),
                    "succeeded": 0,
                    "errored": 0,
                    "canceled": 0,
                    "expired": 0,
                },
            )
        else:
            batch.update(
                object="batch",
                status="in_progress",
                output_file_id=None,
                error_file_id=None,
                errors=None,
                request_counts={"total": len(requests), "completed": 0, "failed": 0},
            )
        self.batches[batch_id] = batch
        return batch

    def _cancel(self, batch: dict[str, Any]) -> None:
        self.cancelled.append(batch["id"])
        self._finish(batch, "cancelled", self.answer_before)

    @staticmethod
    def public(batch: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in batch.items() if not k.startswith("_")}

    # ------------------------------------------------------------ HTTP

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_: Any) -> None:
                pass

            def _send(self, status: int, data: Any, raw: bytes | None = None) -> None:
                body = raw if raw is not None else json.dumps(data).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _body(self) -> bytes:
                return self.rfile.read(int(self.headers.get("content-length", "0")))

            def do_GET(self) -> None:
                path = self.path.split("?")[0]
                with fake._lock:
                    if path.startswith("/v1/files/") and path.endswith("/content"):
                        file_id = path.removeprefix("/v1/files/").removesuffix("/content")
                        found = fake.files.get(file_id)
                        if fake.files_fail:
                            self._send(500, {"error": {"message": "storage unavailable"}})
                        elif found is None:
                            self._send(404, {"error": {"message": "no such file"}})
                        else:
                            self._send(200, None, found)
                        return
                    batch_id = path.rsplit("/", 1)[-1]
                    batch = fake.batches.get(batch_id)
                    if batch is None:
                        self._send(404, {"error": {"message": "no such batch"}})
                        return
                    fake._asked(batch)
                    self._send(200, fake.public(batch))

            def do_POST(self) -> None:
                path = self.path.split("?")[0]
                raw = self._body()
                with fake._lock:
                    if path in ("/v1/chat/completions", "/v1/messages"):
                        body = json.loads(raw or b"{}")
                        fake.live.append(body)
                        item = fake.respond(body)
                        if isinstance(item, Fault):
                            self._send(item.status, None, item.body)
                        elif path == "/v1/messages":
                            assert isinstance(item, str | dict)
                            self._send(200, anthropic_message(body, item))
                        else:
                            assert isinstance(item, str | dict)
                            self._send(200, completion(body, item))
                        return
                    if path == "/v1/files":
                        self._upload(raw)
                        return
                    if path in ("/v1/batches", "/v1/messages/batches"):
                        self._batch(path, json.loads(raw or b"{}"))
                        return
                    if path.endswith("/cancel"):
                        batch = fake.batches.get(path.split("/")[-2])
                        if batch is None:
                            self._send(404, {"error": {"message": "no such batch"}})
                            return
                        fake._cancel(batch)
                        self._send(200, fake.public(batch))
                        return
                self._send(404, {"error": {"message": f"no route {path}"}})

            def _upload(self, raw: bytes) -> None:
                kind = self.headers.get("content-type", "")
                boundary = kind.split("boundary=")[-1].strip('"').encode()
                content = b""
                for part in raw.split(b"--" + boundary):
                    head, _, data = part.partition(b"\r\n\r\n")
                    if b'name="file"' in head:
                        content = data.removesuffix(b"\r\n")
                file_id = f"file-{len(fake.files)}"
                fake.files[file_id] = content
                self._send(
                    200,
                    {
                        "id": file_id,
                        "object": "file",
                        "purpose": "batch",
                        "bytes": len(content),
                        "filename": "batch.jsonl",
                    },
                )

            def _batch(self, path: str, asked: dict[str, Any]) -> None:
                if fake.reject:
                    why = "the batch's input is invalid (a fake's refusal)"
                    self._send(400, {"error": {"message": why, "type": "invalid_request_error"}})
                    return
                if path == "/v1/messages/batches":
                    requests = [(r["custom_id"], r["params"]) for r in asked["requests"]]
                    self._send(200, fake.public(fake._create(requests, True)))
                    return
                content = fake.files.get(str(asked.get("input_file_id")), b"")
                lines = [json.loads(x) for x in content.decode().splitlines() if x.strip()]
                requests = [(x["custom_id"], x["body"]) for x in lines]
                self._send(200, fake.public(fake._create(requests, False)))

        return Handler
