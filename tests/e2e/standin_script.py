"""Scripted replies for the stand-in: what it answers to each accepted request, turn by turn.

A script is a list of replies, consumed one per accepted request (a request that breaks a rule is
answered 400 and consumes nothing); when it runs out, the stand-in's default text is sent. A reply
is a string (that text) or an object with these fields, all optional:

  text        the answer's text
  thinking    a thinking block before it (sent with a signature, as the API does); on the Responses
              API a reasoning item with this summary and an encrypted_content, as the API sends it
              when asked for reasoning.encrypted_content
  tool_calls  [{"name": "bash", "arguments": {...}}, ...]: calls in one message (ids are made
              from the reply's number, so they are unique in a conversation and reproducible); on
              the Responses API, function_call items of one response
  delay       seconds between two deltas: a reply slow enough to be aborted
  deltas      how many deltas the text comes in (default: one per word); long texts take few,
              since pi prints the whole message so far with every delta
  fail        "close" (the connection closes half-way) or "error_event" (an `error` event half-way)
  status      an HTTP error status instead of a stream (500 and 529 are retried by pi, 400 is not)
  error       the error's message, with status or fail="error_event"
  summary     the text of a compaction summary (the same as text; it says what the reply is for)
  when        a text the request's last message must hold for this reply to be used (its text
              blocks, or the text of its tool results): for requests whose order is not fixed (pi
              0.78 asks for a compaction's two summaries at once; Claude Code's subagent runs beside
              the main conversation)

The stand-in answers a request with the first unused reply whose `when` (if any) the request
holds; without `when`, that is simply the next reply.

The Anthropic Messages and OpenAI Responses streams are scripted, each in its API's own events
(anthropic_stream, responses_stream) and error bodies; Chat Completions always sends the default text.
"""
import base64
import json

FIELDS = {"text", "thinking", "tool_calls", "delay", "deltas", "fail", "status", "error", "summary", "when"}
FAILS = ("close", "error_event")
# The error type the Messages API names for a status (its documented errors).
ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
               404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error",
               500: "api_error", 529: "overloaded_error"}


class ScriptError(ValueError):
    pass


def parse_script(items, where="script"):
    """The script's replies in a checked, normalized form; ScriptError names the reply and the reason."""
    if not isinstance(items, list):
        raise ScriptError(f"{where}: a script is a list of replies")
    return [parse_reply(item, f"{where}[{i}]") for i, item in enumerate(items)]


def parse_reply(item, where):
    if isinstance(item, str):
        item = {"text": item}
    if not isinstance(item, dict):
        raise ScriptError(f"{where}: a reply is a string or an object")
    unknown = set(item) - FIELDS
    if unknown:
        raise ScriptError(f"{where}: unknown field(s) {', '.join(sorted(unknown))}")
    reply = {"text": item.get("text", item.get("summary")), "thinking": item.get("thinking"),
             "tool_calls": item.get("tool_calls") or [], "delay": float(item.get("delay", 0)), "deltas": item.get("deltas"),
             "fail": item.get("fail"), "status": item.get("status"), "error": item.get("error"), "when": item.get("when")}
    if "text" in item and "summary" in item:
        raise ScriptError(f"{where}: text and summary are the same thing; give one")
    for k, call in enumerate(reply["tool_calls"]):
        if not isinstance(call, dict) or not isinstance(call.get("name"), str) or not isinstance(call.get("arguments", {}), dict) \
                or not isinstance(call.get("namespace", ""), str) or set(call) - {"name", "arguments", "namespace"}:
            raise ScriptError(f"{where}.tool_calls[{k}]: a call is {{\"name\": str, \"arguments\": object, \"namespace\": str (Responses only)}}")
    if reply["fail"] is not None and reply["fail"] not in FAILS:
        raise ScriptError(f"{where}.fail: {reply['fail']!r} is not one of {', '.join(FAILS)}")
    if reply["deltas"] is not None and not (isinstance(reply["deltas"], int) and reply["deltas"] >= 1):
        raise ScriptError(f"{where}.deltas: a count of one or more is expected")
    if reply["fail"] is not None and len(_pieces(reply["text"] or "")) < 2:
        raise ScriptError(f"{where}.fail: a reply that fails half-way needs a text of two words or more")
    if reply["status"] is not None and not (isinstance(reply["status"], int) and 400 <= reply["status"] <= 599):
        raise ScriptError(f"{where}.status: an HTTP error status (400-599) is expected")
    if reply["status"] is None and reply["text"] is None and reply["thinking"] is None and not reply["tool_calls"]:
        raise ScriptError(f"{where}: the reply says nothing (no text, thinking, tool_calls or status)")
    return reply


def last_message_text(body):
    """The text of a request's last message (Messages: its text blocks and the texts of its tool
    results, so a reply can wait for the result of a call) or last input item (Responses: a
    message's text, or a function_call_output's output), where a `when` looks."""
    if "messages" not in body and isinstance(body.get("input"), list) and body["input"]:
        item = body["input"][-1]
        return _text_of(item.get("content", item.get("output")))
    if "messages" not in body and isinstance(body.get("input"), str):
        return body["input"]
    if "messages" not in body and isinstance(body.get("contents"), list) and body["contents"]:
        return gemini_content_text(body["contents"][-1])
    messages = body.get("messages") or [{}]
    return _text_of(messages[-1].get("content"))


def _text_of(content):
    if isinstance(content, str):
        return content
    texts = []
    for b in content or []:
        if not isinstance(b, dict):
            continue
        if b.get("type") == "tool_result":
            texts.append(_text_of(b.get("content")))
        else:
            texts.append(b.get("text", ""))
    return "\n".join(texts)


def gemini_content_text(content):
    """A Gemini content's text parts and function responses' outputs, joined (where a `when` looks)."""
    texts = []
    for part in content.get("parts") or [] if isinstance(content, dict) else []:
        if not isinstance(part, dict) or part.get("thought"):
            continue
        response = (part.get("functionResponse") or {}).get("response")
        if isinstance(response, dict):
            texts.append(str(response.get("output", response.get("error", ""))))
        elif isinstance(part.get("text"), str):
            texts.append(part["text"])
    return "\n".join(texts)


def pick_reply(replies, used, body):
    """The index of the reply for this request: the first unused one whose `when` holds, or None."""
    text = None
    for i, reply in enumerate(replies):
        if i in used:
            continue
        if reply["when"] is None:
            return i
        if text is None:
            text = last_message_text(body)
        if reply["when"] in text:
            return i
    return None


# The error type and code the OpenAI API names for a status (what its error bodies say).
OPENAI_ERRORS = {400: ("invalid_request_error", None), 401: ("invalid_request_error", "invalid_api_key"),
                 403: ("invalid_request_error", None), 404: ("invalid_request_error", None),
                 429: ("requests", "rate_limit_exceeded"), 500: ("server_error", None), 503: ("server_error", None)}


def openai_error_body(status, message):
    kind, code = OPENAI_ERRORS.get(status, ("server_error", None))
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def anthropic_error_body(status, message):
    return {"type": "error", "error": {"type": ERROR_TYPES.get(status, "api_error"), "message": message}}


def _sse(event, data):
    return (f"event: {event}\ndata: " + json.dumps(data) + "\n\n").encode()


def _pieces(text, count=None):
    """The text in deltas: one per word, or `count` runs of words of about the same length."""
    words = text.split(" ")
    words = [w + (" " if i < len(words) - 1 else "") for i, w in enumerate(words)]
    if count is None or count >= len(words):
        return words
    size = -(-len(words) // count)  # ceiling: at most `count` pieces
    return ["".join(words[i:i + size]) for i in range(0, len(words), size)]


def tool_call_id(number, k):
    """The id of call k of reply `number`: unique in a conversation, the same in every recording."""
    return f"toolu_{number:02d}_{k + 1}"


def function_call_id(number, k):
    """The call_id of function call k of Responses reply `number` (as tool_call_id: unique, reproducible)."""
    return f"call_{number:02d}_{k + 1}"


def encrypted_reasoning(number):
    """The opaque encrypted_content of reply `number`'s reasoning item: base64, as the API's is."""
    return base64.b64encode(f"standin-reasoning-{number:02d}".encode()).decode()


def anthropic_stream(reply, number, model):
    """The reply as the Messages API streams it: SSE chunks, in order. A reply that fails half-way
    stops after its first half (the caller then closes the connection)."""
    yield _sse("message_start", {"type": "message_start", "message": {
        "id": f"msg_standin_{number:02d}", "type": "message", "role": "assistant", "model": model, "content": [],
        "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 1}}})
    index = 0
    deltas = 0
    if reply["thinking"] is not None:
        yield _sse("content_block_start", {"type": "content_block_start", "index": index,
                                           "content_block": {"type": "thinking", "thinking": "", "signature": ""}})
        for piece in _pieces(reply["thinking"]):
            deltas += 1
            yield _sse("content_block_delta", {"type": "content_block_delta", "index": index,
                                               "delta": {"type": "thinking_delta", "thinking": piece}})
        yield _sse("content_block_delta", {"type": "content_block_delta", "index": index,
                                           "delta": {"type": "signature_delta", "signature": f"standin-signature-{number:02d}"}})
        yield _sse("content_block_stop", {"type": "content_block_stop", "index": index})
        index += 1
    if reply["text"] is not None:
        pieces = _pieces(reply["text"], reply["deltas"])
        yield _sse("content_block_start", {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}})
        for n, piece in enumerate(pieces):
            if reply["fail"] and n == max(1, len(pieces) // 2):
                if reply["fail"] == "error_event":
                    yield _sse("error", anthropic_error_body(529, reply["error"] or "Overloaded"))
                return
            deltas += 1
            yield _sse("content_block_delta", {"type": "content_block_delta", "index": index,
                                               "delta": {"type": "text_delta", "text": piece}})
        yield _sse("content_block_stop", {"type": "content_block_stop", "index": index})
        index += 1
    for k, call in enumerate(reply["tool_calls"]):
        yield _sse("content_block_start", {"type": "content_block_start", "index": index, "content_block": {
            "type": "tool_use", "id": tool_call_id(number, k), "name": call["name"], "input": {}}})
        deltas += 1
        yield _sse("content_block_delta", {"type": "content_block_delta", "index": index,
                                           "delta": {"type": "input_json_delta", "partial_json": json.dumps(call.get("arguments", {}))}})
        yield _sse("content_block_stop", {"type": "content_block_stop", "index": index})
        index += 1
    stop = "tool_use" if reply["tool_calls"] else "end_turn"
    yield _sse("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                 "usage": {"output_tokens": deltas}})
    yield _sse("message_stop", {"type": "message_stop"})


def responses_stream(reply, number, model, created_at=0, input_tokens=10):
    """The reply as the OpenAI Responses API streams it: SSE chunks, in order (response.created, one
    response.output_item.added/done pair per output item with its deltas between, then
    response.completed with the whole output and the usage). Item order: reasoning, message,
    function calls. A reply that fails half-way stops in its text (after an `error` event for
    fail="error_event"); the caller then closes the connection. `input_tokens` is the usage's count
    of the request (the stand-in estimates it from the request's size, so that a client's automatic
    compaction can see its context grow)."""
    seq = iter(range(1 << 30))

    def event(kind, **fields):
        return _sse(kind, {"type": kind, "sequence_number": next(seq), **fields})

    response = {"id": f"resp_standin_{number:02d}", "object": "response", "created_at": created_at,
                "status": "in_progress", "model": model, "output": [], "usage": None}
    yield event("response.created", response=response)
    yield event("response.in_progress", response=response)
    output = []
    deltas = 0
    if reply["thinking"] is not None:
        index, item_id = len(output), f"rs_standin_{number:02d}"
        item = {"id": item_id, "type": "reasoning", "summary": []}
        yield event("response.output_item.added", output_index=index, item=item)
        where = {"item_id": item_id, "output_index": index, "summary_index": 0}
        yield event("response.reasoning_summary_part.added", **where, part={"type": "summary_text", "text": ""})
        for piece in _pieces(reply["thinking"]):
            deltas += 1
            yield event("response.reasoning_summary_text.delta", **where, delta=piece)
        part = {"type": "summary_text", "text": reply["thinking"]}
        yield event("response.reasoning_summary_text.done", **where, text=reply["thinking"])
        yield event("response.reasoning_summary_part.done", **where, part=part)
        done = {**item, "summary": [part], "encrypted_content": encrypted_reasoning(number)}
        yield event("response.output_item.done", output_index=index, item=done)
        output.append(done)
    if reply["text"] is not None:
        index, item_id = len(output), f"msg_standin_{number:02d}"
        item = {"id": item_id, "type": "message", "status": "in_progress", "role": "assistant", "content": []}
        where = {"item_id": item_id, "output_index": index, "content_index": 0}
        yield event("response.output_item.added", output_index=index, item=item)
        yield event("response.content_part.added", **where, part={"type": "output_text", "text": "", "annotations": []})
        pieces = _pieces(reply["text"], reply["deltas"])
        for n, piece in enumerate(pieces):
            if reply["fail"] and n == max(1, len(pieces) // 2):
                if reply["fail"] == "error_event":
                    yield event("error", code="server_error", message=reply["error"] or "The server had an error", param=None)
                return
            deltas += 1
            yield event("response.output_text.delta", **where, delta=piece)
        part = {"type": "output_text", "text": reply["text"], "annotations": []}
        yield event("response.output_text.done", **where, text=reply["text"])
        yield event("response.content_part.done", **where, part=part)
        done = {**item, "status": "completed", "content": [part]}
        yield event("response.output_item.done", output_index=index, item=done)
        output.append(done)
    for k, call in enumerate(reply["tool_calls"]):
        index, item_id = len(output), f"fc_standin_{number:02d}_{k + 1}"
        arguments = json.dumps(call.get("arguments", {}))
        item = {"id": item_id, "type": "function_call", "status": "in_progress", "arguments": "",
                "call_id": function_call_id(number, k), "name": call["name"]}
        if call.get("namespace"):
            item["namespace"] = call["namespace"]  # a tool of a namespace tool (Codex's collaboration.spawn_agent)
        yield event("response.output_item.added", output_index=index, item=item)
        deltas += 1
        yield event("response.function_call_arguments.delta", item_id=item_id, output_index=index, delta=arguments)
        yield event("response.function_call_arguments.done", item_id=item_id, output_index=index, arguments=arguments)
        done = {**item, "status": "completed", "arguments": arguments}
        yield event("response.output_item.done", output_index=index, item=done)
        output.append(done)
    reasoning_tokens = len(_pieces(reply["thinking"])) if reply["thinking"] is not None else 0
    usage = {"input_tokens": input_tokens, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": deltas,
             "output_tokens_details": {"reasoning_tokens": reasoning_tokens}, "total_tokens": input_tokens + deltas}
    yield event("response.completed", response={**response, "status": "completed", "output": output, "usage": usage})
