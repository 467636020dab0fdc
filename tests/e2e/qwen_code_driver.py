#!/usr/bin/env python3
"""Records real Qwen Code sessions against the scripted stand-in: the chat file the CLI wrote, byte
for byte, and the conversation the stand-in saw.

  qwen_code_driver.py [--only NAME]... [--out DIR] [--cli PATH] [--node-dir DIR]

For each scenario tests/agents/qwen-code/<name>.json (the fields of claude_code_driver.py's
scenarios: about, files, args, runs, script) it
  - makes a fresh, fixed sandbox /tmp/pi-hydrate-agents/qwen-code/<name>/ with work/ (the CLI's
    cwd, the scenario's files in it) and home/ (HOME: .qwen/settings.json chooses the OpenAI
    auth type and turns usage statistics, telemetry and auto-update off);
  - starts the stand-in (tests/e2e/standin.py) with the scenario's script on a free port and runs
    `qwen PROMPT --auth-type openai --approval-mode yolo --output-format json` once per entry of
    `runs` (the first with a fixed --session-id, the next ones with --resume), OPENAI_BASE_URL
    pointing at the stand-in's /v1 (Chat Completions), so the shell tool runs for real in work/;
  - copies home/.qwen/projects/<cwd>/chats/<session id>.jsonl to
    DIR/qwen-code-<version>/<name>/transcript.jsonl (the subagents' chats, home/.qwen/projects/<cwd>/
    subagents/, beside it) and writes conversation.json: the requests the
    stand-in accepted, in order, each reduced to {seq, path, model, purpose, messages, tools} (the
    system message's text and the tool schemas are dropped, tools keep their names).
A run's prompt may name a file of work/ as @FILE: Qwen Code reads it into the prompt (an image as
inline data), which is how an image reaches the model.
DIR is tests/agents/recorded unless --out says otherwise. The CLI is the pinned version, installed
with npm into /tmp/pi-hydrate-agents/cli/qwen-code-<version> when --cli is not given and it is
missing there; it needs node 22 (--node-dir, default build/pi/node/bin, goes first on PATH). One line
per scenario: NAME ok|failed RECORDS records REQUESTS requests, then the reasons of a failure.
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import claude_code_driver  # noqa: E402
from claude_code_driver import finish, make_sandbox, purposes, scenarios_in, standin_script  # noqa: E402
from standin import StandIn, script_chat_completions  # noqa: E402

VERSION = "0.24.4"  # @qwen-code/qwen-code, pinned
PACKAGE = "@qwen-code/qwen-code"
SANDBOX_ROOT = "/tmp/pi-hydrate-agents/qwen-code"
CLI_CACHE = f"/tmp/pi-hydrate-agents/cli/qwen-code-{VERSION}"
SCENARIOS = os.path.join(ROOT, "tests", "agents", "qwen-code")
RECORDED = os.path.join(ROOT, "tests", "agents", "recorded")
MODEL = "qwen3-coder-plus"
claude_code_driver.SANDBOX_ROOT = SANDBOX_ROOT  # make_sandbox's root: this CLI's own sandboxes
RUN_SECONDS = 180  # a guard against a CLI that never returns, not a measurement
BASE_ARGS = ["--auth-type", "openai", "--approval-mode", "yolo", "--output-format", "json"]
# No usage statistics, telemetry or update checks: nothing but the stand-in on loopback. No memory
# extraction either: after each turn it would run a subagent over the conversation, a side request
# per turn that is not the conversation.
SETTINGS = {"security": {"auth": {"selectedType": "openai"}},
            "memory": {"enableManagedAutoMemory": False, "enableManagedAutoDream": False},
            "privacy": {"usageStatisticsEnabled": False},
            "telemetry": {"enabled": False},
            "general": {"enableAutoUpdate": False, "disableAutoUpdate": True, "disableUpdateNag": True}}


def session_id(name):
    """A fixed session id per scenario, so its chat file's name is the same in every recording."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"pi-hydrate/qwen-code/{name}"))


def path_env(env, node_dir):
    env["PATH"] = os.pathsep.join(([node_dir] if os.path.isdir(node_dir) else []) + [env.get("PATH", "/usr/bin:/bin")])
    return env


def install_cli(node_dir):
    cli = os.path.join(CLI_CACHE, "node_modules", ".bin", "qwen")
    if not os.path.exists(cli):
        os.makedirs(CLI_CACHE, exist_ok=True)
        subprocess.run(["npm", "install", "--prefix", CLI_CACHE, "--no-audit", "--no-fund", f"{PACKAGE}@{VERSION}"],
                       check=True, env=path_env(dict(os.environ), node_dir))
    return cli


def cli_env(box, port, node_dir):
    env = {"HOME": box["home"], "PATH": "/usr/bin:/bin", "OPENAI_API_KEY": "sk-standin",
           "OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1", "OPENAI_MODEL": MODEL, "LANG": "C.UTF-8",
           "TERM": "dumb", "SHELL": "/bin/bash", "TMPDIR": box["tmp"], "NO_COLOR": "1"}
    return path_env(env, node_dir)


def reduce_request(entry, purpose):
    body = entry["body"] or {}
    messages = [{**m, "content": "(system prompt)"} if m.get("role") == "system" else m
                for m in body.get("messages") or []]
    return {"seq": entry["seq"], "path": entry["path"], "model": body.get("model"), "purpose": purpose,
            "messages": messages, "tools": [(t.get("function") or {}).get("name") for t in body.get("tools") or []]}


def record(scenario, cli, out_dir, node_dir):
    name = scenario["name"]
    box = make_sandbox(name, scenario.get("files"))
    os.makedirs(os.path.join(box["home"], ".qwen"))
    with open(os.path.join(box["home"], ".qwen", "settings.json"), "w") as f:
        json.dump(SETTINGS, f, indent=1)
    sid = session_id(name)
    problems = []
    with StandIn(record_dir=box["requests"], script=standin_script(scenario)) as standin:
        env = cli_env(box, standin.port, node_dir)
        for i, run in enumerate(scenario["runs"]):
            session = ["--session-id", sid] if i == 0 else ["--resume", sid]
            argv = [cli, run["prompt"], *BASE_ARGS, *session, *scenario.get("args", []), *run.get("args", [])]
            with open(os.path.join(box["stdout"], f"run-{i + 1}.json"), "wb") as out, \
                 open(os.path.join(box["stdout"], f"run-{i + 1}.stderr"), "wb") as err:
                try:
                    proc = subprocess.run(argv, cwd=box["work"], env=env, stdin=subprocess.DEVNULL, stdout=out,
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
            problems.append(f"request {entry['seq']} refused: {entry.get('rule')}: {entry.get('error')}")
            continue
        index = entry.get("script_index")
        conversation.append(reduce_request(entry, script_purposes[index] if index is not None else "unscripted"))
    if unused:
        problems.append(f"script replies never used: {unused}")
    unscripted = [r["seq"] for r in conversation if r["purpose"] == "unscripted"]
    if unscripted:
        problems.append(f"requests the script did not answer (the default text did): {unscripted}")
    found = glob.glob(os.path.join(box["home"], ".qwen", "projects", "*", "chats", f"{sid}.jsonl"))
    target = os.path.join(out_dir, f"qwen-code-{VERSION}", name)
    if os.path.exists(target):
        shutil.rmtree(target)
    os.makedirs(target)
    records = 0
    if len(found) == 1:
        shutil.copyfile(found[0], os.path.join(target, "transcript.jsonl"))
        with open(found[0], "rb") as f:
            records = sum(1 for _ in f)
        subagents = os.path.join(os.path.dirname(os.path.dirname(found[0])), "subagents")
        if os.path.isdir(subagents):  # the subagents' own chats: not the conversation, kept to read
            shutil.copytree(subagents, os.path.join(target, "subagents"))
        others = sorted(set(glob.glob(os.path.join(os.path.dirname(found[0]), "*.jsonl"))) - set(found))
        if others:
            problems.append(f"other chat files written: {[os.path.basename(o) for o in others]}")
    else:
        problems.append(f"no single chat file {sid}.jsonl under {box['home']}/.qwen/projects (found {found})")
    return finish(name, target, conversation, records, problems)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", metavar="NAME", action="append", help="only this scenario (repeatable)")
    parser.add_argument("--out", metavar="DIR", default=RECORDED)
    parser.add_argument("--cli", metavar="PATH", help=f"the qwen executable (default: {PACKAGE}@{VERSION} from npm)")
    parser.add_argument("--node-dir", metavar="DIR", default=os.path.join(ROOT, "build", "pi", "node", "bin"),
                        help="node 22's bin folder, first on PATH (default: build/pi/node/bin)")
    args = parser.parse_args()
    scenarios = scenarios_in(SCENARIOS, args.only)
    cli = args.cli or install_cli(args.node_dir)
    script_chat_completions()
    ok = True
    for scenario in scenarios:
        ok = record(scenario, cli, args.out, args.node_dir) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
