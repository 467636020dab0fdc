#!/usr/bin/env python3
"""Records real Claude Code sessions against the scripted stand-in: the transcript the CLI wrote,
byte for byte, and the conversation the stand-in saw.

  claude_code_driver.py [--only NAME]... [--out DIR] [--cli PATH] [--keep]

For each scenario tests/agents/claude-code/<name>.json it
  - makes a fresh, fixed sandbox /tmp/pi-hydrate-agents/claude-code/<name>/ with work/ (the CLI's
    cwd, the scenario's files in it), home/ (HOME), config/ (CLAUDE_CONFIG_DIR) and tmp/ (TMPDIR);
  - starts the stand-in (tests/e2e/standin.py) with the scenario's script on a free port and runs
    `claude -p PROMPT --output-format stream-json --verbose` once per entry of `runs` (the first
    with a fixed --session-id, the next ones with --resume), with the scenario's tools allowed so
    Bash runs for real in work/;
  - copies config/projects/<encoded cwd>/<session id>.jsonl to DIR/claude-code-<version>/<name>/
    transcript.jsonl, the session's subagents/ beside it, and writes conversation.json: the
    requests the stand-in accepted, in order, each reduced to {seq, path, model, purpose,
    messages, tools} (the system prompt and the tool schemas are dropped, tools keep their names).

A scenario file holds:
  about    one line: what the recording shows
  files    {"path": "text"} or {"path": {"base64": "..."}}: made in work/ first
  args     extra CLI arguments for every run (e.g. ["--tools", "Bash"])
  runs     [{"prompt": "...", "args": [...], "images": ["pixel.png"]}]: one CLI process each, in
           order; a run with images sends its prompt as one stream-json user message (--input-format
           stream-json): the images from work/ as base64 blocks, then the text
  script   the stand-in's replies (standin_script.py); a reply may say "purpose" (the word
           conversation.json gives the request it answers; "main" by default) -- the driver
           removes it before the stand-in reads the script
DIR is tests/agents/recorded unless --out says otherwise. The CLI is the pinned version, installed
with npm into /tmp/pi-hydrate-agents/cli/claude-code-<version> when --cli is not given and it is
missing there. One line per scenario: NAME ok|failed RECORDS records REQUESTS requests, then the
reasons of a failure (the CLI exiting non-zero, a request the stand-in refused, a script reply left
unused).
"""
import argparse
import base64
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from scenario_driver import ScenarioError, read_scenario_file  # noqa: E402
from standin import StandIn  # noqa: E402
from standin_script import ScriptError, parse_script  # noqa: E402

VERSION = "2.1.331"  # @anthropic-ai/claude-code, pinned
PACKAGE = "@anthropic-ai/claude-code"
SANDBOX_ROOT = "/tmp/pi-hydrate-agents/claude-code"
CLI_CACHE = f"/tmp/pi-hydrate-agents/cli/claude-code-{VERSION}"
NODE_DIRS = [os.path.join(ROOT, "build", "pi", "node", "bin")]  # node >= 22 first on PATH
SCENARIOS = os.path.join(ROOT, "tests", "agents", "claude-code")
RECORDED = os.path.join(ROOT, "tests", "agents", "recorded")
MIME = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp"}
RUN_SECONDS = 180  # a guard against a CLI that never returns, not a measurement
SCENARIO_FIELDS = {"about", "files", "args", "runs", "script"}
# Every run: print mode, the stream on stdout, tools allowed without a prompt (root may not use
# --dangerously-skip-permissions), and the stand-in's model name.
BASE_ARGS = ["--output-format", "stream-json", "--verbose"]


def session_id(name):
    """A fixed session id per scenario, so its transcript path is the same in every recording."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"pi-hydrate/claude-code/{name}"))


def encoded_cwd(path):
    """Claude Code's project directory name for a cwd: every character not a letter or digit as '-'."""
    return re.sub(r"[^A-Za-z0-9]", "-", path)


def load_scenario(path):
    name = os.path.splitext(os.path.basename(path))[0]
    scenario = read_scenario_file(path, SCENARIO_FIELDS)
    if not isinstance(scenario.get("about"), str):
        raise ScenarioError(f"{path}: about: one line saying what the recording shows")
    if not scenario.get("runs") or any(not isinstance(r.get("prompt"), str) for r in scenario["runs"]):
        raise ScenarioError(f"{path}: runs: a list of {{\"prompt\": ...}}")
    try:
        parse_script(standin_script(scenario), f"{path}: script")
    except ScriptError as e:
        raise ScenarioError(str(e))
    scenario["name"] = name
    return scenario


def standin_script(scenario):
    """The script as the stand-in reads it: without the driver's own `purpose` field."""
    return [{k: v for k, v in r.items() if k != "purpose"} if isinstance(r, dict) else r
            for r in scenario.get("script", [])]


def purposes(scenario):
    return [(r.get("purpose", "main") if isinstance(r, dict) else "main") for r in scenario.get("script", [])]


def install_cli():
    cli = os.path.join(CLI_CACHE, "node_modules", ".bin", "claude")
    if not os.path.exists(cli):
        os.makedirs(CLI_CACHE, exist_ok=True)
        subprocess.run(["npm", "install", "--prefix", CLI_CACHE, "--no-audit", "--no-fund", f"{PACKAGE}@{VERSION}"],
                       check=True, env=cli_path_env(dict(os.environ)))
    return cli


def cli_path_env(env):
    env["PATH"] = os.pathsep.join([d for d in NODE_DIRS if os.path.isdir(d)] + [env.get("PATH", "/usr/bin:/bin")])
    return env


def make_sandbox(name, files):
    root = os.path.join(SANDBOX_ROOT, name)
    if os.path.exists(root):
        shutil.rmtree(root)
    box = {k: os.path.join(root, k) for k in ("work", "home", "config", "tmp", "requests", "stdout")}
    for d in box.values():
        os.makedirs(d)
    box["root"] = root
    for rel, content in (files or {}).items():
        target = os.path.join(box["work"], rel)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if isinstance(content, dict):
            with open(target, "wb") as f:
                f.write(base64.b64decode(content["base64"]))
        else:
            with open(target, "w") as f:
                f.write(content)
    return box


def prompt_blocks(run, workdir):
    """The content of a prompt with images: each image (read from work/) as a base64 block, then the text."""
    blocks = []
    for name in run["images"]:
        with open(os.path.join(workdir, name), "rb") as f:
            data = base64.b64encode(f.read()).decode()
        blocks.append({"type": "image", "source": {"type": "base64", "media_type": MIME[os.path.splitext(name)[1]], "data": data}})
    return blocks + [{"type": "text", "text": run["prompt"]}]


def cli_env(box, port):
    env = {"HOME": box["home"], "CLAUDE_CONFIG_DIR": box["config"], "PATH": "/usr/bin:/bin",
           "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}", "ANTHROPIC_API_KEY": "sk-ant-standin",
           "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1",
           "DISABLE_ERROR_REPORTING": "1", "LANG": "C.UTF-8", "TERM": "dumb", "SHELL": "/bin/bash",
           "TMPDIR": box["tmp"]}  # the CLI keeps subagent output files under $TMPDIR/claude-<uid>/
    return cli_path_env(env)


def system_message_try(entry):
    """True for the request Claude Code tries first in each process: the conversation with a message
    of role "system" (the environment, sent with the per-turn-control beta). The stand-in refuses
    that role as the Messages API without the beta does; the CLI then sends the same turn again with
    the environment as a <system-reminder> in the user message, and that is what the conversation
    records."""
    messages = (entry.get("body") or {}).get("messages") or []
    return entry.get("rule") == "role" and any(m.get("role") == "system" for m in messages)


def reduce_request(entry, purpose):
    body = entry["body"] or {}
    return {"seq": entry["seq"], "path": entry["path"], "model": body.get("model"), "purpose": purpose,
            "messages": body.get("messages"), "tools": [t.get("name") for t in body.get("tools") or []]}


def record(scenario, cli, out_dir):
    name = scenario["name"]
    box = make_sandbox(name, scenario.get("files"))
    sid = session_id(name)
    problems = []
    with StandIn(record_dir=box["requests"], script=standin_script(scenario)) as standin:
        env = cli_env(box, standin.port)
        for i, run in enumerate(scenario["runs"]):
            session = ["--session-id", sid] if i == 0 else ["--resume", sid]
            if run.get("images"):
                # A prompt with images goes in as one stream-json user message on stdin.
                argv = [cli, "-p", "--input-format", "stream-json"]
                stdin = (json.dumps({"type": "user", "message": {"role": "user", "content": prompt_blocks(run, box["work"])}})
                         + "\n").encode()
            else:
                argv, stdin = [cli, "-p", run["prompt"]], None
            argv += [*BASE_ARGS, *session, *scenario.get("args", []), *run.get("args", [])]
            with open(os.path.join(box["stdout"], f"run-{i + 1}.jsonl"), "wb") as out, \
                 open(os.path.join(box["stdout"], f"run-{i + 1}.stderr"), "wb") as err:
                try:
                    proc = subprocess.run(argv, cwd=box["work"], env=env, input=stdin, stdout=out,
                                          stderr=err, timeout=RUN_SECONDS)
                    if proc.returncode != 0:
                        problems.append(f"run {i + 1} exited {proc.returncode} (see {err.name})")
                except subprocess.TimeoutExpired:
                    problems.append(f"run {i + 1} did not finish in {RUN_SECONDS} s")
        requests = standin.requests()
        unused = standin.unused_replies()
    script_purposes = purposes(scenario)
    conversation = []
    for entry in requests:
        if entry["status"] != 200:
            if not system_message_try(entry):
                problems.append(f"request {entry['seq']} refused: {entry.get('rule')}: {entry.get('error')}")
            continue
        index = entry.get("script_index")
        conversation.append(reduce_request(entry, script_purposes[index] if index is not None else "unscripted"))
    if unused:
        problems.append(f"script replies never used: {unused}")
    unscripted = [r["seq"] for r in conversation if r["purpose"] == "unscripted"]
    if unscripted:
        problems.append(f"requests the script did not answer (the default text did): {unscripted}")
    project = os.path.join(box["config"], "projects", encoded_cwd(box["work"]))
    transcript = os.path.join(project, f"{sid}.jsonl")
    target = os.path.join(out_dir, f"claude-code-{VERSION}", name)
    if os.path.exists(target):
        shutil.rmtree(target)
    os.makedirs(target)
    records = 0
    if os.path.exists(transcript):
        shutil.copyfile(transcript, os.path.join(target, "transcript.jsonl"))
        with open(transcript, "rb") as f:
            records = sum(1 for _ in f)
    else:
        problems.append(f"no transcript at {transcript}")
    subagents = os.path.join(project, sid, "subagents")
    if os.path.isdir(subagents):
        shutil.copytree(subagents, os.path.join(target, "subagents"))
    others = sorted(set(glob.glob(os.path.join(project, "*.jsonl"))) - {transcript})
    if others:
        problems.append(f"other transcripts written: {[os.path.basename(o) for o in others]}")
    return finish(name, target, conversation, records, problems)


def finish(name, target, conversation, records, problems):
    """Writes conversation.json into `target` and prints the scenario's line and its problems; True when
    there are none. The drivers of other CLIs end a recording the same way."""
    with open(os.path.join(target, "conversation.json"), "w") as f:
        json.dump(conversation, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(f"{name} {'failed' if problems else 'ok'} {records} records {len(conversation)} requests", flush=True)
    for p in problems:
        print(f"  {p}", flush=True)
    return not problems


def scenarios_in(folder, only):
    """The scenarios of `folder` (all, or those `only` names), loaded and checked; exits 2 when `only`
    names one that is not there or a scenario is wrong."""
    paths = sorted(glob.glob(os.path.join(folder, "*.json")))
    if only:
        paths = [p for p in paths if os.path.splitext(os.path.basename(p))[0] in only]
        if len(paths) != len(set(only)):
            print(f"unknown scenario among {only}", file=sys.stderr)
            sys.exit(2)
    try:
        return [load_scenario(p) for p in paths]
    except ScenarioError as e:
        print(e, file=sys.stderr)
        sys.exit(2)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", metavar="NAME", action="append", help="only this scenario (repeatable)")
    parser.add_argument("--out", metavar="DIR", default=RECORDED)
    parser.add_argument("--cli", metavar="PATH", help=f"the claude executable (default: {PACKAGE}@{VERSION} from npm)")
    args = parser.parse_args()
    scenarios = scenarios_in(SCENARIOS, args.only)
    cli = args.cli or install_cli()
    ok = True
    for scenario in scenarios:
        ok = record(scenario, cli, args.out) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
