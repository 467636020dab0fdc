#!/usr/bin/env python3
"""Records real OpenCode sessions against the scripted stand-in: the database the CLI wrote, as it
left it, the session as `opencode export` prints it, and the conversation the stand-in saw.

  opencode_driver.py [--only NAME]... [--out DIR] [--cli PATH]

For each scenario tests/agents/opencode/<name>.json it
  - makes a fresh, fixed sandbox /tmp/pi-hydrate-agents/opencode/<name>/ with work/ (the CLI's
    cwd, the scenario's files in it) and home/ (HOME: home/.config/opencode/opencode.json names a
    provider `standin`, "npm": "@ai-sdk/anthropic", whose baseURL is the stand-in's /v1);
  - starts the stand-in (tests/e2e/standin.py) with the scenario's script on a free port and runs
    `opencode run PROMPT --format json` once per entry of `runs` (the next ones with
    `--session ID`, the id the first run printed);
  - copies home/.local/share/opencode/opencode.db to DIR/opencode-<version>/<name>/: with its -wal
    as the CLI left them (the newest rows only in the -wal) when the scenario says keep_wal, else
    checkpointed into the one file (a copy in the sandbox is checkpointed: a quarter of the bytes,
    the same rows), and writes export.json
    (`opencode export ID`) and conversation.json: the requests the stand-in accepted, in order,
    each reduced to {seq, path, model, purpose, messages, tools} (the system prompt and the tool
    schemas are dropped, tools keep their names).

A scenario file holds:
  about    one line: what the recording shows
  files    {"path": "text"} or {"path": {"base64": "..."}}: made in work/ first
  keep_wal true: keep the database and its -wal as the CLI left them (one scenario shows the WAL read)
  model    extra fields of the stand-in model in opencode.json (e.g. {"reasoning": true})
  runs     [{"prompt": "...", "args": [...], "files": ["pixel.png"]}]: one CLI process each, in
           order; `files` are attached with --file
  script   the stand-in's replies (standin_script.py); a reply may say "purpose" (the word
           conversation.json gives the request it answers; "main" by default; OpenCode asks for
           a title first, tool-less) -- the driver removes it before the stand-in reads the script
DIR is tests/agents/recorded unless --out says otherwise. The CLI is the pinned version, installed
with npm into /tmp/pi-hydrate-agents/cli/opencode-<version> when --cli is not given and it is
missing there. One line per scenario: NAME ok|failed SESSIONS sessions REQUESTS requests, then the
reasons of a failure.
"""
import argparse
import base64
import glob
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from scenario_driver import ScenarioError, read_scenario_file  # noqa: E402
from standin import StandIn  # noqa: E402
from standin_script import ScriptError, parse_script  # noqa: E402

VERSION = "1.18.33"  # opencode-ai, pinned; the program is in opencode-linux-x64
PACKAGE = "opencode-ai"
SANDBOX_ROOT = "/tmp/pi-hydrate-agents/opencode"
CLI_CACHE = f"/tmp/pi-hydrate-agents/cli/opencode-{VERSION}"
NODE_DIRS = [os.path.join(ROOT, "build", "pi", "node", "bin")]  # npm for the install
SCENARIOS = os.path.join(ROOT, "tests", "agents", "opencode")
RECORDED = os.path.join(ROOT, "tests", "agents", "recorded")
MODEL = "claude-sonnet-4-5"
RUN_SECONDS = 180  # a guard against a CLI that never returns, not a measurement
SCENARIO_FIELDS = {"about", "files", "keep_wal", "model", "runs", "script"}
# Offline: no models.dev fetch, no update check, no default plugins, no LSP download, no sharing.
OFFLINE_ENV = {"OPENCODE_DISABLE_MODELS_FETCH": "1", "OPENCODE_DISABLE_AUTOUPDATE": "1",
               "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1", "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
               "OPENCODE_DISABLE_SHARE": "1"}


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


def cli_path_env(env):
    env["PATH"] = os.pathsep.join([d for d in NODE_DIRS if os.path.isdir(d)] + [env.get("PATH", "/usr/bin:/bin")])
    return env


def install_cli():
    cli = os.path.join(CLI_CACHE, "node_modules", "opencode-linux-x64", "bin", "opencode")
    if not os.path.exists(cli):
        os.makedirs(CLI_CACHE, exist_ok=True)
        subprocess.run(["npm", "install", "--prefix", CLI_CACHE, "--no-audit", "--no-fund", f"{PACKAGE}@{VERSION}"],
                       check=True, env=cli_path_env(dict(os.environ)))
    return cli


def make_sandbox(name, files):
    root = os.path.join(SANDBOX_ROOT, name)
    if os.path.exists(root):
        shutil.rmtree(root)
    box = {k: os.path.join(root, k) for k in ("work", "home", "tmp", "requests", "stdout")}
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


def write_config(box, port, model_fields):
    model = {"name": "Stand-in Sonnet", "tool_call": True, "attachment": True,
             "limit": {"context": 200000, "output": 8192}}
    model.update(model_fields or {})
    config = {"provider": {"standin": {"npm": "@ai-sdk/anthropic", "name": "Stand-in",
                                       "options": {"baseURL": f"http://127.0.0.1:{port}/v1", "apiKey": "sk-ant-standin"},
                                       "models": {MODEL: model}}},
              "model": f"standin/{MODEL}", "small_model": f"standin/{MODEL}",
              "autoupdate": False, "share": "disabled",
              "permission": {"bash": "allow", "edit": "allow", "read": "allow", "external_directory": "allow"}}
    target = os.path.join(box["home"], ".config", "opencode", "opencode.json")
    os.makedirs(os.path.dirname(target), exist_ok=True)
    with open(target, "w") as f:
        json.dump(config, f, indent=1)


def cli_env(box):
    env = {"HOME": box["home"], "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "TERM": "dumb", "SHELL": "/bin/bash",
           "TMPDIR": box["tmp"], "XDG_CONFIG_HOME": os.path.join(box["home"], ".config"),
           "XDG_DATA_HOME": os.path.join(box["home"], ".local", "share"),
           "XDG_CACHE_HOME": os.path.join(box["home"], ".cache"),
           "XDG_STATE_HOME": os.path.join(box["home"], ".local", "state"), **OFFLINE_ENV}
    return cli_path_env(env)  # npm on PATH: OpenCode installs @ai-sdk/anthropic into its cache


def session_of(stdout_path):
    """The session id `opencode run --format json` prints with its events."""
    with open(stdout_path, "rb") as f:
        for line in f:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            sid = event.get("sessionID") if isinstance(event, dict) else None
            if isinstance(sid, str) and sid.startswith("ses_"):
                return sid
    return None


def reduce_request(entry, purpose):
    body = entry["body"] or {}
    return {"seq": entry["seq"], "path": entry["path"], "model": body.get("model"), "purpose": purpose,
            "messages": body.get("messages"), "tools": [t.get("name") for t in body.get("tools") or []]}


def record(scenario, cli, out_dir):
    name = scenario["name"]
    box = make_sandbox(name, scenario.get("files"))
    problems = []
    sid = None
    with StandIn(record_dir=box["requests"], script=standin_script(scenario)) as standin:
        write_config(box, standin.port, scenario.get("model"))
        env = cli_env(box)
        for i, run in enumerate(scenario["runs"]):
            argv = [cli, "run", run["prompt"], "--format", "json"]
            if i > 0 and sid:
                argv += ["--session", sid]
            for f in run.get("files", []):
                argv += ["--file", f]
            argv += run.get("args", [])
            out_path = os.path.join(box["stdout"], f"run-{i + 1}.jsonl")
            with open(out_path, "wb") as out, open(os.path.join(box["stdout"], f"run-{i + 1}.stderr"), "wb") as err:
                try:
                    proc = subprocess.run(argv, cwd=box["work"], env=env, stdin=subprocess.DEVNULL, stdout=out,
                                          stderr=err, timeout=RUN_SECONDS)
                    if proc.returncode != 0:
                        problems.append(f"run {i + 1} exited {proc.returncode} (see {err.name})")
                except subprocess.TimeoutExpired:
                    problems.append(f"run {i + 1} did not finish in {RUN_SECONDS} s")
            if i == 0:
                sid = session_of(out_path)
                if sid is None:
                    problems.append(f"run 1 printed no session id (see {out_path})")
        requests = standin.requests()
        unused = standin.unused_replies()
        exported = None
        if sid:
            proc = subprocess.run([cli, "export", sid], cwd=box["work"], env=env, stdin=subprocess.DEVNULL,
                                  capture_output=True, timeout=RUN_SECONDS)
            if proc.returncode != 0:
                problems.append(f"opencode export exited {proc.returncode}: {proc.stderr[-400:]!r}")
            else:
                exported = proc.stdout
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
    target = os.path.join(out_dir, f"opencode-{VERSION}", name)
    if os.path.exists(target):
        shutil.rmtree(target)
    os.makedirs(target)
    data = os.path.join(box["home"], ".local", "share", "opencode")
    db = os.path.join(data, "opencode.db")
    sessions = 0
    if os.path.exists(db):
        import sqlite3
        # A copy in the sandbox is opened (opening the CLI's own files could change them): counted, and
        # checkpointed into one file unless the scenario keeps the WAL.
        probe = os.path.join(box["tmp"], "probe")
        os.makedirs(probe, exist_ok=True)
        for suffix in ("", "-wal"):
            if os.path.exists(db + suffix):
                shutil.copyfile(db + suffix, os.path.join(probe, "opencode.db" + suffix))
                if scenario.get("keep_wal"):
                    shutil.copyfile(db + suffix, os.path.join(target, "opencode.db" + suffix))
        c = sqlite3.connect(os.path.join(probe, "opencode.db"))
        sessions = c.execute("select count(*) from session").fetchone()[0]
        if not scenario.get("keep_wal"):
            c.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # still a WAL database, its log empty
        c.close()
        if not scenario.get("keep_wal"):
            shutil.copyfile(os.path.join(probe, "opencode.db"), os.path.join(target, "opencode.db"))
    else:
        problems.append(f"no database at {db}")
    if exported is not None:
        with open(os.path.join(target, "export.json"), "wb") as f:
            f.write(exported)
    with open(os.path.join(target, "conversation.json"), "w") as f:
        json.dump(conversation, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(f"{name} {'failed' if problems else 'ok'} {sessions} sessions {len(conversation)} requests", flush=True)
    for p in problems:
        print(f"  {p}", flush=True)
    return not problems


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", metavar="NAME", action="append", help="only this scenario (repeatable)")
    parser.add_argument("--out", metavar="DIR", default=RECORDED)
    parser.add_argument("--cli", metavar="PATH", help=f"the opencode executable (default: {PACKAGE}@{VERSION} from npm)")
    args = parser.parse_args()
    paths = sorted(glob.glob(os.path.join(SCENARIOS, "*.json")))
    if args.only:
        paths = [p for p in paths if os.path.splitext(os.path.basename(p))[0] in args.only]
        if len(paths) != len(set(args.only)):
            print(f"unknown scenario among {args.only}", file=sys.stderr)
            return 2
    try:
        scenarios = [load_scenario(p) for p in paths]
    except ScenarioError as e:
        print(e, file=sys.stderr)
        return 2
    cli = args.cli or install_cli()
    ok = True
    for scenario in scenarios:
        ok = record(scenario, cli, args.out) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
