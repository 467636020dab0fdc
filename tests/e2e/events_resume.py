#!/usr/bin/env python3
"""End-to-end for --events: the real pi resumes what pi-hydrate rebuilt from its own event stream.

  events_resume.py --pi-dest build/pi --pi-hydrate build/pi-hydrate

For each successful case of tests/golden/events (captures of real pi runs, docs/events.md), it
hydrates the capture into a sandbox and runs `pi --session S -p PROMPT` there against the strict
stand-in (standin.py), with the pi version that made the capture and with pi 1.6.0 (the newest pi
resuming what an older one captured), over RPC (resume.py, pi_rpc.py; the suite's real
`pi --session FILE -p` start of an event capture is e2e_recorded's). Each run must be accepted by the
stand-in, and pi must send, before the new prompt, the conversation the capture shows: the messages
of its message_end events (user, assistant, tool result, in order), and for a cut-off capture
hydrated with --partial text, the text its unfinished assistant had streamed. The capture is the
reference here, read independently of pi-hydrate's code: a user shell command (RPC bash) is the user
message pi makes of it (bashExecutionToText), its output from the command's response, its command
from the command record beside it, or, without one, the words docs/events.md E6 gives instead.

The last line is `events e2e: N passed, M failed`; exit status 0 when nothing failed.
"""
import argparse
import json
import os
import shutil
import sys
import tempfile
import types

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CASES = os.path.join(ROOT, "tests", "golden", "events")
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "conformance"))
import conformance  # noqa: E402
import sent  # noqa: E402
from resume import PI_VERSIONS, World  # noqa: E402
from standin import DEFAULT_REPLY, StandIn  # noqa: E402

API = "anthropic-messages"
NEWEST = next(iter(PI_VERSIONS))  # resumes every capture, whichever pi made it


def texts(content):
    if isinstance(content, str):
        return [content]
    return [b.get("text", "") for b in content or [] if b.get("type") == "text"]


UNRECORDED_COMMAND = "Ran a shell command the capture did not record"  # docs/events.md E6


def shell_text(head, result):
    """pi's user text for a user shell command (bashExecutionToText), after its first line `head`."""
    output = result.get("output")
    text = f"{head}\n" + (f"```\n{output}\n```" if output else "(no output)")
    if result.get("cancelled"):
        text += "\n\n(command cancelled)"
    elif result.get("exitCode") not in (None, 0):
        text += f"\n\nCommand exited with code {result['exitCode']}"
    if result.get("truncated") and result.get("fullOutputPath"):
        text += f"\n\n[Output truncated. Full output: {result['fullOutputPath']}]"
    return text


def from_capture(path, partial_text):
    """The conversation a capture shows, in stand-in summary form (sent._message)."""
    out, streaming, commands = [], None, {}
    with open(path, encoding="utf-8-sig") as f:
        for line in f:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if isinstance(event, dict) and "type" not in event:
                event = event.get("event") or event.get("data") or {}
            kind = event.get("type")
            if kind == "bash" and "command" in event:  # the integration's command record
                commands[event.get("id")] = event
                continue
            if kind == "response" and event.get("command") == "bash" and event.get("success"):
                record = commands.get(event.get("id"))
                if not (record or {}).get("excludeFromContext"):
                    head = f"Ran `{record['command']}`" if record else UNRECORDED_COMMAND
                    out.append(sent._message("user", [shell_text(head, event.get("data") or {})]))
                continue
            message = event.get("message") or {}
            if kind == "message_start" and message.get("role") == "assistant":
                streaming = []
            elif kind == "message_update" and streaming is not None:
                delta = event.get("assistantMessageEvent", {})
                if delta.get("type") == "text_delta":
                    streaming.append(delta.get("delta", ""))
            elif kind == "message_end":
                role = message.get("role")
                if role == "assistant":
                    streaming = None
                    calls = [b["id"] for b in message.get("content", []) if b.get("type") == "toolCall"]
                    out.append(sent._message("assistant", texts(message.get("content")), calls))
                elif role == "user":
                    out.append(sent._message("user", texts(message.get("content"))))
                elif role == "toolResult":
                    out.append(sent._message("toolResult", texts(message.get("content")), (), message.get("toolCallId")))
    if partial_text and streaming:
        out.append(sent._message("assistant", ["".join(streaming)]))
    return out


def version_of(words):
    return "0.78.0" if "0.78" in words else "1.5.2"


def check(world, case, version, cli):
    words = conformance.read_cmd(case)[1:]
    stdin_path = None
    if "<" in words:
        stdin_path = os.path.join(case, words[-1])
        words = words[:-2]
    flag = "--events" if "--events" in words else "--session"  # --session finds a capture by itself
    capture = stdin_path or os.path.join(case, words[words.index(flag) + 1])
    box = world.sandbox(os.path.basename(case))
    workdir = os.path.join(box, "work")
    session = os.path.join(box, "s.jsonl")
    argv = list(words)
    argv[argv.index("-o") + 1] = session
    argv[argv.index("--cwd") + 1] = workdir
    made = world.hydrate(argv + ["--force"], case, stdin_path)
    if made.returncode != 0:
        return [f"pi-hydrate exited {made.returncode}: {made.stderr.decode()[:300]}"]
    run, prompt, request = world.resume(version, API, session, workdir, cli)
    if request is None:
        return [f"pi {version} sent no request (exit {run.returncode}): {run.stderr.strip()[:300]}"]
    problems = []
    if request["status"] != 200:
        problems.append(f"the stand-in rejected the request: HTTP {request['status']} [{request['rule']}] {request['error']}")
    if run.returncode != 0 or DEFAULT_REPLY not in run.stdout:
        problems.append(f"pi {version} exited {run.returncode} without the reply: {run.stderr.strip()[:300]}")
    expected = from_capture(capture, "--partial" in words and words[words.index("--partial") + 1] == "text")
    expected.append(sent._message("user", [prompt]))
    got = sent.conversation(request["api"], request["body"])
    a, b = sent.comparable(API, expected), sent.comparable(API, got)
    if a != b:
        diff = next((f"message {i}: the capture has {json.dumps(x)[:240]}, pi sent {json.dumps(y)[:240]}"
                     for i, (x, y) in enumerate(zip(a, b)) if x != y),
                    f"the capture has {len(a)} messages, pi sent {len(b)}")
        problems.append(diff)
    if not problems:
        shutil.rmtree(box, ignore_errors=True)
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pi-dest", required=True)
    parser.add_argument("--pi-hydrate", required=True)
    args = parser.parse_args()
    args.pi_dest = os.path.abspath(args.pi_dest)
    args.pi_hydrate = os.path.abspath(args.pi_hydrate)
    cases = [c for c in conformance.case_dirs("events") if conformance.expected_exit(c) == 0]
    runs = []
    for case in cases:
        made_by = version_of(conformance.read_cmd(case)[1:])
        runs += [(case, version) for version in dict.fromkeys([made_by, NEWEST])]
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp, StandIn() as standin:
        world = World(types.SimpleNamespace(pi_dest=args.pi_dest, pi_hydrate=args.pi_hydrate, keep=False), standin, tmp)
        for case, version in runs:
            problems = check(world, case, version, False)
            name = f"{os.path.relpath(case, CASES)} (pi {version})"
            if problems:
                failed += 1
                print(f"FAIL {name}: " + "; ".join(problems))
            else:
                passed += 1
                print(f"ok   {name}")
        world.close()
    print(f"events e2e: pi resumed {world.starts['cli']} times as `pi --session -p` and {world.starts['rpc']} times "
          f"over RPC in {world.rpc.started} RPC processes")
    print(f"events e2e: {passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
