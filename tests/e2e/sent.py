"""What a provider request says: the conversation of a request body, in the shape of the contexts
pinned in tests/conformance/expected (role, texts, tool call ids, tool result id per message).

Each API spells a conversation its own way; these functions undo that, so one pinned context can
be compared with what pi sent to any of them:
  - Anthropic puts tool results in user messages; they come out as toolResult messages, in order,
    before the user's own text of that message.
  - OpenAI Chat Completions has `tool` messages; Responses has function_call and
    function_call_output items, which pi sends one per call and result.
  - System or developer messages (pi's freshly built prompt) are not part of the conversation.
Texts are the text blocks; images and thinking are not texts.

What an API cannot say is taken out of both sides by comparable(): Responses has no boundary
between assistant messages (each text block and each call is an item of its own), Chat Completions
sends an assistant's text blocks as one string, and pi-ai may send a thinking block as plain text
(one without a signature, or one of another provider's model): where an assistant message differs
only by such texts, they are taken out. Tool call ids compare by which call each result answers (calls are
numbered in order): pi-ai rewrites ids for the API it sends to (Responses gets the call part of a
`call|item` id; a provider other than the session's gets ids in its own form), and the stand-in
checks the ids it is sent against that API's rules. pi-ai's own words around images are passed
over too: a tool result that
holds images gets the text "(see attached image)", and Chat Completions, whose tool messages take
no images, follows the results with a user message "Attached image(s) from tool result:" that
carries them.
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "conformance"))
from conformance import numbered_calls  # noqa: E402  (the same numbering as the repairs' comparison)

IMAGE_IN_RESULT = "(see attached image)"
IMAGES_OF_RESULTS = "Attached image(s) from tool result:"


def _texts(content):
    if isinstance(content, str):
        return [content]
    out = []
    for block in content if isinstance(content, list) else []:
        if block.get("type") in ("text", "input_text", "output_text"):
            out.append(block.get("text", ""))
    return out


def _message(role, texts=(), calls=(), result=None):
    return {"role": role, "texts": list(texts), "toolCallIds": list(calls), "toolResultId": result}


def from_anthropic(body):
    out = []
    for m in body.get("messages", []):
        content = m.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        if m.get("role") == "assistant":
            calls = [b.get("id") for b in blocks if b.get("type") == "tool_use"]
            out.append(_message("assistant", _texts(blocks), calls))
            continue
        for b in blocks:
            if b.get("type") == "tool_result":
                out.append(_message("toolResult", _texts(b.get("content")), result=b.get("tool_use_id")))
        rest = [b for b in blocks if b.get("type") != "tool_result"]
        if rest:
            out.append(_message("user", _texts(rest)))
    return out


def from_chat(body):
    out = []
    for m in body.get("messages", []):
        role = m.get("role")
        if role in ("system", "developer"):
            continue
        if role == "tool":
            out.append(_message("toolResult", _texts(m.get("content")), result=m.get("tool_call_id")))
        elif role == "assistant":
            calls = [c.get("id") for c in m.get("tool_calls") or []]
            out.append(_message("assistant", _texts(m.get("content")), calls))
        else:
            out.append(_message("user", _texts(m.get("content"))))
    return out


def from_responses(body):
    out = []
    items = body.get("input")
    if isinstance(items, str):
        return [_message("user", [items])]
    for item in items or []:
        kind = item.get("type", "message")
        if kind == "message":
            role = item.get("role")
            if role in ("system", "developer"):
                continue
            out.append(_message("assistant" if role == "assistant" else "user", _texts(item.get("content"))))
        elif kind == "function_call":
            out.append(_message("assistant", calls=[item.get("call_id")]))
        elif kind == "function_call_output":
            output = item.get("output")
            out.append(_message("toolResult", [output] if isinstance(output, str) else _texts(output),
                                result=item.get("call_id")))
    return out


BY_API = {"anthropic-messages": from_anthropic, "openai-completions": from_chat, "openai-responses": from_responses}


def conversation(api, body):
    return BY_API[api](body)


def without_thinking_sent_as_text(loaded, sent_messages, thinking):
    """`sent_messages` with the texts that are thinking sent as text taken out, where an assistant
    message differs from the loaded one at the same place: one occurrence at a time, while it
    still differs (a thinking block can hold the same words as the answer)."""
    out = [dict(m, texts=list(m["texts"])) for m in sent_messages]
    for want, got in zip(loaded, out):
        if got["role"] != "assistant":
            continue
        for text in [t for t in got["texts"] if t in thinking]:
            if got["texts"] == want["texts"]:
                break
            got["texts"].remove(text)
    return out


def comparable(api, messages):
    """`messages` reduced to what `api` can tell apart (see the module's comment)."""
    out = []
    for m in messages:
        m = dict(m, texts=list(m["texts"]), toolCallIds=list(m["toolCallIds"]))
        if m["role"] == "toolResult":
            m["texts"] = [t for t in m["texts"] if t != IMAGE_IN_RESULT]
        if m["role"] == "user" and m["texts"] == [IMAGES_OF_RESULTS] and out and out[-1]["role"] == "toolResult":
            continue
        if m["role"] == "assistant":
            if api == "openai-completions" and m["texts"]:
                m["texts"] = ["".join(m["texts"])]
            if api == "openai-responses" and out and out[-1]["role"] == "assistant":
                out[-1]["texts"] += m["texts"]
                out[-1]["toolCallIds"] += m["toolCallIds"]
                continue
        out.append(m)
    return numbered_calls(out)


def thinking_texts(session_path):
    """The thinking texts of a session file, which pi-ai may send as plain text (a block without a
    signature, or one from another provider's model)."""
    found = set()
    with open(session_path, encoding="utf-8", errors="replace") as f:
        for line in f:
            try:
                entry = json.loads(line)
                content = entry["message"]["content"]
            except (ValueError, KeyError, TypeError):
                continue
            for block in content if isinstance(content, list) else []:
                if isinstance(block, dict) and block.get("type") == "thinking" and isinstance(block.get("thinking"), str):
                    found.add(block["thinking"])
    return found
