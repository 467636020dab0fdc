#!/usr/bin/env python3
"""A reference mirror: what a chat product that watches pi should put in a thread export.

  mirror.py EVENTS [--session FILE [--raw-from N]] [--thread-id ID] [-o OUT]

EVENTS is pi's stdout in `--mode json` or `--mode rpc` (docs/events.md). The export it writes
(docs/thread-export.md) has:
  - the lossy kinds, from the events alone: pi.user, pi.assistant and pi.tool_result from each
    message_end, pi.compaction from compaction_end, pi.chunk for a stream the capture cut off, and
    the thread's title, model and thinking level from session_info_changed, set_model and
    get_state responses and thinking_level_changed (the rules of docs/events.md, so that
    `pi-hydrate --events` on the same stream writes the same session);
  - with --session (the session file pi wrote, which a mirror can read as pi appends to it), also a
    pi.entry for every line of that file, each sent when the message event it belongs to arrives:
    hydration then puts pi's own session back together (rules X1-X7). With --raw-from N, raw entries
    start at the Nth message event (0-based), as from a mirror upgraded mid-thread.

It is a model to read, not a product: it keeps everything in memory and trusts its input.
"""
import argparse
import json
import sys


def read_jsonl(path):
    """The JSON objects of a JSONL file, split on LF only (pi's framing); other lines are skipped."""
    with open(path, "rb") as f:
        data = f.read()
    objects = []
    for raw in data.split(b"\n"):
        raw = raw.rstrip(b"\r")
        if not raw.strip():
            continue
        try:
            value = json.loads(raw)
        except ValueError:
            continue  # stderr mixed into stdout, say
        if isinstance(value, dict):
            objects.append(value)
    return objects


def session_lines(path):
    """The session file's lines, as pi wrote them (no newline), and each one's parsed entry."""
    with open(path, encoding="utf-8") as f:
        lines = [line.rstrip("\r") for line in f.read().split("\n") if line.strip()]
    return [(line, json.loads(line)) for line in lines]


class Mirror:
    def __init__(self, thread_id=None):
        self.thread = {"id": thread_id} if thread_id else {}
        self.entries = []
        self.stream = None  # the open assistant stream: [(streamKey, assistantMessageEvent)]

    def add(self, kind, data):
        self.entries.append({"id": f"m{len(self.entries) + 1}", "kind": kind, "data": data})

    def end_stream(self, interrupted):
        """An assistant stream that ends without its message_end leaves its deltas as pi.chunk (R6)."""
        if self.stream and interrupted:
            for key, event in self.stream:
                self.add("pi.chunk", {"streamKey": key, "event": event} if key is not None else {"event": event})
        self.stream = None

    def on_event(self, event):
        kind = event.get("type")
        if kind == "session":  # json mode's first line
            self.end_stream(True)
            self.thread.setdefault("id", event.get("id"))
            self.thread.setdefault("createdAt", event.get("timestamp"))
            self.thread.setdefault("cwd", event.get("cwd"))
        elif kind == "response" and event.get("success"):
            data = event.get("data") or {}
            if event.get("command") == "get_state":
                self.thread.setdefault("id", data.get("sessionId"))
                self.take_model(data.get("model"))
                if data.get("thinkingLevel"):
                    self.thread["thinkingLevel"] = data["thinkingLevel"]
            elif event.get("command") == "set_model":
                self.take_model(data)
        elif kind == "message_start" and (event.get("message") or {}).get("role") == "assistant":
            self.end_stream(True)
            self.stream = []
            self.stream_key = event["message"].get("timestamp")
        elif kind == "message_update" and self.stream is not None:
            self.stream.append((self.stream_key, event.get("assistantMessageEvent")))
        elif kind == "message_end":
            message = event.get("message") or {}
            role = message.get("role")
            if role == "assistant":
                self.end_stream(False)
            target = {"user": "pi.user", "assistant": "pi.assistant", "toolResult": "pi.tool_result"}.get(role)
            if target:
                self.add(target, {"message": message})
            # system: pi builds its prompt afresh on every request; custom and bashExecution messages
            # are left to pi-hydrate --events, which knows their text (docs/events.md).
        elif kind == "compaction_end" and isinstance(event.get("result"), dict):
            self.add("pi.compaction", {"reason": event.get("reason"), "aborted": False, "result": event["result"]})
        elif kind == "session_info_changed" and event.get("name"):
            self.thread["title"] = event["name"]
        elif kind == "thinking_level_changed" and event.get("level"):
            self.thread["thinkingLevel"] = event["level"]

    def take_model(self, model):
        """The model pi uses from here on (the thread's model: the trailer's model_change, R12)."""
        if isinstance(model, dict) and model.get("provider") and model.get("id"):
            self.thread["model"] = {"provider": model["provider"], "modelId": model["id"]}
            if model.get("api"):
                self.thread["model"]["api"] = model["api"]

    def export(self, events_bytes):
        self.end_stream(True)
        if not self.thread.get("id"):
            # As pi-hydrate --events names it (docs/events.md, E2): FNV-1a over the capture's bytes.
            h = 0xCBF29CE484222325
            for byte in events_bytes:
                h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
            self.thread["id"] = f"capture-{h:016x}"
        thread = {k: v for k, v in self.thread.items() if v is not None}
        return {"format": "thread-export", "version": 1, "thread": thread, "entries": self.entries}


def message_key(message):
    return (message.get("role"), message.get("timestamp"))


def mirror(events_path, session_path=None, raw_from=0, thread_id=None):
    events = read_jsonl(events_path)
    with open(events_path, "rb") as f:
        events_bytes = f.read()
    m = Mirror(thread_id)
    pending = session_lines(session_path) if session_path else []
    message_events = 0

    def send_raw_up_to(message):
        """The lines pi wrote up to and including this message's entry, as pi.entry."""
        key = message_key(message)
        for i, (_, entry) in enumerate(pending):
            if entry.get("type") == "message" and message_key(entry.get("message") or {}) == key:
                for line, _ in pending[: i + 1]:
                    m.add("pi.entry", {"line": line})
                del pending[: i + 1]
                return

    for event in events:
        m.on_event(event)
        if event.get("type") == "message_end" and session_path:
            if message_events >= raw_from:
                send_raw_up_to(event.get("message") or {})
            else:
                # Not upgraded yet: the lines up to here are never sent.
                key = message_key(event.get("message") or {})
                for i, (_, entry) in enumerate(pending):
                    if entry.get("type") == "message" and message_key(entry.get("message") or {}) == key:
                        del pending[: i + 1]
                        break
            message_events += 1
    for line, _ in pending:  # what pi wrote after the last message (a compaction, a name, a label)
        m.add("pi.entry", {"line": line})
    return m.export(events_bytes)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("events", help="pi's stdout in --mode json or --mode rpc")
    parser.add_argument("--session", help="the session file pi wrote: add its lines as raw pi.entry entries")
    parser.add_argument("--raw-from", type=int, default=0, metavar="N",
                        help="with --session: send raw entries from the Nth message event on (default 0)")
    parser.add_argument("--thread-id", help="the thread's id (default: pi's session id)")
    parser.add_argument("-o", "--output", help="write here instead of standard output")
    args = parser.parse_args()
    export = mirror(args.events, args.session, args.raw_from, args.thread_id)
    text = json.dumps(export, indent=1, ensure_ascii=False) + "\n"
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
