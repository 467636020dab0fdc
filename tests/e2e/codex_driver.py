#!/usr/bin/env python3
"""Records the real Codex CLI (`codex exec`) against the scripted stand-in: its rollout file, byte for
byte, and the conversation the stand-in saw.

  python3 tests/e2e/codex_driver.py [--only NAME] [--out DIR] [--cli PATH]

For each scenario tests/agents/codex/<name>.json it
  - makes a fresh, fixed sandbox /tmp/pi-hydrate-agents/codex/<name>/ with work/ (Codex's cwd, the
    scenario's files in it), home/ (HOME) and home/.codex (CODEX_HOME, holding config.toml: a
    `standin` model provider on a fixed port, wire_api "responses", no websockets, no retries, no
    plugins or apps, analytics off);
  - starts the stand-in (tests/e2e/standin.py) with the scenario's script, recording every request;
  - runs each step: the first as `codex exec`, later ones as `codex exec resume --last`, each with
    --skip-git-repo-check and --dangerously-bypass-approvals-and-sandbox (exec_command runs for real
    in work/), `-i FILE` for a step's images;
  - copies the one rollout Codex wrote ($CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl) to
    DIR/codex-<version>/<name>/rollout.jsonl (a subagent's rollout, its session_meta source
    {"subagent": ...}, to subagents/ beside it under its own name) and writes conversation.json: the requests
    the stand-in accepted, in order, each reduced to {"seq", "path", "model", "purpose", "input",
    "tools"} (the system prompt's text and the tool schemas dropped).
DIR is tests/agents/recorded unless --out says otherwise. The CLI is the pinned CODEX_VERSION:
--cli PATH, or an npm install into /tmp/pi-hydrate-agents/cli/codex-<version>.
Prints one line per scenario: NAME ok|failed REQUESTS requests LINES rollout lines.
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
CODEX_VERSION = "0.169.0"
NPM_PACKAGE = "@openai/codex"
PORT = 47331  # fixed, so config.toml and what Codex writes about the provider are the same in every recording
MODEL = "gpt-5.5"
SANDBOX_ROOT = "/tmp/pi-hydrate-agents/codex"
CLI_CACHE = f"/tmp/pi-hydrate-agents/cli/codex-{CODEX_VERSION}"
NODE_DIRS = [os.path.join(ROOT, "build", "pi", "node", "bin")]
SCENARIOS = os.path.join(ROOT, "tests", "agents", "codex")
STEP_SECONDS = 180  # a guard against a run that never ends, not a measurement
SCENARIO_FIELDS = {"about", "config", "features", "files", "steps", "script", "purposes"}
STEP_FIELDS = {"prompt", "images"}
API_KEY_ENV = "STANDIN_API_KEY"

CONFIG_TOML = """\
model = "{model}"
model_provider = "standin"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false

[analytics]
enabled = false

[features]
plugins = false
remote_plugin = false
apps = false
{features}
[model_providers.standin]
name = "standin"
base_url = "http://127.0.0.1:{port}/v1"
wire_api = "responses"
env_key = "{key}"
supports_websockets = false
request_max_retries = 0
stream_max_retries = 0
"""


def load_scenario(path):
    return load_steps_scenario(path, SCENARIO_FIELDS, STEP_FIELDS, "{\"prompt\": str, \"images\": [file, ...]}")


def find_cli(explicit):
    """The pinned codex-cli: --cli, the one installed before, or an npm install into the cache dir."""
    return find_pinned_cli(explicit, CLI_CACHE, "codex", NPM_PACKAGE, CODEX_VERSION, "codex-cli", NODE_DIRS,
                           lambda out: out.rsplit(" ", 1)[-1])


def prepare(scenario):
    """A fresh sandbox; returns (base, work, codex_home, home)."""
    box = agent_sandbox(os.path.join(SANDBOX_ROOT, scenario["name"]), ("work", "home"), scenario.get("files"))
    codex_home = os.path.join(box["home"], ".codex")
    os.makedirs(codex_home)
    with open(os.path.join(codex_home, "config.toml"), "w") as f:
        # The scenario's settings first: top-level keys, before the first [table].
        f.write("".join(line + "\n" for line in scenario.get("config") or []))
        features = "".join(f"{k} = {json.dumps(v)}\n" for k, v in (scenario.get("features") or {}).items())
        f.write(CONFIG_TOML.format(model=MODEL, port=PORT, key=API_KEY_ENV, features=features))
    return box["root"], box["work"], codex_home, box["home"]


def purpose_of(body, purposes):
    """"main", or the scenario's word for a side request: the first purpose whose `when` text the
    request's last input item holds (purposes: [{"when": text, "purpose": word}, ...])."""
    try:
        agent = json.loads(body["client_metadata"]["x-codex-turn-metadata"]).get("agent_name")
    except (KeyError, TypeError, ValueError):
        agent = None
    if agent not in (None, "/root"):
        return "subagent"  # a subagent's own request (its agent_name is /root/<task name>)
    items = body.get("input")
    text = json.dumps(items[-1] if isinstance(items, list) and items else items)
    for p in purposes:
        if p["when"] in text:
            return p["purpose"]
    return "main"


def reduced(entry, purposes):
    """A request as conversation.json keeps it: the system prompt's text (the first developer
    message: "You are Codex...", or with multi_agent_v2 "You are `/root`..."; harness blocks such as
    <skills_instructions> start with "<" and are kept) and the tool schemas dropped, the rest of
    the input as sent."""
    body = entry["body"]
    items = json.loads(json.dumps(body.get("input", [])))
    if isinstance(items, list) and items and items[0].get("role") == "developer":
        for part in items[0].get("content") or []:
            if part.get("type") == "input_text" and not part.get("text", "").startswith("<"):
                part["text"] = f"[system prompt: {len(part['text'])} characters, dropped]"
    out = {"seq": entry["seq"], "path": entry["path"], "model": body.get("model"),
           "purpose": purpose_of(body, purposes), "status": entry["status"], "input": items,
           "tools": [t.get("name") or t.get("type") for t in body.get("tools") or []]}
    return out


def is_subagent(rollout):
    """Whether a rollout is a subagent's: its session_meta says source {"subagent": ...}."""
    with open(rollout) as f:
        meta = json.loads(f.readline())["payload"]
    return isinstance(meta.get("source"), dict) and "subagent" in meta["source"]


def run_scenario(scenario, cli, env, out_root):
    base, work, codex_home, home = prepare(scenario)
    env = dict(env, HOME=home, CODEX_HOME=codex_home, **{API_KEY_ENV: "standin-dummy-key"})
    env.pop("OPENAI_API_KEY", None)
    env.pop("OPENAI_BASE_URL", None)
    logs = []
    with tempfile.TemporaryDirectory(prefix="codex-standin-") as record_dir:
        with StandIn(record_dir, port=PORT, script=scenario.get("script", [])) as standin:
            for i, step in enumerate(scenario["steps"]):
                argv = [cli, "exec"] + (["resume", "--last"] if i else [])
                argv += ["--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox"]
                argv.append(step["prompt"])
                for image in step.get("images", []):  # after the prompt: -i takes all the values that follow it
                    argv += ["-i", image]
                proc = subprocess.run(argv, cwd=work, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                                      text=True, timeout=STEP_SECONDS)
                logs.append(f"$ step {i}: rc={proc.returncode}\n{proc.stdout}\n{proc.stderr}")
                if "unrecognized configuration settings" in proc.stderr:
                    raise ScenarioError(f"step {i}: Codex ignored settings of config.toml:\n{proc.stderr[-2000:]}")
                if proc.returncode != 0:
                    raise ScenarioError(f"step {i} exited {proc.returncode}:\n{proc.stderr[-2000:]}")
            requests = standin.requests()
    with open(os.path.join(base, "codex.log"), "w") as f:
        f.write("\n".join(logs))
    rollouts = glob.glob(os.path.join(codex_home, "sessions", "*", "*", "*", "rollout-*.jsonl"))
    main_rollouts = [r for r in rollouts if not is_subagent(r)]
    if len(main_rollouts) != 1:
        raise ScenarioError(f"expected one main rollout, found {main_rollouts}")
    rejected = [r for r in requests if r["rule"] is not None or r["api"] is None]
    if rejected:
        raise ScenarioError("the stand-in rejected: " + "; ".join(f"{r['seq']}: {r['rule']}: {r['error']}" for r in rejected))
    dest = fresh_dir(os.path.join(out_root, f"codex-{CODEX_VERSION}", scenario["name"]))
    shutil.copyfile(main_rollouts[0], os.path.join(dest, "rollout.jsonl"))
    # A subagent's own rollout, under the name Codex gave it.
    copy_into(os.path.join(dest, "subagents"), sorted(set(rollouts) - set(main_rollouts)))
    purposes = scenario.get("purposes", [])
    write_conversation(dest, [reduced(r, purposes) for r in requests])
    with open(main_rollouts[0], "rb") as f:
        lines = f.read().count(b"\n")
    return len(requests), lines


def main():
    args = driver_arguments(__doc__, os.path.join(ROOT, "tests", "agents", "recorded"),
                            f"the codex binary (codex-cli {CODEX_VERSION})").parse_args()
    return record_steps("codex_driver.py", args, SCENARIOS, find_cli, load_scenario, run_scenario, "rollout lines")


if __name__ == "__main__":
    sys.exit(main())
