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
import argparse
import base64
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from scenario_driver import ScenarioError, read_scenario_file  # noqa: E402
from standin import StandIn  # noqa: E402
from standin_script import ScriptError, parse_script  # noqa: E402

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
    name = os.path.splitext(os.path.basename(path))[0]
    scenario = read_scenario_file(path, SCENARIO_FIELDS)
    if not scenario.get("steps"):
        raise ScenarioError(f"{path}: steps: at least one prompt")
    for i, step in enumerate(scenario["steps"]):
        if not isinstance(step, dict) or not isinstance(step.get("prompt"), str) or set(step) - STEP_FIELDS:
            raise ScenarioError(f"{path}: steps[{i}]: {{\"prompt\": str, \"refused\": bool}} expected")
    try:
        parse_script(scenario.get("script", []), f"{path}: script")
    except ScriptError as e:
        raise ScenarioError(str(e))
    scenario["name"] = name
    return scenario


def find_cli(explicit):
    """The pinned Gemini CLI: --cli, or an npm install into the cache dir."""
    node_dir = next((d for d in NODE_DIRS if os.path.exists(os.path.join(d, "node"))), None)
    env = dict(os.environ)
    if node_dir:
        env["PATH"] = node_dir + os.pathsep + env.get("PATH", "")
    cached = os.path.join(CLI_CACHE, "node_modules", ".bin", "gemini")
    for cli in [explicit] if explicit else [cached]:
        if cli and os.path.exists(cli) and version_of(cli, env) == GEMINI_VERSION:
            return cli, env
    if explicit:
        raise ScenarioError(f"{explicit}: not Gemini CLI {GEMINI_VERSION}")
    os.makedirs(CLI_CACHE, exist_ok=True)
    subprocess.run(["npm", "install", "--no-save", "--prefix", CLI_CACHE, f"{NPM_PACKAGE}@{GEMINI_VERSION}"],
                   env=env, check=True)
    if version_of(cached, env) != GEMINI_VERSION:
        raise ScenarioError(f"{cached}: the npm install did not give Gemini CLI {GEMINI_VERSION}")
    return cached, env


def version_of(cli, env):
    try:
        out = subprocess.run([cli, "--version"], env=env, capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.strip().splitlines()[-1] if out.strip() else None


def merged(base, extra):
    out = dict(base)
    for k, v in (extra or {}).items():
        out[k] = merged(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def prepare(scenario):
    """A fresh sandbox; returns (base, work, home)."""
    base = os.path.join(SANDBOX_ROOT, scenario["name"])
    shutil.rmtree(base, ignore_errors=True)
    work, home = os.path.join(base, "work"), os.path.join(base, "home")
    os.makedirs(work)
    os.makedirs(os.path.join(home, ".gemini"))
    with open(os.path.join(home, ".gemini", "settings.json"), "w") as f:
        json.dump(merged(SETTINGS, scenario.get("settings")), f, indent=1)
    for name, content in (scenario.get("files") or {}).items():
        path = os.path.join(work, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if isinstance(content, dict) and "base64" in content:
            with open(path, "wb") as f:
                f.write(base64.b64decode(content["base64"]))
        else:
            with open(path, "w") as f:
                f.write(content)
    return base, work, home


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
    dest = os.path.join(out_root, f"gemini-cli-{GEMINI_VERSION}", scenario["name"])
    shutil.rmtree(dest, ignore_errors=True)
    os.makedirs(dest)
    shutil.copyfile(logs_found[0], os.path.join(dest, "session.jsonl"))
    for stray in strays:
        os.makedirs(os.path.join(dest, "stray"), exist_ok=True)
        shutil.copyfile(stray, os.path.join(dest, "stray", os.path.basename(stray)))
    chats = os.path.dirname(logs_found[0])
    for sub in sorted(glob.glob(os.path.join(chats, "*", "*.jsonl"))):  # a subagent's own log
        os.makedirs(os.path.join(dest, "subagents"), exist_ok=True)
        shutil.copyfile(sub, os.path.join(dest, "subagents", os.path.basename(sub)))
    purposes = scenario.get("purposes", [])
    with open(os.path.join(dest, "conversation.json"), "w") as f:
        # countTokens (the CLI counts a request with an image before it sends it) is no turn of the conversation.
        json.dump([reduced(r, purposes) for r in requests if not r["path"].endswith(":countTokens")], f, indent=1,
                  ensure_ascii=False)
        f.write("\n")
    with open(logs_found[0], "rb") as f:
        lines = f.read().count(b"\n")
    return len(requests), lines


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", metavar="NAME", action="append", help="only this scenario (repeatable)")
    parser.add_argument("--out", metavar="DIR", default=os.path.join(ROOT, "tests", "agents", "recorded"))
    parser.add_argument("--cli", metavar="PATH", help=f"the gemini binary (Gemini CLI {GEMINI_VERSION})")
    args = parser.parse_args()
    paths = sorted(glob.glob(os.path.join(SCENARIOS, "*.json")))
    if args.only:
        paths = [p for p in paths if os.path.splitext(os.path.basename(p))[0] in args.only]
    try:
        cli, env = find_cli(args.cli)
    except (ScenarioError, subprocess.CalledProcessError) as e:
        print(f"gemini_cli_driver.py: {e}", file=sys.stderr)
        return 2
    failed = 0
    for path in paths:
        name = os.path.splitext(os.path.basename(path))[0]
        try:
            scenario = load_scenario(path)
            requests, lines = run_scenario(scenario, cli, env, args.out)
            print(f"{name} ok {requests} requests {lines} log lines", flush=True)
        except (ScenarioError, subprocess.TimeoutExpired, OSError) as e:
            failed += 1
            print(f"{name} failed\n  {e}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
