#!/usr/bin/env python3
"""What pi does with the system prompt a session stores when it resumes in another directory: run by
hand (it runs the real pi), to check what README.md says about it.

  tests/scenarios/resume_elsewhere.py [--pi-dest build/pi]

For each pi version it takes the recorded prompt-text session, rewrites its header's cwd to a new
directory (as hydration with --cwd does), once as it is and once without its stored system message
(the next entry re-parented), resumes it there with `pi --mode json --session FILE -p`
against the stand-in (which answers with a `pwd` tool call), and prints: the directory the tool ran
in, which cwd the system prompt pi sent names, and the entries pi appended (a system entry's
sections by name).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
import scenario_driver as driver  # noqa: E402
from standin import StandIn  # noqa: E402


def without_system_message(lines):
    """The lines without pi 1.5.2's stored system message, the next entry taking its parent."""
    out, dropped = [], None
    for line in lines:
        entry = json.loads(line)
        if (entry.get("message") or {}).get("role") == "system":
            dropped = entry
            continue
        if dropped is not None and entry.get("parentId") == dropped["id"]:
            entry["parentId"] = dropped["parentId"]
            line = json.dumps(entry, separators=(",", ":")).encode() + b"\n"
        out.append(line)
    return out


def resume(pi_dest, version, drop_system):
    box = driver.Sandbox("resume-elsewhere", None, None, driver.PORT)
    recorded = os.path.join(HERE, "recorded", f"pi-{version}", "prompt-text", "session.jsonl")
    old_cwd = os.path.join(driver.SANDBOX_ROOT, "prompt-text", "work")
    new_cwd = os.path.join(box.root, "elsewhere")
    os.makedirs(new_cwd)
    session = os.path.join(box.root, "session.jsonl")
    with open(recorded, "rb") as f:
        lines = f.read().splitlines(keepends=True)
    header = json.loads(lines[0])
    header["cwd"] = new_cwd
    lines[0] = json.dumps(header, separators=(",", ":")).encode() + b"\n"
    if drop_system:
        lines = without_system_message(lines)
    with open(session, "wb") as f:
        f.write(b"".join(lines))
    node = os.path.join(pi_dest, "node", "bin", "node")
    argv = [node, *driver.NODE_FLAGS, driver.pi_cli(pi_dest, version), "--mode", "json", "--offline",
            "--model", driver.MODEL, "--session", session, "-p", "Where are you?"]
    script = [{"tool_calls": [{"name": "bash", "arguments": {"command": "pwd"}}]}, "Here."]
    with StandIn(port=driver.PORT, script=script) as standin:
        run = subprocess.run(argv, cwd=new_cwd, env=box.env, capture_output=True, timeout=driver.WAIT_SECONDS)
        requests = standin.requests()
    if run.returncode != 0 or not requests:
        print(f"pi {version}: exited {run.returncode}: {run.stderr.decode(errors='replace')[-300:]}")
        return
    system = json.dumps(requests[-1]["body"].get("system"))
    results = [b for m in requests[-1]["body"]["messages"] if isinstance(m["content"], list)
               for b in m["content"] if b.get("type") == "tool_result"]
    print(f"pi {version}{', stored system message dropped' if drop_system else ''}:")
    print(f"  the tool ran in: {results[0]['content'].strip() if results else '?'}")
    print(f"  the system prompt sent names the old cwd: {old_cwd in system}, the new cwd: {new_cwd in system}")
    with open(session, "rb") as f:
        appended = [json.loads(line) for line in f.read().splitlines()[len(lines):]]
    for entry in appended:
        message = entry.get("message") or {}
        extra = f" sections {sorted(message.get('sections') or {})}" if message.get("role") == "system" else ""
        print(f"  appended: {entry['type']} {message.get('role', '')}{extra}")
    shutil.rmtree(box.root, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pi-dest", default=os.path.join(ROOT, "build", "pi"))
    args = parser.parse_args()
    for version in driver.PI_VERSIONS:
        resume(args.pi_dest, version, False)
    resume(args.pi_dest, "1.5.2", True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
