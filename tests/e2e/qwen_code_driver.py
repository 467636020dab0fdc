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
from claude_code_driver import load_scenario  # noqa: E402
from scenario_driver import (agent_sandbox, driver_arguments, finish, fresh_dir, install_cli, path_env,  # noqa: E402
                             record_each, run_cli, scenarios_in, scripted_conversation, standin_script)
from standin import StandIn, script_chat_completions  # noqa: E402

VERSION = "0.24.4"  # @qwen-code/qwen-code, pinned
PACKAGE = "@qwen-code/qwen-code"
SANDBOX_ROOT = "/tmp/pi-hydrate-agents/qwen-code"
CLI_CACHE = f"/tmp/pi-hydrate-agents/cli/qwen-code-{VERSION}"
SCENARIOS = os.path.join(ROOT, "tests", "agents", "qwen-code")
RECORDED = os.path.join(ROOT, "tests", "agents", "recorded")
MODEL = "qwen3-coder-plus"
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


def cli_env(box, port, node_dir):
    env = {"HOME": box["home"], "PATH": "/usr/bin:/bin", "OPENAI_API_KEY": "sk-standin",
           "OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1", "OPENAI_MODEL": MODEL, "LANG": "C.UTF-8",
           "TERM": "dumb", "SHELL": "/bin/bash", "TMPDIR": box["tmp"], "NO_COLOR": "1"}
    return path_env(env, [node_dir])


def reduce_request(entry, purpose):
    body = entry["body"] or {}
    messages = [{**m, "content": "(system prompt)"} if m.get("role") == "system" else m
                for m in body.get("messages") or []]
    return {"seq": entry["seq"], "path": entry["path"], "model": body.get("model"), "purpose": purpose,
            "messages": messages, "tools": [(t.get("function") or {}).get("name") for t in body.get("tools") or []]}


def record(scenario, cli, out_dir, node_dir):
    name = scenario["name"]
    box = agent_sandbox(os.path.join(SANDBOX_ROOT, name), ("work", "home", "config", "tmp", "requests", "stdout"),
                        scenario.get("files"))
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
            run_cli(argv, box, env, i + 1, ".json", RUN_SECONDS, problems, stdin=subprocess.DEVNULL)
        requests = standin.requests()
        unused = standin.unused_replies()
    conversation = scripted_conversation(scenario, requests, unused, reduce_request, problems)
    found = glob.glob(os.path.join(box["home"], ".qwen", "projects", "*", "chats", f"{sid}.jsonl"))
    target = os.path.join(out_dir, f"qwen-code-{VERSION}", name)
    fresh_dir(target)
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
    parser = driver_arguments(__doc__, RECORDED, f"the qwen executable (default: {PACKAGE}@{VERSION} from npm)")
    parser.add_argument("--node-dir", metavar="DIR", default=os.path.join(ROOT, "build", "pi", "node", "bin"),
                        help="node 22's bin folder, first on PATH (default: build/pi/node/bin)")
    args = parser.parse_args()
    scenarios = scenarios_in(SCENARIOS, args.only, load_scenario)
    cli = args.cli or install_cli(CLI_CACHE, os.path.join("node_modules", ".bin", "qwen"), PACKAGE, VERSION,
                                  path_env(dict(os.environ), [args.node_dir]))
    script_chat_completions()
    return record_each(scenarios, lambda scenario: record(scenario, cli, args.out, args.node_dir))


if __name__ == "__main__":
    sys.exit(main())
