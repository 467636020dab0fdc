#!/usr/bin/env python3
"""A strict local stand-in for the provider APIs pi talks to.

  standin.py [--port N] [--record DIR] [--reply TEXT] [--script FILE]

It serves streaming replies for three APIs, each in that API's own event format:
  POST /v1/messages          Anthropic Messages
  POST /v1/responses         OpenAI Responses
  POST /v1/chat/completions  OpenAI Chat Completions
  POST /v1beta/models/{model}:streamGenerateContent?alt=sse   Gemini (generateContent streamed)
  POST /v1beta/models/{model}:generateContent, :countTokens    Gemini, not streamed (side requests)
Before it answers, it checks the conversation the way the real APIs reject malformed ones (the
rules below, one function each) and answers HTTP 400 with the API's own error body when a rule
is broken. Every request is recorded (--record DIR: one JSON file per request, with the verdict),
so a test can compare what pi sent with what it expected pi to send. docs/conformance.md lists the
rules and says how to add one; standin_test.py shows that each rule can fail.

Every accepted request gets the default text, unless a script says otherwise (--script FILE, a JSON
list; standin_script.py says what a reply can be): the Messages and Responses APIs then answer each
accepted request with the script's next reply (text, thinking, tool calls, an HTTP error, a stream that
fails half-way or comes slowly), and with the default text once the script is used up.

Run alone, it prints "listening on 127.0.0.1:PORT" on stdout once it is ready.
"""
import argparse
import base64
import binascii
import itertools
import json
import os
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standin_script import (anthropic_error_body, anthropic_stream, openai_error_body, parse_script, pick_reply,
                            responses_stream)

DEFAULT_REPLY = "Resumed: the stand-in read the whole conversation."

# Media types the APIs take for base64 images (Anthropic and OpenAI agree on these four).
IMAGE_MEDIA_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")
ANTHROPIC_TOOL_ID = re.compile(r"^[a-zA-Z0-9_-]+$")
DATA_URL = re.compile(r"^data:([^;,]+);base64,(.*)$", re.S)


class Violation(Exception):
    """One broken rule: `rule` names it (docs/conformance.md), `message` is what the API says."""

    def __init__(self, rule, message):
        super().__init__(message)
        self.rule = rule
        self.message = message


def _blocks(content):
    """A message's content as a list of blocks; the APIs take a plain string as one text block."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return content if isinstance(content, list) else []


def _check_base64_image(where, media_type, data):
    if media_type not in IMAGE_MEDIA_TYPES:
        raise Violation("image-media-type", f"{where}: media type '{media_type}' is not one of {', '.join(IMAGE_MEDIA_TYPES)}")
    if not isinstance(data, str) or not data:
        raise Violation("image-base64", f"{where}: image data is empty")
    try:
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise Violation("image-base64", f"{where}: image data is not valid base64")


# ---------------------------------------------------------------- Anthropic Messages rules

def check_anthropic(body):
    """Raises Violation for the first rule of the Messages API that `body` breaks."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise Violation("messages-present", "messages: at least one message is required")
    if messages[0].get("role") != "user":
        raise Violation("first-message-user", "messages.0.role: the first message must use the user role")
    tool_use_ids = set()
    for i, m in enumerate(messages):
        role = m.get("role")
        if role not in ("user", "assistant"):
            raise Violation("role", f"messages.{i}.role: Input should be 'user' or 'assistant'")
        blocks = _blocks(m.get("content"))
        final_assistant = role == "assistant" and i == len(messages) - 1
        if not blocks and not final_assistant:
            raise Violation("empty-message", f"messages.{i}: all messages must have non-empty content except for the optional final assistant message")
        for j, b in enumerate(blocks):
            kind = b.get("type")
            where = f"messages.{i}.content.{j}"
            if kind == "text" and not (isinstance(b.get("text"), str) and b["text"].strip()):
                raise Violation("empty-text", f"{where}.text: text content blocks must contain non-whitespace text")
            if kind == "tool_use":
                if role != "assistant":
                    raise Violation("tool-use-role", f"{where}: tool_use blocks are only allowed in assistant messages")
                if not ANTHROPIC_TOOL_ID.match(str(b.get("id", ""))):
                    raise Violation("tool-use-id", f"{where}.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'")
                if b.get("id") in tool_use_ids:
                    raise Violation("tool-use-id-unique", f"{where}: `tool_use` ids must be unique")
                tool_use_ids.add(b.get("id"))
            if kind == "tool_result" and role != "user":
                raise Violation("tool-result-role", f"{where}: tool_result blocks are only allowed in user messages")
            if kind == "thinking" and not b.get("signature"):
                raise Violation("thinking-signature", f"{where}.thinking.signature: Field required")
            if kind == "image":
                source = b.get("source") or {}
                if source.get("type") == "base64":
                    _check_base64_image(where, source.get("media_type"), source.get("data"))
            if kind == "tool_result":
                for k, inner in enumerate(_blocks(b.get("content"))):
                    if inner.get("type") == "text" and not str(inner.get("text", "")).strip():
                        raise Violation("empty-text", f"{where}.content.{k}.text: text content blocks must contain non-whitespace text")
                    source = inner.get("source") or {}
                    if inner.get("type") == "image" and source.get("type") == "base64":
                        _check_base64_image(f"{where}.content.{k}", source.get("media_type"), source.get("data"))
    _check_anthropic_pairing(messages)


def _check_anthropic_pairing(messages):
    for i, m in enumerate(messages):
        blocks = _blocks(m.get("content"))
        if m.get("role") == "user":
            before = _blocks(messages[i - 1].get("content")) if i > 0 and messages[i - 1].get("role") == "assistant" else []
            calls = {b.get("id") for b in before if b.get("type") == "tool_use"}
            seen = set()
            for j, b in enumerate(blocks):
                if b.get("type") != "tool_result":
                    continue
                tid = b.get("tool_use_id")
                if tid not in calls:
                    raise Violation("orphan-tool-result", f"messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` blocks: {tid}. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.")
                if tid in seen:
                    raise Violation("duplicate-tool-result", f"messages.{i}.content.{j}: each tool_use must have a single result. Found multiple `tool_result` blocks with id: {tid}")
                seen.add(tid)
        if m.get("role") == "assistant":
            calls = [b.get("id") for b in blocks if b.get("type") == "tool_use"]
            if not calls:
                continue
            after = messages[i + 1] if i + 1 < len(messages) else None
            answered = set()
            if after is not None and after.get("role") == "user":
                answered = {b.get("tool_use_id") for b in _blocks(after.get("content")) if b.get("type") == "tool_result"}
            missing = [c for c in calls if c not in answered]
            if missing:
                raise Violation("tool-use-without-result", f"messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: {', '.join(map(str, missing))}. Each `tool_use` block must have a corresponding `tool_result` block in the next message.")


# ---------------------------------------------------------------- OpenAI Chat Completions rules

def check_chat(body):
    """Raises Violation for the first rule of Chat Completions that `body` breaks."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise Violation("messages-present", "[] is too short - 'messages'")
    pending = None  # the ids of the closest assistant tool_calls not yet answered
    open_calls = set()
    for i, m in enumerate(messages):
        role = m.get("role")
        if role not in ("system", "developer", "user", "assistant", "tool"):
            raise Violation("role", f"Invalid value: '{role}'. Supported values are: 'system', 'assistant', 'user', 'tool', 'developer'.")
        if role == "tool":
            if pending is None:
                raise Violation("tool-without-call", f"Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'. (messages[{i}])")
            tid = m.get("tool_call_id")
            if tid not in pending:
                raise Violation("tool-without-call", f"Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'; '{tid}' is not one of them. (messages[{i}])")
            open_calls.discard(tid)
            continue
        if open_calls:
            raise Violation("call-without-result", f"An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: {', '.join(sorted(open_calls))}")
        pending = None
        if role == "assistant" and m.get("tool_calls"):
            pending = {c.get("id") for c in m["tool_calls"]}
            open_calls = set(pending)
        for j, part in enumerate(m.get("content") if isinstance(m.get("content"), list) else []):
            if part.get("type") == "image_url":
                url = (part.get("image_url") or {}).get("url", "")
                _check_data_url(f"messages[{i}].content[{j}].image_url", url)
    if open_calls:
        raise Violation("call-without-result", f"An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: {', '.join(sorted(open_calls))}")


def _check_data_url(where, url):
    if not isinstance(url, str) or not url.startswith("data:"):
        return  # a remote URL: nothing to check offline
    found = DATA_URL.match(url)
    if not found:
        raise Violation("image-base64", f"{where}: Invalid image URL: expected a base64-encoded data URL")
    _check_base64_image(where, found.group(1), found.group(2))


# ---------------------------------------------------------------- OpenAI Responses rules

def check_responses(body):
    """Raises Violation for the first rule of the Responses API that `body` breaks."""
    items = body.get("input")
    if isinstance(items, str):
        return
    if not isinstance(items, list) or not items:
        raise Violation("messages-present", "input: at least one item is required")
    calls, outputs = [], set()
    for i, item in enumerate(items):
        kind = item.get("type", "message")
        if kind == "function_call":
            calls.append(item.get("call_id"))
        elif kind == "function_call_output":
            cid = item.get("call_id")
            if cid not in calls:
                raise Violation("output-without-call", f"No tool call found for function call output with call_id {cid}. (input[{i}])")
            outputs.add(cid)
        elif kind == "message":
            content = item.get("content")
            for j, part in enumerate(content if isinstance(content, list) else []):
                if part.get("type") == "input_image":
                    _check_data_url(f"input[{i}].content[{j}]", part.get("image_url", ""))
    missing = [c for c in calls if c not in outputs]
    if missing:
        raise Violation("call-without-output", f"No tool output found for function call {missing[0]}.")


# ---------------------------------------------------------------- Gemini generateContent rules

GEMINI_ROLES = ("user", "model")


def check_gemini(body):
    """Raises Violation for the first rule of the Gemini API's generateContent that `body` breaks."""
    contents = body.get("contents")
    if not isinstance(contents, list) or not contents:
        raise Violation("contents-present", "* GenerateContentRequest.contents: contents is not specified")
    for i, c in enumerate(contents):
        if not isinstance(c, dict) or c.get("role", "user") not in GEMINI_ROLES:
            raise Violation("role", f"Please use a valid role: {', '.join(GEMINI_ROLES)}. (contents[{i}])")
        parts = c.get("parts")
        if not isinstance(parts, list) or not parts:
            raise Violation("parts-present", f"* GenerateContentRequest.contents[{i}].parts: contents.parts must not be empty.")
        for j, part in enumerate(parts):
            if not isinstance(part, dict) or not part:
                raise Violation("part-data", f"* GenerateContentRequest.contents[{i}].parts[{j}].data: required oneof field 'data' must have one initialized field")
            if "functionCall" in part and c.get("role") != "model":
                raise Violation("call-role", f"contents[{i}].parts[{j}]: a function call is only allowed in a model turn")
            if "functionResponse" in part and c.get("role", "user") != "user":
                raise Violation("response-role", f"contents[{i}].parts[{j}]: a function response is only allowed in a user turn")
            inline = part.get("inlineData")
            if isinstance(inline, dict):
                _check_base64_image(f"contents[{i}].parts[{j}].inlineData", inline.get("mimeType"), inline.get("data"))
    _check_gemini_pairing(contents)


def _count_parts(content, kind):
    return sum(1 for p in content.get("parts") or [] if isinstance(p, dict) and kind in p)


def _check_gemini_pairing(contents):
    """A function call turn comes after a user turn or a function response turn, and the turn after it
    answers each of its calls: as many functionResponse parts as it has functionCall parts."""
    for i, c in enumerate(contents):
        calls = _count_parts(c, "functionCall")
        responses = _count_parts(c, "functionResponse")
        if calls:
            before = contents[i - 1] if i > 0 else None
            if before is None or before.get("role", "user") != "user":
                raise Violation("call-turn-order", "Please ensure that function call turn comes immediately after a user turn or after a function response turn.")
        if responses:
            before = contents[i - 1] if i > 0 else {}
            if _count_parts(before, "functionCall") != responses:
                raise Violation("response-count", "Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.")
        if calls and i + 1 < len(contents):
            if _count_parts(contents[i + 1], "functionResponse") != calls:
                raise Violation("response-count", "Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.")


# ---------------------------------------------------------------- the three APIs

class Api:
    """One provider API: where it listens, its rules, its error body and its event stream."""

    def __init__(self, name, path, check, error_body, stream):
        self.name, self.path, self.check, self.error_body, self.stream = name, path, check, error_body, stream


def _anthropic_error(message):
    return {"type": "error", "error": {"type": "invalid_request_error", "message": message}}


def _openai_error(message):
    return {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": None}}


def _sse(event, data):
    head = f"event: {event}\n" if event else ""
    return (head + "data: " + json.dumps(data) + "\n\n").encode()


def _pieces(text):
    """The reply in a few deltas, as a real stream sends it."""
    words = text.split(" ")
    return [w + (" " if i < len(words) - 1 else "") for i, w in enumerate(words)]


def stream_anthropic(body, text):
    model = body.get("model", "standin")
    yield _sse("message_start", {"type": "message_start", "message": {
        "id": "msg_standin", "type": "message", "role": "assistant", "model": model, "content": [],
        "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 1}}})
    yield _sse("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})
    for piece in _pieces(text):
        yield _sse("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": piece}})
    yield _sse("content_block_stop", {"type": "content_block_stop", "index": 0})
    yield _sse("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                                 "usage": {"output_tokens": len(_pieces(text))}})
    yield _sse("message_stop", {"type": "message_stop"})


def stream_chat(body, text):
    model = body.get("model", "standin")
    base = {"id": "chatcmpl-standin", "object": "chat.completion.chunk", "created": int(time.time()), "model": model}
    yield _sse(None, {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]})
    for piece in _pieces(text):
        yield _sse(None, {**base, "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]})
    yield _sse(None, {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    usage = {"prompt_tokens": 10, "completion_tokens": len(_pieces(text)), "total_tokens": 10 + len(_pieces(text))}
    yield _sse(None, {**base, "choices": [], "usage": usage})
    yield b"data: [DONE]\n\n"


def stream_responses(body, text):
    model = body.get("model", "standin")
    seq = itertools.count()
    response = {"id": "resp_standin", "object": "response", "created_at": int(time.time()), "status": "in_progress",
                "model": model, "output": [], "usage": None}
    item = {"id": "msg_standin", "type": "message", "status": "in_progress", "role": "assistant", "content": []}
    where = {"item_id": item["id"], "output_index": 0, "content_index": 0}

    def event(kind, **fields):
        return _sse(kind, {"type": kind, "sequence_number": next(seq), **fields})

    yield event("response.created", response=response)
    yield event("response.in_progress", response=response)
    yield event("response.output_item.added", output_index=0, item=item)
    yield event("response.content_part.added", **where, part={"type": "output_text", "text": "", "annotations": []})
    for piece in _pieces(text):
        yield event("response.output_text.delta", **where, delta=piece)
    part = {"type": "output_text", "text": text, "annotations": []}
    yield event("response.output_text.done", **where, text=text)
    yield event("response.content_part.done", **where, part=part)
    done_item = {**item, "status": "completed", "content": [part]}
    yield event("response.output_item.done", output_index=0, item=done_item)
    usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": len(_pieces(text)),
             "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 10 + len(_pieces(text))}
    yield event("response.completed", response={**response, "status": "completed", "output": [done_item], "usage": usage})


def _gemini_error(message, status=400):
    names = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
             429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}
    return {"error": {"code": status, "message": message, "status": names.get(status, "UNKNOWN")}}


def stream_gemini(body, text):
    yield from gemini_stream({"text": text, "thinking": None, "tool_calls": [], "deltas": None, "fail": None,
                              "error": None}, 0, "standin", _gemini_input_tokens(body))


def gemini_stream(reply, number, model, input_tokens=10):
    """The reply as streamGenerateContent?alt=sse sends it: one GenerateContentResponse per event, thoughts
    first (parts with thought: true), then the text, then the function calls (no ids: the API gives
    none), the last with finishReason STOP and the usage."""
    def chunk(parts, finish=None, usage=None):
        candidate = {"content": {"role": "model", "parts": parts}, "index": 0}
        if finish:
            candidate["finishReason"] = finish
        data = {"candidates": [candidate], "modelVersion": model, "responseId": f"standin-gemini-{number:02d}"}
        if usage:
            data["usageMetadata"] = usage
        return ("data: " + json.dumps(data) + "\r\n\r\n").encode()

    outputs = 0
    if reply["thinking"] is not None:  # one thought summary, as the API sends a short one
        outputs += 1
        yield chunk([{"text": reply["thinking"], "thought": True}])
    if reply["text"] is not None:
        pieces = _pieces(reply["text"]) if reply.get("deltas") is None else [reply["text"]]
        for n, piece in enumerate(pieces):
            if reply.get("fail") and n == max(1, len(pieces) // 2):
                return
            outputs += 1
            yield chunk([{"text": piece}])
    calls = [{"functionCall": {"name": c["name"], "args": c.get("arguments", {})}} for c in reply["tool_calls"]]
    usage = {"promptTokenCount": input_tokens, "candidatesTokenCount": outputs + len(calls),
             "totalTokenCount": input_tokens + outputs + len(calls)}
    if reply["thinking"] is not None:
        usage["thoughtsTokenCount"] = len(_pieces(reply["thinking"]))
    yield chunk(calls or [{"text": ""}], "STOP", usage)


def gemini_whole(reply, number, model, input_tokens=10):
    """The reply as generateContent (not streamed) answers: one GenerateContentResponse, as JSON. The
    CLI asks so for side requests (a compression's summary)."""
    parts = []
    if reply["thinking"] is not None:
        parts.append({"text": reply["thinking"], "thought": True})
    if reply["text"] is not None:
        parts.append({"text": reply["text"]})
    parts += [{"functionCall": {"name": c["name"], "args": c.get("arguments", {})}} for c in reply["tool_calls"]]
    outputs = len(_pieces(reply["text"] or ""))
    yield json.dumps({"candidates": [{"content": {"role": "model", "parts": parts or [{"text": ""}]}, "finishReason": "STOP",
                                      "index": 0}],
                      "usageMetadata": {"promptTokenCount": input_tokens, "candidatesTokenCount": outputs,
                                        "totalTokenCount": input_tokens + outputs},
                      "modelVersion": model, "responseId": f"standin-gemini-{number:02d}"}).encode()


def _gemini_whole_default(body, text):
    yield from gemini_whole({"text": text, "thinking": None, "tool_calls": []}, 0, "standin", _gemini_input_tokens(body))


def _gemini_count(body, _text):
    """countTokens: the CLI asks it for a request with media (an image) before it sends it."""
    yield json.dumps({"totalTokens": _gemini_input_tokens(body)}).encode()


def _gemini_input_tokens(body):
    return max(10, len(json.dumps(body.get("contents", ""))) // 4)


APIS = [
    Api("anthropic-messages", "/v1/messages", check_anthropic, _anthropic_error, stream_anthropic),
    Api("openai-responses", "/v1/responses", check_responses, _openai_error, stream_responses),
    Api("openai-completions", "/v1/chat/completions", check_chat, _openai_error, stream_chat),
    Api("gemini", ":streamGenerateContent", check_gemini, _gemini_error, stream_gemini),
    Api("gemini-whole", ":generateContent", check_gemini, _gemini_error, _gemini_whole_default),
    Api("gemini-count", ":countTokens", check_gemini, _gemini_error, _gemini_count),
]


def _input_tokens(body):
    """About how many tokens a Responses request holds (4 characters a token), for its usage."""
    return max(10, len(json.dumps(body.get("input", ""))) // 4)


# The APIs that answer with the script: (error body for a status, stream of a reply).
SCRIPTED = {
    "anthropic-messages": (anthropic_error_body, lambda reply, number, body: anthropic_stream(reply, number, body.get("model", "standin"))),
    "openai-responses": (openai_error_body, lambda reply, number, body: responses_stream(
        reply, number, body.get("model", "standin"), int(time.time()), _input_tokens(body))),
    "gemini": (lambda status, message: _gemini_error(message, status), lambda reply, number, body: gemini_stream(
        reply, number, body.get("model", "standin"), _gemini_input_tokens(body))),
    "gemini-whole": (lambda status, message: _gemini_error(message, status), lambda reply, number, body: gemini_whole(
        reply, number, body.get("model", "standin"), _gemini_input_tokens(body))),
}


def judge(path, body):
    """(api, violation or None) for a request body sent to `path`; api is None for an unknown path."""
    for api in APIS:
        if path.rstrip("/").endswith(api.path):
            try:
                api.check(body)
            except Violation as v:
                return api, v
            return api, None
    return None, None


# ---------------------------------------------------------------- the server

class StandIn:
    """The server, for tests: `with StandIn(record_dir) as s: ... s.port ... s.requests()`."""

    def __init__(self, record_dir=None, reply=DEFAULT_REPLY, port=0, script=None):
        self.record_dir = record_dir
        self.reply = reply
        self._script = parse_script(script or [])
        self._used = set()
        self._requests_answered = 0
        self._lock = threading.Lock()
        self._count = 0
        self._log = []
        handler = type("Handler", (_Handler,), {"standin": self})
        self.server = ThreadingHTTPServer(("127.0.0.1", port), handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self._thread = None

    def __enter__(self):
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()

    def record(self, entry):
        with self._lock:
            self._count += 1
            entry["seq"] = self._count
            self._log.append(entry)
            if self.record_dir:
                os.makedirs(self.record_dir, exist_ok=True)
                with open(os.path.join(self.record_dir, f"request-{self._count:04d}.json"), "w") as f:
                    json.dump(entry, f, indent=1)

    def next_reply(self, body):
        """(number, reply, index) of the script's reply for this request (standin_script.pick_reply),
        or (number, None, None) once none is left; numbers count the scripted APIs' requests from 1,
        so tool call ids stay unique; index is the reply's place in the script."""
        with self._lock:
            self._requests_answered += 1
            i = pick_reply(self._script, self._used, body)
            if i is not None:
                self._used.add(i)
            return self._requests_answered, (self._script[i] if i is not None else None), i

    def unused_replies(self):
        """The indexes of the script's replies no request has used."""
        with self._lock:
            return [i for i in range(len(self._script)) if i not in self._used]

    def requests(self):
        with self._lock:
            return list(self._log)


class _Handler(BaseHTTPRequestHandler):
    standin = None  # set on the subclass StandIn makes
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass  # requests are recorded, not printed

    def do_GET(self):
        self._send_json(404, _openai_error(f"no GET route {self.path} on the stand-in"))

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        path = self.path.split("?")[0]
        try:
            body = json.loads(raw or b"{}")
        except ValueError as e:
            self.standin.record({"path": path, "api": None, "status": 400, "rule": "json", "error": str(e), "body": None})
            self._send_json(400, _openai_error(f"We could not parse the JSON body of your request: {e}"))
            return
        api, violation = judge(path, body)
        if api is None:
            self.standin.record({"path": path, "api": None, "status": 404, "rule": None, "error": "unknown path", "body": body})
            self._send_json(404, _openai_error(f"Unknown path {path}"))
            return
        if violation is not None:
            self.standin.record({"path": path, "api": api.name, "status": 400, "rule": violation.rule,
                                 "error": violation.message, "body": body})
            self._send_json(400, api.error_body(violation.message))
            return
        if body.get("stream") is False:
            self.standin.record({"path": path, "api": api.name, "status": 200, "rule": None, "error": None, "body": body})
            self._send_json(400, api.error_body("the stand-in only streams: send stream: true"))
            return
        reply, number, index = None, None, None
        if api.name in SCRIPTED:
            number, reply, index = self.standin.next_reply(body)
        if reply is not None and reply["status"] is not None:
            message = reply["error"] or f"scripted HTTP {reply['status']}"
            self.standin.record({"path": path, "api": api.name, "status": reply["status"], "rule": None,
                                 "error": message, "body": body, "reply": number, "script_index": index})
            self._send_json(reply["status"], SCRIPTED[api.name][0](reply["status"], message))
            return
        self.standin.record({"path": path, "api": api.name, "status": 200, "rule": None, "error": None, "body": body,
                             "reply": number if reply is not None else None, "script_index": index})
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        if reply is None:
            chunks, delay = api.stream(body, self.standin.reply), 0
        else:
            chunks, delay = SCRIPTED[api.name][1](reply, number, body), reply["delay"]
        try:
            for i, chunk in enumerate(chunks):
                if delay and i:
                    time.sleep(delay)
                self.wfile.write(chunk)
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client went away mid-stream (an abort): nothing more to send
        self.close_connection = True

    def _send_json(self, status, payload):
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)
        self.close_connection = True


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: a free one)")
    parser.add_argument("--record", metavar="DIR", help="write each request and its verdict to DIR")
    parser.add_argument("--reply", default=DEFAULT_REPLY, help="the text every accepted request gets back")
    parser.add_argument("--script", metavar="FILE", help="a JSON list of replies, one per accepted request")
    args = parser.parse_args()
    script = None
    try:
        if args.script:
            with open(args.script) as f:
                script = json.load(f)
        standin = StandIn(args.record, args.reply, args.port, script)
    except (OSError, ValueError) as e:  # ValueError: bad JSON, or a ScriptError naming the reply
        print(f"standin.py: {args.script}: {e}", file=sys.stderr)
        return 2
    print(f"listening on 127.0.0.1:{standin.port}", flush=True)
    try:
        standin.server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
