#!/usr/bin/env python3
"""Records the real Gemini CLI (`gemini -p`) against the scripted stand-in: its chat log, byte for
byte, and the conversation the stand-in saw.

  python3 tests/e2e/gemini_cli_driver.py [--only NAME] [--out DIR] [--cli PATH]

For each scenario tests/agents/gemini-cli/<name>.json it
  - makes a fresh, fixed sandbox /tmp/pi-hydrate-agents/gemini-cli/<name>/ with work/ (the CLI's cwd,
    the scenario's files in it) and home/ (HOME, holding .gemini/settings.json: the API key auth,
    usage statistics, telemetry and auto-update off, and the scenario's own settings merged in);
  - starts the stand-in (tests/e2e/standin.py) with the scenario's script on a fixed port, recording
    every request (GOOGLE_GEMINI_BASE_URL points the CLI at it, GEMINI_API_KEY is any value);
  - runs each step: the first as `gemini -p PROMPT`, later ones as `gemini -r SESSION_ID -p PROMPT`,
    each with -m gemini-2.5-pro --approval-mode yolo --skip-trust --output-format json (tools run for
    real in work/); a step's images are named in its prompt as @FILE, which the CLI reads. A step
    with "refused": true is one the API refuses (Gemini CLI 0.61.0's resume after a tool call sends
    a result twice): the CLI must exit non-zero and the stand-in must have answered 400;
  - copies the main chat log ($HOME/.gemini/tmp/<project>/chats/session-*.jsonl, the largest) to
    DIR/gemini-cli-<version>/<name>/session.jsonl (the stray logs a resume starts, to stray/; a
    subagent's log, under chats/<session id>/, to subagents/) and writes conversation.json: the requests the stand-in saw, in order, each
    reduced to {"seq", "path", "model", "purpose", "status", "rule", "contents", "tools"} (the system
    instruction and the tool schemas dropped, the `contents` as sent; countTokens requests left out).
DIR is tests/agents/recorded unless --out says otherwise. The CLI is the pinned GEMINI_VERSION:
--cli PATH, or an npm install into /tmp/pi-hydrate-agents/cli/gemini-cli-<version>.
Prints one line per scenario: NAME ok|failed REQUESTS requests LINES log lines.
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from scenario_driver import (ScenarioError, agent_sandbox, copy_into, driver_arguments, find_pinned_cli,  # noqa: E402
                             fresh_dir, load_steps_scenario, record_steps, write_conversation)
from standin import StandIn  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))
GEMINI_VERSION = "0.61.0"
NPM_PACKAGE = "@google/gemini-cli"
PORT = 47341  # fixed, so what the CLI writes is the same in every recording
MODEL = "gemini-2.5-pro"
SANDBOX_ROOT = "/tmp/pi-hydrate-agents/gemini-cli"
CLI_CACHE = f"/tmp/pi-hydrate-agents/cli/gemini-cli-{GEMINI_VERSION}"
NODE_DIRS = [os.path.join(ROOT, "build", "pi", "node", "bin"), "/work/suite-speed/build/pi/node/bin"]
SCENARIOS = os.path.join(ROOT, "tests", "agents", "gemini-cli")
STEP_SECONDS = 180  # a guard against a run that never ends, not a measurement
SCENARIO_FIELDS = {"about", "settings", "files", "steps", "script", "purposes"}
STEP_FIELDS = {"prompt", "refused"}
SETTINGS = {"security": {"auth": {"selectedType": "gemini-api-key"}},
            "privacy": {"usageStatisticsEnabled": False},
            "telemetry": {"enabled": False},
            "general": {"enableAutoUpdate": False}}


def load_scenario(path):
    return load_steps_scenario(path, SCENARIO_FIELDS, STEP_FIELDS, "{\"prompt\": str, \"refused\": bool}")


def find_cli(explicit):
    """The pinned Gemini CLI: --cli, the one installed before, or an npm install into the cache dir."""
    return find_pinned_cli(explicit, CLI_CACHE, "gemini", NPM_PACKAGE, GEMINI_VERSION, "Gemini CLI", NODE_DIRS,
                           lambda out: out.splitlines()[-1])


def merged(base, extra):
    out = dict(base)
    for k, v in (extra or {}).items():
        out[k] = merged(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def prepare(scenario):
    """A fresh sandbox; returns (base, work, home)."""
    box = agent_sandbox(os.path.join(SANDBOX_ROOT, scenario["name"]), ("work", "home"), scenario.get("files"))
    os.makedirs(os.path.join(box["home"], ".gemini"))
    with open(os.path.join(box["home"], ".gemini", "settings.json"), "w") as f:
        json.dump(merged(SETTINGS, scenario.get("settings")), f, indent=1)
    return box["root"], box["work"], box["home"]


def purpose_of(entry, purposes):
    """"main", or the scenario's word for a side request: the first purpose whose `when` text the
    request's last content holds (purposes: [{"when": text, "purpose": word}, ...])."""
    contents = (entry["body"] or {}).get("contents") or []
    text = json.dumps(contents[-1] if contents else None)
    for p in purposes:
        if p["when"] in text:
            return p["purpose"]
    return "main"


def reduced(entry, purposes):
    """A request as conversation.json keeps it: the contents as sent; the system instruction (the
    CLI's prompt) and the tool schemas dropped."""
    body = entry["body"] or {}
    model = entry["path"].rsplit("/", 1)[-1].split(":", 1)[0]
    tools = [d.get("name") for t in body.get("tools") or [] for d in t.get("functionDeclarations") or []]
    return {"seq": entry["seq"], "path": entry["path"], "model": model, "purpose": purpose_of(entry, purposes),
            "status": entry["status"], "rule": entry["rule"], "contents": body.get("contents"), "tools": tools}


def run_scenario(scenario, cli, env, out_root):
    base, work, home = prepare(scenario)
    env = dict(env, HOME=home, GEMINI_API_KEY="standin-dummy-key",
               GOOGLE_GEMINI_BASE_URL=f"http://127.0.0.1:{PORT}", NO_COLOR="1")
    for key in ("GOOGLE_API_KEY", "GOOGLE_CLOUD_PROJECT", "GOOGLE_GENAI_USE_VERTEXAI", "GEMINI_CLI_TRUST_WORKSPACE"):
        env.pop(key, None)
    logs, session_id = [], None
    with tempfile.TemporaryDirectory(prefix="gemini-standin-") as record_dir:
        with StandIn(record_dir, port=PORT, script=scenario.get("script", [])) as standin:
            for i, step in enumerate(scenario["steps"]):
                argv = [cli] + (["-r", session_id] if i else [])
                argv += ["-p", step["prompt"], "-m", MODEL, "--approval-mode", "yolo", "--skip-trust",
                         "--output-format", "json"]
                before = len(standin.requests())
                proc = subprocess.run(argv, cwd=work, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                                      text=True, timeout=STEP_SECONDS)
                logs.append(f"$ step {i}: rc={proc.returncode}\n{proc.stdout}\n{proc.stderr}")
                refused = [r for r in standin.requests()[before:] if r["status"] == 400]
                if step.get("refused"):
                    if proc.returncode == 0 or not refused:
                        raise ScenarioError(f"step {i} was to be refused by the API; rc={proc.returncode}, "
                                            f"{len(refused)} refusals")
                elif proc.returncode != 0:
                    raise ScenarioError(f"step {i} exited {proc.returncode}:\n{proc.stdout[-1500:]}\n{proc.stderr[-1500:]}")
                if session_id is None:
                    try:
                        session_id = json.loads(proc.stdout)["session_id"]
                    except (ValueError, KeyError, TypeError):
                        raise ScenarioError(f"step {i}: no session_id in the CLI's JSON output:\n{proc.stdout[-1500:]}")
            requests = standin.requests()
            unused = standin.unused_replies()
    with open(os.path.join(base, "gemini.log"), "w") as f:
        f.write("\n".join(logs))
    logs_found = glob.glob(os.path.join(home, ".gemini", "tmp", "*", "chats", "session-*.jsonl"))
    # A resume also starts a second, empty recording of the same session (its header and a fresh
    # <session_context>), in a file of its own when the minute changed: the main log is the largest.
    logs_found.sort(key=lambda p: (-os.path.getsize(p), p))
    if not logs_found:
        raise ScenarioError("the CLI wrote no chat log")
    strays = logs_found[1:]
    unexpected = [r for r in requests if r["api"] is None or (r["rule"] is not None and r["rule"] != "response-count")]
    if unexpected:
        raise ScenarioError("the stand-in rejected: " + "; ".join(f"{r['seq']}: {r['rule']}: {r['error']}" for r in unexpected))
    if unused:
        raise ScenarioError(f"script replies never used: {unused}")
    dest = fresh_dir(os.path.join(out_root, f"gemini-cli-{GEMINI_VERSION}", scenario["name"]))
    shutil.copyfile(logs_found[0], os.path.join(dest, "session.jsonl"))
    copy_into(os.path.join(dest, "stray"), strays)
    chats = os.path.dirname(logs_found[0])
    copy_into(os.path.join(dest, "subagents"), sorted(glob.glob(os.path.join(chats, "*", "*.jsonl"))))  # a subagent's own log
    purposes = scenario.get("purposes", [])
    # countTokens (the CLI counts a request with an image before it sends it) is no turn of the conversation.
    write_conversation(dest, [reduced(r, purposes) for r in requests if not r["path"].endswith(":countTokens")])
    with open(logs_found[0], "rb") as f:
        lines = f.read().count(b"\n")
    return len(requests), lines


def main():
    args = driver_arguments(__doc__, os.path.join(ROOT, "tests", "agents", "recorded"),
                            f"the gemini binary (Gemini CLI {GEMINI_VERSION})").parse_args()
    return record_steps("gemini_cli_driver.py", args, SCENARIOS, find_cli, load_scenario, run_scenario, "log lines")


if __name__ == "__main__":
    sys.exit(main())
