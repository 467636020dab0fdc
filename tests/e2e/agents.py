#!/usr/bin/env python3
"""Claude Code, Codex, Gemini CLI, Qwen Code, OpenCode and Kilo CLI sessions, converted: what pi sends from them, against what the real CLI sent.

  agents.py --pi-hydrate BIN [--pi-dest DIR] [--no-pi] [--only NAME] [--jobs N] [--keep DIR]

tests/agents/recorded/<agent>-<version>/<name>/ holds what a real CLI run against the stand-in left
(claude_code_driver.py, codex_driver.py): the CLI's transcript (transcript.jsonl, or rollout.jsonl for
Codex) and conversation.json, the requests the stand-in accepted. tests/agents/<agent>/<name>.json is
the scenario (the prompts and the stand-in's scripted replies). For each recording:

  converted  `pi-hydrate --session TRANSCRIPT --cwd SANDBOX -o out.jsonl` exits 0 (pi-hydrate verifies
             its output itself) and `pi-hydrate validate out.jsonl` reports no error;
  context    the conversation the real pi 1.5.2 (and 1.6.0) would send from out.jsonl (tests/conformance/pi_load.mjs)
             equals the conversation the CLI sent: the LAST "main" request of conversation.json plus the
             reply the stand-in gave it (replayed from the scenario's script the way the stand-in picks
             replies). Both are reduced to a list of items, in order: user text, assistant text, tool
             call (name + arguments), tool result (text, isError), image (media type), compaction
             summary; thinking rides on the item after it. The first differing item of both sides is
             printed. tests/e2e/agents_differences.json (optional) lists items the lead decided are a
             known loss, each with its reason, as {"<agent>-<version>/<name>": [{"side": "standin" or
             "pi", "item": {the item exactly as printed}, "why": "..."}]}: such an item is taken out of
             its side before comparing, and a listed item that is no longer there fails;
  resumed    the real pi 1.6.0, 1.5.2 and 0.78.0 each resume a copy of out.jsonl against the strict
             stand-in with a new prompt (Claude Code sessions over the Anthropic Messages API, Codex
             sessions over the OpenAI Responses API): the request is accepted, pi prints the reply and
             exits 0. They resume over RPC (resume.py, pi_rpc.py): the suite's real `pi --session FILE
             -p` starts of Claude Code and Codex conversions are e2e_resume's, on the golden cases cut
             from these recordings.
--no-pi does only `converted` (the sanitizer build runs that).

pi's side. pi_load.mjs gives, per message pi sends, its role, text blocks, tool call ids and the id a
tool result answers, after pi's convertToLlm and pi-ai's transformMessages. It does not give a call's
name and arguments, a result's isError, images or thinking: those are taken from the message of
out.jsonl (on the branch pi loads, up to the leaf pi_load reports) that this message came from: the
result answering the same call id, the assistant message with the same texts and call ids, the user
message with the same texts, in order. A message pi sends that is in no stored message (a result pi-ai
made up for a call without one, a compaction summary) keeps what pi_load gives.

Normalization, stand-in side (what the CLI's harness adds is not the conversation) -- numbered rules:
  N1  Claude Code: a text block that is one whole <system-reminder>...</system-reminder> is left out:
      the CLI adds them to the user's message (environment, date, model, attribution, tools used before
      a summary) for every request; they are not the user's words and no transcript record holds them
      as such. Exception (N2).
  N2  Claude Code: a <system-reminder> holding a <task-notification>...</task-notification> is the
      result of a background subagent reaching the model; the CLI wraps the element (as the transcript
      records it, a user message) in a reminder with a fixed preamble. The element is kept as a user
      text, the wrapper and preamble are left out.
  N3  Claude Code: text blocks that start with <local-command-caveat>, <local-command-stdout>,
      <local-command-stderr> or <command-name> are left out: the CLI's echo of a slash command such as
      /compact, not a prompt (pi-hydrate leaves those records out by design: claude-command-records).
  N4  Claude Code: a text block "[Image: source: PATH]" is left out: the CLI's note of where an
      attached image came from, sent next to the image itself (which is compared, as an image).
  N5  Codex: developer messages are left out: the system prompt and harness instructions
      (<skills_instructions>, <permissions instructions>, <tools>, multi-agent mode); pi sends its own.
  N6  Codex: user texts that start with <environment_context>, <skills_instructions>,
      <user_instructions> or "# AGENTS.md instructions" are left out: harness context Codex puts in
      user messages each session (pi-hydrate: codex-harness-context-dropped).
  N7  Codex: the texts <image name=...> and </image> around an attached image are compared like any
      user text: Codex writes them into the user message, the model reads them, and the converted
      session keeps them.
  N8  Codex: an agent_message item (another agent's message to this one, e.g. a subagent's final answer)
      is a user text: the model reads it as input, so a conversation without it is not the same.
  N9  Codex: a function call's namespace (Responses' grouping of tools, e.g. "collaboration") is not
      compared, only its name: a pi tool call has no field that could hold it. Arguments (a JSON string
      on the wire) are compared parsed.
  N10 Codex: a tool result's isError is not compared: function_call_output has no such field (a failed
      command says so only in its text, e.g. "Process exited with code 1"). The text itself, exec_command's
      header (Chunk ID, Wall time, exit code, token count) included, is compared as is.
  N11 Claude Code: tool_result's is_error is compared (missing means false, as in the API).
Both sides:
  N12 Texts are compared with surrounding whitespace stripped: Claude Code ends the user's text with a
      newline when other blocks follow it ("And this one?\\n" next to an image) and its transcript does
      not; no text differs only in that. Empty texts (after stripping) are left out.
  N13 A tool result's text is its text blocks joined by a newline (Anthropic: a string or text blocks;
      Responses: a string or input_text parts; pi: text blocks); its images follow it as image items.
  N14 Images compare by media type (Anthropic source.media_type, the data URL's type on Responses, pi's
      mimeType): the bytes are base64 either way and pi-hydrate does not re-encode them.
  N15 Thinking (Claude Code thinking blocks, Codex reasoning summaries) is compared by its text only
      where both sides show thinking before the same item: Claude Code and Codex may send an earlier
      turn's thinking or not, and pi sends it only to the model that wrote it.
  N16 Compaction: the conversation is compared from the summary on, the first item of the stand-in side
      that holds the scripted summary's text (its <summary> body, as the CLI rewrites the rest);
      items the CLI kept before it are not compared. pi sends its compaction summary as a user text
      wrapped in its own words ("The conversation history before this point was compacted into the
      following summary: <summary>...</summary>"), so the summary matches when pi's text contains the
      stand-in's.
  N17 Call ids are not compared (a call's place in the list says which call it is, and results follow
      in the order each side sends them).
  N19 Gemini CLI: a user text that starts with <session_context> is left out: the CLI's preamble (date,
      operating system, its temporary directory, a listing of the workspace), written afresh for each
      session and merged into the first user turn; pi sends its own system prompt
      (pi-hydrate: gemini-cli-session-context-dropped).
  N20 Gemini CLI: a functionResponse has no error flag (a failed command says "Exit Code: N" only in
      its output), so a result's isError is not compared, as N10; its text is response.output (or
      response.error), compared as is. Thought parts are thinking (N15): the CLI sends none back.
  N21 Qwen Code: a text block that is one whole <system-reminder>...</system-reminder> is left out: the
      CLI adds them to the user's message for every request (the skills it offers, the current date);
      its chat file does not hold them. The system message is left out as N5's developer messages.
  N22 Qwen Code: a tool result's isError is not compared: a Chat Completions tool message has no such
      field (a failed command says "Exit Code: 1" in its text, which is compared). Thinking is the
      assistant message's reasoning_content.
  N23 Qwen Code's compression summary is the <state_snapshot> body of the scripted one (N16 takes it as
      the <summary> body of Claude Code's).
  N24 Qwen Code: the user text "(attached media from previous tool call)" is left out: the CLI sends a tool
      result's images in a user message after the tool messages (a Chat Completions tool message is
      text), with this text before them; the images themselves follow the result as image items (N13).
  N18 The results of one reply's parallel calls (a run of result items) compare in any order: the APIs
      pair a result with its call by id, so their order is not part of the conversation; pi sends
      them in call order (its pairing, docs/hydrate.md), Claude Code in the order the tools finished.
OpenCode (Anthropic Messages through the AI SDK; N1-N4 and N11 apply to its requests too):
  N25 OpenCode: a compaction is sent as its question, the user text "What did we do so far?", and the
      summary as an assistant text (docs/opencode.md O8); pi sends the summary in its own wrapper as a
      user text. The stand-in side's summary is the assistant item holding the scripted summary, the
      question before it is left out, and it matches pi's summary item by containment (N16).
Copilot CLI (Anthropic Messages from a custom provider; N11 does not apply):
  N26 Copilot CLI: a tool result's isError is not compared: the CLI sends a command that exited
      non-zero as a plain result (it counts as a success to the CLI: shellExecution.exitCode 1), the
      code in the result's "<shellId: N completed with exit code K>" trailer, compared as text;
      pi-hydrate marks it failed, as pi's bash tool would (docs/copilot-cli.md CP9).
  N27 Copilot CLI: a compaction is sent as a user text of its own ("Some of the conversation history
      has been summarized ... <user_message>...</user_message> ... <summary>S</summary>") before the
      next prompt; the stand-in side's summary item is S, the scripted summary, which pi's summary
      (the same text in pi's wrapper, docs/copilot-cli.md CP12) contains (N16).
  N28 Copilot CLI: a tool result's images are not compared on pi's side: with a custom provider the
      CLI sent the view tool's image (binaryResultsForLlm) neither in the turn nor on resume
      (recorded/copilot-cli-1.0.102/image); pi-hydrate carries it (CP8), which a vision model reads.
Kilo CLI (OpenCode's fork, read by the same code: docs/opencode.md KL1-KL3; N25 applies to it too):
  N29 Kilo CLI: the user text "<environment_details>...</environment_details>" (the time, the folder) is
      left out: Kilo adds it to each user message when it sends it and never stores it (KL3). A user text
      that is one whole <system-reminder> (the agent-switch note Kilo stores as a synthetic part after a
      compaction, and sends) is left out on pi's side too: N2 leaves it out on the stand-in's.

Prints a table (recording x converted / context per pi version / resumed per pi version), each failure's
reason, and `agents: N passed, M failed`; exits 1 on any failure.
"""
import argparse
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
AGENTS = os.path.join(ROOT, "tests", "agents")
RECORDINGS = os.path.join(AGENTS, "recorded")
DIFFERENCES = os.path.join(HERE, "agents_differences.json")
sys.path.insert(0, HERE)
from recorded import LOADER  # noqa: E402  (tests/conformance/pi_load.mjs)
from resume import PI_VERSIONS, World  # noqa: E402
from standin import DEFAULT_REPLY, StandIn  # noqa: E402
from standin_script import parse_script, pick_reply  # noqa: E402

TRANSCRIPTS = {"claude-code": "transcript.jsonl", "codex": "rollout.jsonl", "gemini-cli": "session.jsonl"}
APIS = {"claude-code": "anthropic-messages", "codex": "openai-responses", "gemini-cli": "anthropic-messages"}
TRANSCRIPTS["qwen-code"] = "transcript.jsonl"  # Qwen Code's chat file (qwen_code_driver.py)
APIS["qwen-code"] = "openai-completions"  # it spoke Chat Completions, and pi resumes over it
TRANSCRIPTS["opencode"] = "opencode.db"  # OpenCode: its SQLite database (docs/opencode.md)
APIS["opencode"] = "anthropic-messages"  # recorded through the stand-in's Anthropic route
TRANSCRIPTS["copilot-cli"] = "events.jsonl"  # Copilot CLI: its session folder's events (docs/copilot-cli.md)
APIS["copilot-cli"] = "anthropic-messages"  # recorded with a custom Anthropic provider (copilot_cli_driver.py)
TRANSCRIPTS["kilo-cli"] = "kilo.db"  # Kilo CLI: OpenCode's database under its own name (docs/opencode.md KL1)
APIS["kilo-cli"] = "anthropic-messages"
KILO_ENVIRONMENT = "<environment_details>"  # N29
CONTEXT_PIS = ("1.5.2", "1.6.0")  # the versions whose context is compared with the CLI's
PI_COMPACTION_PREFIX = "The conversation history before this point was compacted into the following summary:"
CUT = 300  # characters of an item in a difference line


# ---------------------------------------------------------------- items

def _item(kind, **fields):
    return {"kind": kind, **fields}


def _text(text):
    return (text or "").strip()


def _media_of_data_url(url):
    m = re.match(r"data:([^;,]+)[;,]", url or "")
    return m.group(1) if m else url


def _thinking_onto(items, pending):
    """Attaches pending thinking texts to the first item added after them (N15)."""
    if pending and items:
        items[-1]["thinking"] = "\n".join(pending)
        pending.clear()


class Builder:
    """Collects items; thinking waits for the next item (N15)."""

    def __init__(self):
        self.items = []
        self.pending = []

    def think(self, text):
        if _text(text):
            self.pending.append(_text(text))

    def add(self, item):
        if item["kind"] in ("user", "assistant", "summary") and not item["text"]:
            return  # N12
        self.items.append(item)
        _thinking_onto(self.items, self.pending)


# ---- Claude Code (Anthropic Messages)

CC_COMMAND_PREFIXES = ("<local-command-caveat>", "<local-command-stdout>", "<local-command-stderr>", "<command-name>")
REMINDER = re.compile(r"^<system-reminder>(.*)</system-reminder>$", re.S)
TASK_NOTIFICATION = re.compile(r"<task-notification>.*</task-notification>", re.S)
IMAGE_NOTE = re.compile(r"^\[Image: source: [^\]]*\]$")


def cc_user_text(text):
    """The user's words in one text block of a Claude Code request, or None (N1-N4)."""
    t = _text(text)
    m = REMINDER.match(t)
    if m:
        note = TASK_NOTIFICATION.search(m.group(1))
        return note.group(0) if note else None  # N2, N1
    if t.startswith(CC_COMMAND_PREFIXES) or IMAGE_NOTE.match(t):
        return None  # N3, N4
    return t


def _anthropic_result_text_and_images(content):
    if isinstance(content, str):
        return _text(content), []
    texts, images = [], []
    for b in content or []:
        if b.get("type") == "text":
            texts.append(b.get("text", ""))
        elif b.get("type") == "image":
            images.append(_item("image", mediaType=(b.get("source") or {}).get("media_type")))
    return _text("\n".join(texts)), images


def from_anthropic(messages):
    out = Builder()
    for m in messages:
        content = m.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        for b in blocks:
            kind = b.get("type")
            if m.get("role") == "assistant":
                if kind == "thinking":
                    out.think(b.get("thinking"))
                elif kind == "text":
                    out.add(_item("assistant", text=_text(b.get("text"))))
                elif kind == "tool_use":
                    out.add(_item("call", name=b.get("name"), arguments=b.get("input")))
                continue
            if kind == "tool_result":
                text, images = _anthropic_result_text_and_images(b.get("content"))
                out.add(_item("result", text=text, isError=bool(b.get("is_error", False))))  # N11
                for image in images:
                    out.add(image)
            elif kind == "text":
                text = cc_user_text(b.get("text"))
                if text is not None:
                    out.add(_item("user", text=text))
            elif kind == "image":
                out.add(_item("image", mediaType=(b.get("source") or {}).get("media_type")))
    return out.items


# ---- Qwen Code (OpenAI Chat Completions)

QWEN_SPLIT_MEDIA = "(attached media from previous tool call)"


def from_chat(messages):
    out = Builder()
    for m in messages:
        role, content = m.get("role"), m.get("content")
        parts = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        if role in ("system", "developer"):
            continue  # N21
        if role == "assistant":
            out.think(m.get("reasoning_content"))
            for p in parts:
                if p.get("type") == "text":
                    out.add(_item("assistant", text=_text(p.get("text"))))
            for call in m.get("tool_calls") or []:
                fn = call.get("function") or {}
                try:
                    arguments = json.loads(fn.get("arguments") or "{}")
                except ValueError:
                    arguments = fn.get("arguments")
                out.add(_item("call", name=fn.get("name"), arguments=arguments))
            continue
        texts = [p.get("text", "") for p in parts if p.get("type") == "text"]
        images = [_item("image", mediaType=_media_of_data_url((p.get("image_url") or {}).get("url")))
                  for p in parts if p.get("type") == "image_url"]
        if role == "tool":
            out.add(_item("result", text=_text("\n".join(texts)), isError=None))  # N22, N13
            for image in images:
                out.add(image)
            continue
        for p in parts:
            if p.get("type") == "text":
                if not REMINDER.match(_text(p.get("text"))) and _text(p.get("text")) != QWEN_SPLIT_MEDIA:  # N21, N24
                    out.add(_item("user", text=_text(p.get("text"))))
            elif p.get("type") == "image_url":
                out.add(_item("image", mediaType=_media_of_data_url((p.get("image_url") or {}).get("url"))))
    return out.items


# ---- Codex (OpenAI Responses)

CODEX_CONTEXT_PREFIXES = ("<environment_context>", "<skills_instructions>", "<user_instructions>", "# AGENTS.md instructions")


def codex_user_text(text):
    t = _text(text)
    if t.startswith(CODEX_CONTEXT_PREFIXES):
        return None  # N6
    return t


def _parts_text_and_images(parts):
    if isinstance(parts, str):
        return _text(parts), []
    texts, images = [], []
    for p in parts or []:
        if p.get("type") in ("input_text", "output_text", "text"):
            texts.append(p.get("text", ""))
        elif p.get("type") == "input_image":
            images.append(_item("image", mediaType=_media_of_data_url(p.get("image_url"))))
    return _text("\n".join(texts)), images


def from_responses(items):
    out = Builder()
    for it in items:
        kind = it.get("type", "message" if "role" in it else None)
        if kind == "message":
            role = it.get("role")
            if role in ("developer", "system"):
                continue  # N5
            for part in it.get("content") or []:
                ptype = part.get("type")
                if ptype == "input_image":
                    out.add(_item("image", mediaType=_media_of_data_url(part.get("image_url"))))
                elif role == "assistant":
                    out.add(_item("assistant", text=_text(part.get("text"))))
                else:
                    text = codex_user_text(part.get("text"))
                    if text is not None:
                        out.add(_item("user", text=text))
        elif kind == "reasoning":
            for s in it.get("summary") or []:
                out.think(s.get("text"))
        elif kind in ("function_call", "custom_tool_call"):
            raw = it.get("arguments", it.get("input"))
            try:
                arguments = json.loads(raw) if kind == "function_call" else raw
            except (TypeError, ValueError):
                arguments = raw
            out.add(_item("call", name=it.get("name"), arguments=arguments))  # N9
        elif kind in ("function_call_output", "custom_tool_call_output"):
            text, images = _parts_text_and_images(it.get("output"))
            out.add(_item("result", text=text, isError=None))  # N10
            for image in images:
                out.add(image)
        elif kind == "agent_message":
            text, images = _parts_text_and_images(it.get("content"))
            out.add(_item("user", text=text))  # N8
            for image in images:
                out.add(image)
    return out.items


# ---- Gemini CLI (Gemini generateContent)

def from_gemini(contents):
    out = Builder()
    for c in contents:
        model = c.get("role") == "model"
        for part in c.get("parts") or []:
            if part.get("thought"):
                out.think(part.get("text"))
            elif "functionCall" in part:
                call = part["functionCall"]
                out.add(_item("call", name=call.get("name"), arguments=call.get("args") or {}))
            elif "functionResponse" in part:
                response = part["functionResponse"].get("response") or {}
                text = response.get("output", response.get("error")) if isinstance(response, dict) else None
                out.add(_item("result", text=_text(text if isinstance(text, str) else json.dumps(response)),
                              isError=None))  # N20
            elif "inlineData" in part:
                out.add(_item("image", mediaType=part["inlineData"].get("mimeType")))
            elif isinstance(part.get("text"), str):
                text = _text(part["text"])
                if model:
                    out.add(_item("assistant", text=text))
                elif not text.startswith("<session_context>"):  # N19
                    out.add(_item("user", text=text))
    return out.items


def reply_items(reply, agent):
    """The items of a scripted reply (standin_script: text, thinking, tool_calls)."""
    out = Builder()
    if reply.get("thinking"):
        out.think(reply["thinking"])
    if reply.get("text"):
        out.add(_item("assistant", text=_text(reply["text"])))
    for call in reply.get("tool_calls") or []:
        out.add(_item("call", name=call.get("name"), arguments=call.get("arguments")))
    return out.items


def summary_core(summary):
    """The text of a scripted summary the CLI passes on: its <summary> body if it has one (N16)."""
    m = re.search(r"<summary>(.*)</summary>", summary, re.S) or re.search(r"<state_snapshot>(.*)</state_snapshot>", summary, re.S)  # N23
    return _text(m.group(1) if m else summary)


OPENCODE_COMPACTION_QUESTION = "What did we do so far?"


def from_summary_on(items, summaries, agent=None):
    """The items from the first one holding a scripted summary on, that one made a summary item (N16,
    N25: OpenCode's summary is an assistant text after its question)."""
    kinds = ("user", "assistant") if agent in ("opencode", "kilo-cli") else ("user",)
    for core in (summary_core(s) for s in summaries):
        for i, it in enumerate(items):
            if it["kind"] in kinds and core and core in it["text"]:
                return [_item("summary", text=core if it["kind"] == "assistant" else it["text"])] + items[i + 1:]
    return items


def replies_of(conversation, script):
    """The script index the stand-in answered each accepted request with, replayed as it picks them."""
    # The driver's own "purpose" field is not the stand-in's (claude_code_driver.standin_script).
    replies = parse_script([{k: v for k, v in r.items() if k != "purpose"} if isinstance(r, dict) else r for r in script])
    used, picked = set(), []
    for request in conversation:
        body = {"messages": request["messages"]} if "messages" in request else \
            {"contents": request["contents"]} if "contents" in request else {"input": request.get("input")}
        index = pick_reply(replies, used, body)
        if index is not None:
            used.add(index)
        picked.append(index)
    return replies, picked


def standin_side(agent, conversation, scenario):
    """The items of the last main request plus its reply; (items, problem)."""
    accepted = [r for r in conversation if r.get("status", 200) == 200]
    replies, picked = replies_of(accepted, scenario.get("script", []))
    mains = [i for i, r in enumerate(accepted) if r.get("purpose") == "main"]
    if not mains:
        return None, "conversation.json has no main request"
    last = mains[-1]
    request = accepted[last]
    items = from_anthropic(request["messages"]) if "messages" in request else \
        from_gemini(request["contents"]) if "contents" in request else from_responses(request.get("input") or [])
    if agent == "qwen-code":
        items = from_chat(request["messages"])
    if agent == "copilot-cli":  # N26
        items = [dict(it, isError=None) if it["kind"] == "result" else it for it in items]
    if agent == "kilo-cli":
        items = [it for it in items if not (it["kind"] == "user" and it["text"].startswith(KILO_ENVIRONMENT))]  # N29
    if picked[last] is None:
        return None, f"no scripted reply for request {request['seq']}"
    items += reply_items(replies[picked[last]], agent)
    summaries = [r["summary"] for r in scenario.get("script", []) if isinstance(r, dict) and r.get("summary")]
    if summaries:
        items = from_summary_on(items, summaries, agent)
    if agent == "copilot-cli" and summaries and items and items[0]["kind"] == "summary":  # N27
        items[0] = _item("summary", text=next(summary_core(s) for s in summaries if summary_core(s) in items[0]["text"]))
    return items, None


# ---- pi (pi_load's llm, details from out.jsonl)

def branch_messages(entries, leaf_id):
    """The messages of the message entries from the root to leaf_id, in order."""
    by_id = {e.get("id"): e for e in entries if e.get("type") != "session"}
    path, seen, at = [], set(), leaf_id
    while at is not None and at in by_id and at not in seen:
        seen.add(at)
        path.append(by_id[at])
        at = by_id[at].get("parentId")
    return [e["message"] for e in reversed(path) if e.get("type") == "message" and isinstance(e.get("message"), dict)]


def _blocks(content):
    return [{"type": "text", "text": content}] if isinstance(content, str) else [b for b in content or [] if isinstance(b, dict)]


def _stored_texts(message):
    return [b.get("text", "") for b in _blocks(message.get("content")) if b.get("type") == "text"]


def _stored_calls(message):
    return [b.get("id") for b in _blocks(message.get("content")) if b.get("type") == "toolCall"]


def pi_side(llm, stored):
    """Items of what pi sends: pi_load's `llm` messages, each with the details of the stored message
    it came from (see the docstring)."""
    out = Builder()
    used = set()
    pointer = {"user": 0, "assistant": 0}

    def find(role, match):
        for i in range(pointer[role], len(stored)):
            if i not in used and stored[i].get("role") == role and match(stored[i]):
                used.add(i)
                pointer[role] = i + 1
                return stored[i]
        return None

    for m in llm:
        role = m["role"]
        if role == "toolResult":
            index = next((i for i, s in enumerate(stored) if i not in used and s.get("role") == "toolResult"
                          and s.get("toolCallId") == m["toolResultId"]), None)
            if index is None:
                out.add(_item("result", text=_text("\n".join(m["texts"])), isError="not in out.jsonl: made up by pi-ai"))
                continue
            used.add(index)
            found = stored[index]
            blocks = _blocks(found.get("content"))
            out.add(_item("result", text=_text("\n".join(b.get("text", "") for b in blocks if b.get("type") == "text")),
                          isError=bool(found.get("isError"))))
            for b in blocks:
                if b.get("type") == "image":
                    out.add(_item("image", mediaType=b.get("mimeType")))
        elif role == "assistant":
            found = find("assistant", lambda s: _stored_texts(s) == m["texts"] and _stored_calls(s) == m["toolCallIds"])
            if found is None:
                for t in m["texts"]:
                    out.add(_item("assistant", text=_text(t)))
                for call_id in m["toolCallIds"]:
                    out.add(_item("call", name=f"? (call {call_id} not in out.jsonl)", arguments=None))
                continue
            for b in _blocks(found.get("content")):
                if b.get("type") == "thinking":
                    out.think(b.get("thinking"))
                elif b.get("type") == "text":
                    out.add(_item("assistant", text=_text(b.get("text"))))
                elif b.get("type") == "toolCall":
                    out.add(_item("call", name=b.get("name"), arguments=b.get("arguments")))
        else:  # user, and what convertToLlm makes a user message (compaction and branch summaries, ...)
            found = find("user", lambda s: _stored_texts(s) == m["texts"])
            blocks = _blocks(found.get("content")) if found else [{"type": "text", "text": t} for t in m["texts"]]
            for b in blocks:
                if b.get("type") == "image":
                    out.add(_item("image", mediaType=b.get("mimeType")))
                elif b.get("type") == "text":
                    text = _text(b.get("text"))
                    out.add(_item("summary" if text.startswith(PI_COMPACTION_PREFIX) else "user", text=text))
    return out.items


# ---------------------------------------------------------------- comparison

def same_item(expected, got):
    """Items equal, thinking left aside (N15); a summary matches by containment (N16); isError None on
    the stand-in side is not compared (N10)."""
    if expected["kind"] != got["kind"]:
        return False
    if expected["kind"] == "summary":
        return expected["text"] in got["text"]
    if expected["kind"] == "result" and expected["isError"] is None:
        return expected["text"] == got["text"]
    strip = lambda it: {k: v for k, v in it.items() if k != "thinking"}  # noqa: E731
    return strip(expected) == strip(got)


def render(item):
    if item is None:
        return "(nothing)"
    s = json.dumps(item, ensure_ascii=False, sort_keys=True)
    return s if len(s) <= CUT else s[:CUT] + "..."


def first_difference(expected, got):
    """None when the two item lists are the same conversation, else a line naming the first
    differing item of both sides (the stand-in's first)."""
    for i in range(max(len(expected), len(got))):
        a = expected[i] if i < len(expected) else None
        b = got[i] if i < len(got) else None
        if a is None or b is None or not same_item(a, b):
            return f"item {i}: the CLI sent {render(a)}; pi sends {render(b)}"
        if "thinking" in a and "thinking" in b and a["thinking"] != b["thinking"]:
            return f"item {i}: thinking before it: the CLI sent {a['thinking']!r}; pi sends {b['thinking']!r}"
    return None


def apply_allowed(expected, got, allowed):
    """Takes each listed item out of its side; returns (expected, got, problems) where a problem is a
    listed item that is not there any more."""
    expected, got, problems = list(expected), list(got), []
    for entry in allowed:
        side = expected if entry["side"] == "standin" else got
        index = next((i for i, it in enumerate(side) if it == entry["item"]), None)
        if index is None:
            problems.append(f"listed difference not seen any more ({entry['side']}): {render(entry['item'])}")
        else:
            del side[index]
    return expected, got, problems


def results_in_any_order(items):
    """N18: each run of consecutive tool results, in one canonical order."""
    out, run = [], []
    for item in items + [None]:
        if item is not None and item.get("kind") == "result":
            run.append(item)
            continue
        out.extend(sorted(run, key=lambda r: json.dumps(r, sort_keys=True)))
        run = []
        if item is not None:
            out.append(item)
    return out


def compare(expected, got, allowed=()):
    """Problems (empty: the same conversation)."""
    expected, got, problems = apply_allowed(expected, got, allowed)
    expected, got = results_in_any_order(expected), results_in_any_order(got)
    diff = first_difference(expected, got)
    return problems + ([diff] if diff else [])


# ---------------------------------------------------------------- the runs

def recordings(only):
    found = []
    if not os.path.isdir(RECORDINGS):
        return found
    for version_dir in sorted(os.listdir(RECORDINGS)):
        agent = next((a for a in TRANSCRIPTS if version_dir.startswith(a + "-")), None)
        if agent is None:
            continue
        for name in sorted(os.listdir(os.path.join(RECORDINGS, version_dir))):
            folder = os.path.join(RECORDINGS, version_dir, name)
            transcript = os.path.join(folder, TRANSCRIPTS[agent])
            if os.path.isfile(transcript) and (not only or only in f"{version_dir}/{name}"):
                found.append({"key": f"{version_dir}/{name}", "agent": agent, "name": name, "folder": folder,
                              "transcript": transcript, "scenario": os.path.join(AGENTS, agent, name + ".json")})
    return found


def read_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def convert(args, rec, box):
    """Step 1; returns (out path or None, problems)."""
    work = os.path.join(box, "work")
    os.makedirs(work, exist_ok=True)
    out = os.path.join(box, "out.jsonl")
    run = subprocess.run([args.pi_hydrate, "--session", rec["transcript"], "--cwd", work, "-o", out, "--force"],
                         cwd=work, capture_output=True, text=True, timeout=120)
    if run.returncode != 0:
        return None, [f"pi-hydrate --session exited {run.returncode}: {run.stderr.strip()[-400:]}"]
    check = subprocess.run([args.pi_hydrate, "validate", "--format", "json", out], cwd=work,
                           capture_output=True, text=True, timeout=120)
    try:
        report = json.loads(check.stdout)["files"][0]
    except (ValueError, KeyError, IndexError):
        return None, [f"pi-hydrate validate exited {check.returncode}: {check.stderr.strip()[:300]}"]
    errors = [d for d in report.get("diagnostics", []) if d.get("severity") == "error"]
    if report.get("errors") or errors:
        return None, [f"validate: {d.get('code')} at line {d.get('line')}: {d.get('message')}" for d in errors]
    export = os.path.join(rec["folder"], "export.json")
    if rec["agent"] in ("opencode", "kilo-cli") and os.path.isfile(export):
        # `opencode export` of the same session is the same conversation: the same bytes (docs/opencode.md).
        again = os.path.join(box, "out-export.jsonl")
        run = subprocess.run([args.pi_hydrate, "--session", export, "--cwd", work, "-o", again, "--force"],
                             cwd=work, capture_output=True, text=True, timeout=120)
        if run.returncode != 0:
            return None, [f"pi-hydrate --session export.json exited {run.returncode}: {run.stderr.strip()[-400:]}"]
        with open(out, "rb") as a, open(again, "rb") as b:
            if a.read() != b.read():
                return None, ["export.json converts to other bytes than the database"]
    return out, []


def load_all(world, version, outs, cwd):
    """pi `version`'s pi_load.mjs on every file in one node process; [(loaded line or None, why)]."""
    run = subprocess.run([world.node, LOADER, "--pi", os.path.join(world.args.pi_dest, f"pi-{version}"), "--full",
                          "--cwd", cwd] + outs, capture_output=True, text=True, timeout=60 + 20 * len(outs))
    lines = [line for line in run.stdout.split("\n") if line.strip()]  # not splitlines(): texts may hold U+2028
    if len(lines) != len(outs):
        return [(None, f"pi_load.mjs failed: {run.stderr.strip()[:300]}")] * len(outs)
    results = []
    for line in lines:
        loaded = json.loads(line)
        if loaded.get("llm") is None:
            results.append((None, f"pi {version} gives no request: {loaded.get('error') or loaded.get('llmError')}"))
        else:
            results.append((loaded, None))
    return results


def context_problems(rec, loaded, out, allowed):
    scenario = read_json(rec["scenario"]) if os.path.isfile(rec["scenario"]) else {}
    if not scenario:
        return [f"no scenario {os.path.relpath(rec['scenario'], ROOT)}"]
    expected, why = standin_side(rec["agent"], read_json(os.path.join(rec["folder"], "conversation.json")), scenario)
    if why:
        return [why]
    got = pi_side(loaded["llm"], branch_messages(read_jsonl(out), loaded.get("leafId")))
    if rec["agent"] == "copilot-cli":  # N28
        got = [it for i, it in enumerate(got) if not (it["kind"] == "image" and i and got[i - 1]["kind"] in ("result", "image"))]
    if rec["agent"] == "kilo-cli":
        got = [it for it in got if not (it["kind"] == "user" and REMINDER.match(it["text"]))]  # N29
    return compare(expected, got, allowed)


def resume_problems(world, rec, version, out, box, cli=False):
    work = os.path.join(box, "work")
    copy = os.path.join(box, f"resume-{version}.jsonl")
    shutil.copyfile(out, copy)
    run, _prompt, request = world.resume(version, APIS[rec["agent"]], copy, work, cli)
    if request is None:
        return [f"pi {version} sent no request (exit {run.returncode}): {run.stderr.strip()[-300:]}"]
    if request["status"] != 200:
        return [f"pi {version}: the stand-in refused the request: HTTP {request['status']} [{request['rule']}] {request['error']}"]
    if run.returncode != 0 or DEFAULT_REPLY not in run.stdout:
        return [f"pi {version} exited {run.returncode} without the reply: {run.stderr.strip()[-300:]}"]
    return []


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pi-hydrate", required=True)
    parser.add_argument("--pi-dest", help="where tests/conformance/install_pi.sh installed node and pi")
    parser.add_argument("--no-pi", action="store_true", help="only the conversion")
    parser.add_argument("--only", help="only recordings whose <agent>-<version>/<name> contains this")
    parser.add_argument("--jobs", type=int, default=4)
    parser.add_argument("--keep", metavar="DIR", help="keep every sandbox in DIR")
    args = parser.parse_args()
    args.pi_hydrate = os.path.abspath(args.pi_hydrate)
    if not args.no_pi:
        if not args.pi_dest:
            parser.error("--pi-dest is required unless --no-pi")
        args.pi_dest = os.path.abspath(args.pi_dest)
    found = recordings(args.only)
    if not found:
        print(f"agents: FAILED: no recordings under {os.path.relpath(RECORDINGS, ROOT)}")
        return 1
    allowed = read_json(DIFFERENCES) if os.path.isfile(DIFFERENCES) else {}
    tmp = os.path.abspath(args.keep) if args.keep else tempfile.mkdtemp(prefix="pihydrate-agents-")
    os.makedirs(tmp, exist_ok=True)
    columns = ["converted"] + ([] if args.no_pi else [f"context {v}" for v in CONTEXT_PIS] + [f"resumed {v}" for v in PI_VERSIONS])
    cells = {rec["key"]: {c: "-" for c in columns} for rec in found}
    problems = []

    def verdict(rec, column, mine):
        cells[rec["key"]][column] = "FAILED" if mine else "ok"
        problems.extend(f"FAIL {rec['key']} {column}: {p}" for p in mine)

    boxes, outs = {}, {}
    for rec in found:
        boxes[rec["key"]] = box = os.path.join(tmp, rec["key"].replace("/", "__"))
        out, mine = convert(args, rec, box)
        verdict(rec, "converted", mine)
        if out:
            outs[rec["key"]] = out
    if not args.no_pi and outs:
        with StandIn() as standin:
            world = World(args, standin, tempfile.mkdtemp(prefix="pi-", dir=tmp))
            converted = [rec for rec in found if rec["key"] in outs]
            with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
                versions_loads = pool.map(lambda v: (v, load_all(world, v, [outs[rec["key"]] for rec in converted], tmp)),
                                          CONTEXT_PIS)
                for version, loads in versions_loads:
                    for rec, (loaded, why) in zip(converted, loads):
                        verdict(rec, f"context {version}", [why] if why else
                                context_problems(rec, loaded, outs[rec["key"]], allowed.get(rec["key"], [])))
                jobs = [(rec, v, pool.submit(resume_problems, world, rec, v, outs[rec["key"]], boxes[rec["key"]]))
                        for rec in converted for v in PI_VERSIONS]
                for rec, v, job in jobs:
                    verdict(rec, f"resumed {v}", job.result())
            world.close()
            print(f"agents: pi resumed {world.starts['cli']} times as `pi --session -p` and {world.starts['rpc']} "
                  f"times over RPC in {world.rpc.started} RPC processes")
    width = max(len(rec["key"]) for rec in found) + 2
    print(f"{'recording':{width}}" + "".join(f"{c:>16}" for c in columns))
    for rec in found:
        print(f"{rec['key']:{width}}" + "".join(f"{cells[rec['key']][c]:>16}" for c in columns))
    for p in problems:
        print(p)
    if not args.keep:
        shutil.rmtree(tmp, ignore_errors=True)
    failed = sum(1 for rec in found if any(v == "FAILED" or (v == "-" and c == "converted")
                                           for c, v in cells[rec["key"]].items()))
    print(f"agents: {len(found) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
