#!/usr/bin/env python3
"""Records real GitHub Copilot CLI sessions against the scripted stand-in: the session's events.jsonl
as the CLI left it, and the conversation the stand-in saw.

  copilot_cli_driver.py [--only NAME]... [--out DIR] [--cli PATH]

For each scenario tests/agents/copilot-cli/<name>.json it
  - makes a fresh, fixed sandbox /tmp/pi-hydrate-agents/copilot-cli/<name>/ with work/ (the CLI's
    cwd, the scenario's files in it) and home/ (HOME; the CLI keeps its sessions in
    home/.copilot/session-state/<session id>/);
  - starts the stand-in (tests/e2e/standin.py) with the scenario's script on a free port and runs
    `copilot -p PROMPT --allow-all-tools --output-format json` once per entry of `runs` (the next
    ones with --resume=ID, the id the first run printed last), offline: a custom Anthropic provider
    (COPILOT_PROVIDER_TYPE=anthropic, COPILOT_PROVIDER_BASE_URL the stand-in, any key), no login,
    telemetry or update (COPILOT_OFFLINE=true, --no-auto-update, --disable-client-telemetry);
  - copies events.jsonl and workspace.yaml of that session to DIR/copilot-cli-<version>/<name>/ and
    writes conversation.json: the requests the stand-in accepted, in order, each reduced to {seq,
    path, model, purpose, messages, tools} (the system prompt and the tool schemas are dropped).

A scenario file holds:
  about    one line: what the recording shows
  files    {"path": "text"} or {"path": {"base64": "..."}}: made in work/ first
  runs     [{"prompt": "...", "args": [...]}]: one CLI process each, in order
  script   the stand-in's replies (standin_script.py); a reply may say "purpose" (the word
           conversation.json gives the request it answers; "main" by default)
DIR is tests/agents/recorded unless --out says otherwise. The CLI is the pinned version, installed
with npm into /tmp/pi-hydrate-agents/cli/copilot-cli-<version> when --cli is not given and it is
missing there (its program unpacks itself once into that folder's cache/). One line per scenario:
NAME ok|failed EVENTS events REQUESTS requests, then the reasons of a failure.
"""
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from scenario_driver import (agent_sandbox, driver_arguments, finish, fresh_dir, install_cli,  # noqa: E402
                             load_runs_scenario, path_env, record_each, reduce_messages_request, run_cli,
                             scenarios_in, scripted_conversation, standin_script)
from standin import StandIn  # noqa: E402

VERSION = "1.0.102"  # @github/copilot, pinned; the program is in @github/copilot-linux-x64
PACKAGE = "@github/copilot"
SANDBOX_ROOT = "/tmp/pi-hydrate-agents/copilot-cli"
CLI_CACHE = f"/tmp/pi-hydrate-agents/cli/copilot-cli-{VERSION}"
NODE_DIRS = [os.path.join(ROOT, "build", "pi", "node", "bin"), "/work/suite-speed/build/pi/node/bin"]
SCENARIOS = os.path.join(ROOT, "tests", "agents", "copilot-cli")
RECORDED = os.path.join(ROOT, "tests", "agents", "recorded")
MODEL = "claude-sonnet-4.5"
RUN_SECONDS = 180  # a guard against a CLI that never returns, not a measurement
SCENARIO_FIELDS = {"about", "files", "runs", "script"}


def cli_env(box, port):
    env = path_env(dict(os.environ), NODE_DIRS)
    for key in list(env):
        if key.startswith(("COPILOT_", "GH_", "GITHUB_")):
            del env[key]
    env.update({"HOME": box["home"], "TMPDIR": box["tmp"], "NO_COLOR": "1",
                # The program unpacks itself once, beside the install, not in every sandbox.
                "XDG_CACHE_HOME": os.path.join(CLI_CACHE, "cache"),
                "COPILOT_OFFLINE": "true", "COPILOT_AUTO_UPDATE": "false",
                "COPILOT_PROVIDER_TYPE": "anthropic", "COPILOT_PROVIDER_BASE_URL": f"http://127.0.0.1:{port}",
                "COPILOT_PROVIDER_API_KEY": "standin-dummy-key", "COPILOT_MODEL": MODEL})
    return env


def session_of(stdout_path):
    """The session id the CLI prints last: {"type": "result", "sessionId": ...}."""
    with open(stdout_path, encoding="utf-8", errors="replace") as f:
        for line in reversed(f.read().splitlines()):
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if isinstance(event, dict) and event.get("type") == "result" and isinstance(event.get("sessionId"), str):
                return event["sessionId"]
    return None


def record(scenario, cli, out_dir):
    name = scenario["name"]
    box = agent_sandbox(os.path.join(SANDBOX_ROOT, name), ("work", "home", "tmp", "requests", "stdout"),
                        scenario.get("files"))
    problems = []
    sid = None
    with StandIn(record_dir=box["requests"], script=standin_script(scenario)) as standin:
        env = cli_env(box, standin.port)
        for i, run in enumerate(scenario["runs"]):
            argv = [cli] + ([f"--resume={sid}"] if i > 0 and sid else [])
            argv += ["-p", run["prompt"], "--allow-all-tools", "--output-format", "json", "--no-auto-update",
                     "--disable-client-telemetry"] + run.get("args", [])
            out_path = run_cli(argv, box, env, i + 1, ".jsonl", RUN_SECONDS, problems, stdin=subprocess.DEVNULL)
            if i == 0:
                sid = session_of(out_path)
                if sid is None:
                    problems.append(f"run 1 printed no session id (see {out_path})")
        requests = standin.requests()
        unused = standin.unused_replies()
    conversation = scripted_conversation(scenario, requests, unused, reduce_messages_request, problems)
    target = fresh_dir(os.path.join(out_dir, f"copilot-cli-{VERSION}", name))
    folder = os.path.join(box["home"], ".copilot", "session-state", sid or "-")
    events = 0
    if os.path.exists(os.path.join(folder, "events.jsonl")):
        for f in ("events.jsonl", "workspace.yaml"):
            if os.path.exists(os.path.join(folder, f)):
                shutil.copyfile(os.path.join(folder, f), os.path.join(target, f))
        with open(os.path.join(target, "events.jsonl"), "rb") as f:
            events = f.read().count(b"\n")
    else:
        problems.append(f"no events.jsonl in {folder}")
    return finish(name, target, conversation, events, problems, unit="events")


def main():
    args = driver_arguments(__doc__, RECORDED, f"the copilot program (default: {PACKAGE}@{VERSION} from npm)").parse_args()
    scenarios = scenarios_in(SCENARIOS, args.only, lambda p: load_runs_scenario(p, SCENARIO_FIELDS))
    cli = args.cli or install_cli(CLI_CACHE, os.path.join("node_modules", ".bin", "copilot"), PACKAGE, VERSION,
                                  path_env(dict(os.environ), NODE_DIRS))
    return record_each(scenarios, lambda scenario: record(scenario, cli, args.out))


if __name__ == "__main__":
    sys.exit(main())
