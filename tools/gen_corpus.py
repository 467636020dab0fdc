#!/usr/bin/env python3
"""Generates a realistic pi session (v3 JSONL) or the equivalent thread export, of a chosen size.

  tools/gen_corpus.py --kind KIND --size 256M --seed 1 [--cwd DIR] -o FILE
  KIND: session, session-small, session-big, thread, thread-chunky, thread-raw, session-v1, codex, claude-code,
        gemini-cli, qwen-code, events, events-noisy

The same size and seed always give the same bytes. The mix (docs/performance.md):
  - user turns, a few sentences each;
  - assistants with a thinking block, text and 1-3 tool calls (read, bash, edit, grep);
  - tool results with code-like text: quotes, backslashes, tabs, unicode; 5% of them isError;
  - about one tool result in 60 carries a base64 PNG-like image of 20-300 KB;
  - branches (every ~40 turns a user goes back two entries and the old branch is abandoned),
    a compaction every ~400 entries, labels, custom entries and a session_info.
session-small is a chain of short user messages (about 220 bytes a line: many small entries);
session-big a few turns whose tool results are big (0.25 to 2 MiB of code-like text each).
The thread export mirrors the same conversation: chat user turns, pi.chunk deltas for each
assistant, pi.assistant, pi.tool_result, chat echoes, pi.compaction; it has no branches.
thread-chunky is the same export as a mirror that kept every stream delta: each assistant's whole
text (up to 600 characters) comes as pi.chunk deltas of 20, so most entries are chunks.
thread-raw carries the session itself: each line of `session` as a raw pi.entry (docs/thread-export.md).
session-v1 writes the same kind of conversation (shorter tool output, no images) as an old v1 file, the way pi wrote
them before entries had ids: no version, the model and thinking level in the header, entries in
file order without id/parentId, thinking-level and model changes, bash executions, a compaction
every third turn whose firstKeptEntryIndex counts parsed lines from 0 with the header, and from the
fifth turn on, once, a tool call left without a result when the user interrupts. --cwd (default
/tmp) is the header cwd.
codex writes a Codex rollout made of real ones: the session_meta of a recording in
tests/agents/recorded/codex-0.169.0/, then the other lines of those recordings, one recording after
another in an order the seed draws, each time with fresh call ids (a call and its output keep one id).
claude-code, gemini-cli and qwen-code do the same with the recordings of tests/agents/recorded/
(claude-code-2.1.331, gemini-cli-0.61.0, qwen-code-0.24.4): every copy gets fresh record, message and
call ids and the first copy's session id; a copy's first record continues the chain where the copy
before ended, and so does any other root but a compaction's (Claude Code, Qwen Code); the Gemini CLI header is written once, and only the first copy
keeps its $set message lists (a later one would replace the conversation so far).
events writes a pi event capture made of the RPC and json-mode recordings of
tests/scenarios/recorded/pi-1.6.0/*/events.jsonl the same way: one session header, the other copies'
headers and session-changing responses left out, fresh ids. events-noisy is the same capture with
three lines of stderr after each event (npm's and node's warnings mixed into a captured stdout),
which the reader skips, each with a warning.
"""
import hashlib
import io
import argparse
import base64
import json
import pathlib
import random
import re

WORDS = ("the of and to in is that for it as with was on be at by this had not are but from or have an they "
         "which one you were all her she there would their we him been has when who will more no if out so said what "
         "up its about into than them can only other new some could time these two may then do first any my now "
         "such like our over man me even most made after also did many before must through back years where much "
         "your way well down should because each just those people how too little state good very make world still "
         "own see men work long get here between both life being under never day same another know while last").split()
CODE = [
    'export function parse(input: string): Node[] {\n\tconst out: Node[] = [];\n\tfor (const line of input.split("\\n")) {\n',
    '\tif (line.startsWith("#")) continue; // comments\n\tout.push({ kind: "line", text: line.replace(/\\s+$/, "") });\n',
    'def load(path):\n    with open(path, "r", encoding="utf-8") as f:\n        return [json.loads(l) for l in f if l.strip()]\n',
    'SELECT id, name FROM users WHERE email LIKE \'%@example.com\' ORDER BY id;\n',
    '  "path": "C:\\\\Users\\\\dev\\\\proj",\t"ok": true, "ratio": 0.1, "eps": 1e-7\n',
    'error: expected `;` after expression — café — 数据 — 🙂 — Ünïcödé\n',
    '    at Object.<anonymous> (/repo/src/index.ts:42:17)\n    at Module._compile (node:internal/modules/cjs/loader:1105:14)\n',
]
TOOLS = ["read", "bash", "edit", "grep", "write"]


def sentence(rng, n):
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def code_text(rng, lines):
    return "".join(rng.choice(CODE) for _ in range(lines))


def usage(rng):
    i, o = rng.randint(500, 90000), rng.randint(20, 4000)
    return {"input": i, "output": o, "cacheRead": rng.randint(0, i), "cacheWrite": 0, "totalTokens": i + o,
            "cost": {"input": round(i * 3e-6, 6), "output": round(o * 1.5e-5, 6), "cacheRead": 0, "cacheWrite": 0,
                     "total": round(i * 3e-6 + o * 1.5e-5, 6)}}


class Conversation:
    """Yields (kind, payload) events in conversation order; both writers consume them.
    `max_code_lines` bounds tool output, `images` allows image results; `interrupted` leaves a turn's
    last call without a result."""

    def __init__(self, rng, max_code_lines=120, images=True):
        self.rng = rng
        self.ms = 1795000000000
        self.call = 0
        self.max_code_lines = max_code_lines
        self.images = images

    def tick(self, lo=200, hi=20000):
        self.ms += self.rng.randint(lo, hi)
        return self.ms

    def turn(self, interrupted=False):
        rng = self.rng
        yield "user", {"role": "user", "content": [{"type": "text", "text": " ".join(sentence(rng, rng.randint(6, 30)) for _ in range(rng.randint(1, 4)))}], "timestamp": self.tick()}
        steps = rng.randint(1, 4)
        for step in range(steps):
            calls = []
            for _ in range(rng.randint(1, 3)):
                self.call += 1
                tool = rng.choice(TOOLS)
                args = {"path": f"src/mod{rng.randint(0, 99)}/file{rng.randint(0, 999)}.ts"} if tool != "bash" else {"command": f"npm test -- --grep 'case {rng.randint(0, 999)}'"}
                calls.append({"type": "toolCall", "id": f"toolu_{self.call:08d}{rng.randint(0, 1 << 30):08x}", "name": tool, "arguments": args})
            content = [{"type": "thinking", "thinking": sentence(rng, rng.randint(20, 120)), "thinkingSignature": "sig" + str(rng.randint(0, 1 << 40))},
                       {"type": "text", "text": sentence(rng, rng.randint(5, 40))}] + calls
            yield "assistant", {"role": "assistant", "content": content, "api": "anthropic-messages", "provider": "anthropic",
                                "model": "claude-sonnet-4-5", "usage": usage(rng), "stopReason": "toolUse", "timestamp": self.tick()}
            for c in calls:
                if interrupted and step == steps - 1 and c is calls[-1]:
                    return  # the user interrupts before this call's result
                blocks = [{"type": "text", "text": code_text(rng, rng.randint(4, self.max_code_lines))}]
                if rng.random() < 1 / 60 and self.images:
                    size = rng.randint(20_000, 300_000)
                    blocks.append({"type": "image", "mimeType": "image/png", "data": base64.b64encode(rng.randbytes(size * 3 // 4)).decode()})
                yield "toolResult", {"role": "toolResult", "toolCallId": c["id"], "toolName": c["name"], "content": blocks,
                                     "isError": rng.random() < 0.05, "timestamp": self.tick(50, 3000)}
        yield "assistant", {"role": "assistant", "content": [{"type": "text", "text": " ".join(sentence(rng, rng.randint(8, 40)) for _ in range(rng.randint(1, 5)))}],
                            "api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5",
                            "usage": usage(rng), "stopReason": "stop", "timestamp": self.tick()}


def iso(ms):
    import datetime
    return datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def dumps(obj):
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def write_session(out, target, rng):
    conv = Conversation(rng)
    out.write(dumps({"type": "session", "version": 3, "id": "019b0000-0000-7000-8000-%012x" % rng.randint(0, 1 << 48),
                     "timestamp": iso(conv.ms), "cwd": "/tmp"}) + "\n")
    written, n, ids = 0, 0, []
    used = set()
    parent = None

    def entry(kind, **fields):
        nonlocal written, n, parent
        n += 1
        eid = "%08x" % rng.getrandbits(32)
        while eid in used:  # pi's generateId also retries: ids are unique within a session
            eid = "%08x" % rng.getrandbits(32)
        used.add(eid)
        line = dumps({"type": kind, "id": eid, "parentId": parent, "timestamp": iso(conv.ms), **fields}) + "\n"
        out.write(line)
        written += len(line.encode())
        ids.append(eid)
        parent = eid
        return eid

    entry("model_change", provider="anthropic", modelId="claude-sonnet-4-5")
    entry("thinking_level_change", thinkingLevel="medium")
    turns = 0
    while written < target:
        turns += 1
        if turns % 40 == 0 and len(ids) > 4:
            parent = ids[-3]  # go back: the last two entries become an abandoned branch
        if turns % 25 == 0:
            entry("label", targetId=ids[-1], label=f"checkpoint-{turns}")
        if turns % 30 == 0:
            entry("custom", customType="ext.state", data={"turn": turns, "flags": [1, 2, 3]})
        if n > 0 and turns % 150 == 0:
            kept = ids[max(0, len(ids) - 20)]
            entry("compaction", summary=" ".join(sentence(rng, 30) for _ in range(10)), firstKeptEntryId=kept, tokensBefore=rng.randint(100000, 180000))
        for _kind, message in conv.turn():
            entry("message", message=message)
    entry("session_info", name="Generated session (seed %d)" % rng.seed_value)


def write_session_shape(out, target, rng, shape):
    """session-small: a chain of short user messages; session-big: turns with one big tool result."""
    conv = Conversation(rng)
    out.write(dumps({"type": "session", "version": 3, "id": "019b0000-0000-7000-8000-%012x" % rng.randint(0, 1 << 48),
                     "timestamp": iso(conv.ms), "cwd": "/tmp"}) + "\n")
    written, n, parent = 0, 0, None

    def entry(message):
        nonlocal written, n, parent
        n += 1
        eid = "%08x" % n  # unique: the entry's number
        line = dumps({"type": "message", "id": eid, "parentId": parent, "timestamp": iso(conv.ms), "message": message}) + "\n"
        out.write(line)
        written += len(line.encode())
        parent = eid

    def assistant(content, stop):
        return {"role": "assistant", "content": content, "api": "anthropic-messages", "provider": "anthropic",
                "model": "claude-sonnet-4-5", "usage": usage(rng), "stopReason": stop, "timestamp": conv.tick()}

    while written < target:
        if shape == "small":
            entry({"role": "user", "content": [{"type": "text", "text": sentence(rng, rng.randint(3, 12))}], "timestamp": conv.tick()})
            continue
        entry({"role": "user", "content": [{"type": "text", "text": sentence(rng, rng.randint(6, 30))}], "timestamp": conv.tick()})
        conv.call += 1
        call = {"type": "toolCall", "id": f"toolu_{conv.call:08d}", "name": "read", "arguments": {"path": f"src/big{conv.call}.ts"}}
        entry(assistant([{"type": "text", "text": sentence(rng, 10)}, call], "toolUse"))
        entry({"role": "toolResult", "toolCallId": call["id"], "toolName": "read",
               "content": [{"type": "text", "text": code_text(rng, rng.randint(2500, 20000))}], "isError": False, "timestamp": conv.tick()})
        entry(assistant([{"type": "text", "text": sentence(rng, rng.randint(8, 40))}], "stop"))


def write_session_v1(out, target, rng, cwd):
    conv = Conversation(rng, max_code_lines=12, images=False)
    out.write(dumps({"type": "session", "id": "%08x-%04x-4%03x-8%03x-%012x" % (rng.getrandbits(32), rng.getrandbits(16), rng.getrandbits(12),
                                                                         rng.getrandbits(12), rng.getrandbits(48)),
                     "timestamp": iso(conv.ms), "cwd": cwd, "provider": "anthropic", "modelId": "claude-sonnet-4-5",
                     "thinkingLevel": "off"}) + "\n")
    written, index = 0, 0  # index: the last entry's position among parsed lines (the header is 0)

    def entry(kind, **fields):
        nonlocal written, index
        index += 1
        line = dumps({"type": kind, "timestamp": iso(conv.ms), **fields}) + "\n"
        out.write(line)
        written += len(line.encode())

    turns, last_turn_start, interrupted, interrupt = 0, 1, False, False
    while written < target or interrupt:  # a turn follows the interrupted one
        turns += 1
        if turns == 2:
            entry("thinking_level_change", thinkingLevel="high")
        if turns % 3 == 0:  # keeps the turn before it
            entry("compaction", summary=" ".join(sentence(rng, 30) for _ in range(4)),
                  firstKeptEntryIndex=last_turn_start, tokensBefore=rng.randint(100000, 180000))
        if turns == 4:
            entry("model_change", provider="anthropic", modelId="claude-opus-4-5")
        last_turn_start = index + 1
        if turns % 4 == 0:
            conv.tick()
            entry("message", message={"role": "bashExecution", "command": "git status --short", "output": " M src/index.ts\n",
                                      "exitCode": 0, "cancelled": False, "truncated": False, "timestamp": conv.ms})
        interrupt = turns >= 5 and not interrupted
        interrupted = interrupted or interrupt
        for _kind, message in conv.turn(interrupted=interrupt):
            if turns >= 4 and message["role"] == "assistant":
                message["model"] = "claude-opus-4-5"
            entry("message", message=message)


def write_thread(out, target, rng, streamed=60):
    conv = Conversation(rng)
    tid = "thr_%08x" % rng.getrandbits(32)
    out.write('{"format":"thread-export","version":1,"thread":' + dumps(
        {"id": tid, "title": "Generated thread", "createdAt": iso(conv.ms), "cwd": "/sandbox/repo",
         "model": {"provider": "anthropic", "modelId": "claude-sonnet-4-5"}, "thinkingLevel": "medium"}) + ',"entries":[\n')
    written, idx, first, msg = 0, 0, True, 0

    def env(obj):
        nonlocal written, first
        line = ("" if first else ",\n") + dumps(obj)
        first = False
        out.write(line)
        written += len(line.encode())

    turns = 0
    while written < target:
        turns += 1
        for kind, message in conv.turn():
            if kind == "user":
                msg += 1
                env({"id": f"msg_{msg}", "kind": "chat", "role": "user", "ts": iso(message["timestamp"]), "text": message["content"][0]["text"]})
            elif kind == "assistant":
                text = message["content"][1]["text"] if len(message["content"]) > 1 else message["content"][0]["text"]
                for k in range(0, min(len(text), streamed), 20):
                    env({"id": f"{tid}:pi:idx:{idx}", "kind": "pi.chunk", "ts": message["timestamp"], "data": {"streamKey": message["timestamp"], "event": {"type": "text_delta", "contentIndex": 0, "delta": text[k:k + 20]}}})
                    idx += 1
                env({"id": f"{tid}:pi:idx:{idx}", "kind": "pi.assistant", "ts": iso(message["timestamp"]), "data": {"message": message}})
                idx += 1
                if message["stopReason"] == "stop" and rng.random() < 0.5:
                    msg += 1
                    env({"id": f"msg_{msg}", "kind": "chat", "role": "assistant", "ts": iso(message["timestamp"]), "text": message["content"][0]["text"], "piRef": f"{tid}:pi:idx:{idx - 1}"})
            else:
                env({"id": f"{tid}:pi:idx:{idx}", "kind": "pi.tool_result", "ts": iso(message["timestamp"]), "data": {"message": message}})
                idx += 1
        if turns % 150 == 0:
            env({"id": f"{tid}:pi:idx:{idx}", "kind": "pi.compaction", "data": {"reason": "threshold", "aborted": False,
                 "firstKeptRef": f"msg_{msg}", "result": {"summary": " ".join(sentence(rng, 30) for _ in range(10)), "tokensBefore": 150000}}})
            idx += 1
    out.write("\n]}\n")


CODEX_RECORDINGS = pathlib.Path(__file__).resolve().parent.parent / "tests/agents/recorded/codex-0.169.0"


def write_codex(out, target, rng):
    rollouts = [p.read_text(encoding="utf-8").splitlines(keepends=True) for p in sorted(CODEX_RECORDINGS.glob("*/rollout.jsonl"))]
    bodies = [[line for line in lines if json.loads(line)["type"] != "session_meta"] for lines in rollouts]
    first = rng.randrange(len(rollouts))
    header = rollouts[first][0]
    out.write(header)
    written, copy, ordinal = len(header.encode()), 0, 0
    while written < target:
        copy += 1
        for line in bodies[first if copy == 1 else rng.randrange(len(bodies))]:
            # call_01_2 -> call_000007_01_2: unique in the file, the same in a call and its output.
            line = re.sub(r'"call_([0-9]+_[0-9]+)"', lambda m: f'"call_{copy:06d}_{m.group(1)}"', line)
            ordinal += 1  # Codex numbers a rollout's lines
            line = re.sub(r'^(\{"timestamp":"[^"]*","ordinal":)[0-9]+', lambda m: m.group(1) + str(ordinal), line)
            out.write(line)
            written += len(line.encode())


RECORDED = pathlib.Path(__file__).resolve().parent.parent / "tests/agents/recorded"
SCENARIOS = pathlib.Path(__file__).resolve().parent.parent / "tests/scenarios/recorded/pi-1.6.0"
UUID = re.compile(r'"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})"')
ID_KEYS = re.compile(r'"(id|tool_use_id|toolCallId|callId|call_id|messageId|requestId)":"([^"\\]+)"')


def fresh_ids(line, copy, keep):
    """The line with its ids made unique to copy `copy` (the same id gives the same new one); `keep`: uuids left as
    they are (the session's id)."""
    if copy == 1:
        return line
    def uuid(m):
        if m.group(1) in keep:
            return m.group(0)
        h = hashlib.md5(f"{copy}:{m.group(1)}".encode()).hexdigest()
        return f'"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"'
    line = UUID.sub(uuid, line)
    return ID_KEYS.sub(lambda m: m.group(0) if UUID.fullmatch(f'"{m.group(2)}"') else f'"{m.group(1)}":"{m.group(2)}_{copy:06d}"', line)


def write_recordings(out, target, rng, files, kind, noisy=False):
    """Copies of the recordings in `files`, in an order the seed draws, until `target` bytes are written;
    `noisy`: three lines of stderr after each line."""
    recordings = [[l for l in p.read_text(encoding="utf-8").splitlines(keepends=True) if l.strip()] for p in files]
    first = rng.randrange(len(recordings))
    session_id = None
    written, copy, last_uuid = 0, 0, None
    while written < target:
        copy += 1
        lines = recordings[first if copy == 1 else rng.randrange(len(recordings))]
        for line in lines:
            record = json.loads(line)
            if kind == "gemini-cli":
                if "projectHash" in record:  # the header
                    if copy > 1:
                        continue
                    session_id = record["sessionId"]
                elif copy > 1 and "messages" in record.get("$set", {}):
                    continue
            elif kind == "events":
                if record.get("type") == "session":
                    if session_id is not None:
                        continue
                    session_id = record.get("id")
                if record.get("type") == "response" and record.get("command") in ("new_session", "switch_session", "fork", "clone", "get_state"):
                    continue
            else:
                session_id = session_id or record.get("sessionId")
            line = fresh_ids(line, copy, {session_id})
            if session_id is not None:
                line = re.sub(r'"sessionId":"[^"]*"', f'"sessionId":"{session_id}"', line)
            if kind in ("claude-code", "qwen-code"):
                record = json.loads(line)
                # A root (not a compaction's, not a sidechain's) continues the chain so far: one conversation.
                if ("parentUuid" in record and record["parentUuid"] is None and last_uuid is not None
                        and not record.get("logicalParentUuid") and not record.get("isSidechain")):
                    line = line.replace('"parentUuid":null', f'"parentUuid":"{last_uuid}"', 1)
                if record.get("uuid") and not record.get("isSidechain"):
                    last_uuid = record["uuid"]
            if noisy:
                warnings = "".join(f"npm warn retry {copy}.{n}: socket hang up, retrying in {n % 7 + 1}s\n"
                                   for n in range(3))
                line += warnings
            out.write(line)
            written += len(line.encode())


def recorded_files(kind):
    if kind == "events":
        return sorted(SCENARIOS.glob("*/events.jsonl"))
    folder = {"claude-code": "claude-code-2.1.331", "gemini-cli": "gemini-cli-0.61.0", "qwen-code": "qwen-code-0.24.4"}[kind]
    name = {"claude-code": "transcript.jsonl", "gemini-cli": "session.jsonl", "qwen-code": "transcript.jsonl"}[kind]
    return sorted((RECORDED / folder).glob(f"*/{name}"))


def write_thread_raw(out, target, rng):
    """A thread export that carries a generated session line by line as raw pi.entry entries."""
    session = io.StringIO()
    write_session(session, target, rng)
    out.write('{"format":"thread-export","version":1,"thread":' + dumps(
        {"id": "thr_%08x" % rng.getrandbits(32), "title": "Generated thread", "createdAt": iso(1795000000000),
         "cwd": "/sandbox/repo"}) + ',"entries":[\n')
    written = 0
    for n, line in enumerate(session.getvalue().splitlines()):
        text = ("" if n == 0 else ",\n") + dumps({"id": f"raw-{n}", "kind": "pi.entry", "data": {"line": line}})
        out.write(text)
        written += len(text.encode())
        if written >= target:
            break
    out.write("\n]}\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kind", choices=["session", "session-small", "session-big", "thread", "thread-chunky",
                                       "thread-raw", "session-v1", "codex", "claude-code", "gemini-cli", "qwen-code",
                                       "events", "events-noisy"], default="session")
    ap.add_argument("--size", default="16M", help="target size: bytes, or with K/M/G")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cwd", default="/tmp", help="session-v1: the header cwd")
    ap.add_argument("-o", "--output", required=True)
    a = ap.parse_args()
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    size = int(a.size[:-1]) * mult[a.size[-1].upper()] if a.size[-1].upper() in mult else int(a.size)
    rng = random.Random(a.seed)
    rng.seed_value = a.seed
    with open(a.output, "w", encoding="utf-8", newline="\n") as out:
        if a.kind == "session-v1":
            write_session_v1(out, size, rng, a.cwd)
        elif a.kind in ("session-small", "session-big"):
            write_session_shape(out, size, rng, a.kind[len("session-"):])
        elif a.kind == "codex":
            write_codex(out, size, rng)
        elif a.kind in ("claude-code", "gemini-cli", "qwen-code", "events"):
            write_recordings(out, size, rng, recorded_files(a.kind), a.kind)
        elif a.kind == "events-noisy":
            write_recordings(out, size, rng, recorded_files("events"), "events", noisy=True)
        elif a.kind == "thread-chunky":
            write_thread(out, size, rng, streamed=600)
        elif a.kind == "thread-raw":
            write_thread_raw(out, size, rng)
        else:
            (write_session if a.kind == "session" else write_thread)(out, size, rng)


if __name__ == "__main__":
    main()
