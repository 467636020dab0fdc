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

SCENARIO_FIELDS = {"about", "files", "keep_wal", "model", "runs", "script"}
MODEL = "claude-sonnet-4-5"
RUN_SECONDS = 180  # a guard against a CLI that never returns, not a measurement
NODE_DIRS = [os.path.join(ROOT, "build", "pi", "node", "bin")]  # npm for the install
RECORDED = os.path.join(ROOT, "tests", "agents", "recorded")


class Product:
    """What tells one OpenCode-like CLI from another: its names, its files, its switches. OpenCode's
    forks (Kilo CLI) are recorded by this driver with their own Product (kilo_cli_driver.py)."""

    def __init__(self, name, version, package, program, command, config, config_extra, data, env, run_args=()):
        self.name = name  # the agent's name in tests/agents and the recordings' folder
        self.version = version  # pinned
        self.package = package  # the npm package the program comes in
        self.program = program  # its path in the install folder
        self.command = command  # what `export` errors call it
        self.config = config  # the config file under ~/.config
        self.config_extra = config_extra  # fields the config needs beyond OpenCode's
        self.data = data  # the data folder under ~/.local/share (its database: DATA.db)
        self.env = env  # offline switches
        self.run_args = list(run_args)  # what `run` needs beyond PROMPT --format json
        self.sandbox_root = f"/tmp/pi-hydrate-agents/{name}"
        self.cli_cache = f"/tmp/pi-hydrate-agents/cli/{name}-{version}"
        self.scenarios = os.path.join(ROOT, "tests", "agents", name)
        self.db = f"{data}.db"


# Offline: no models.dev fetch, no update check, no default plugins, no LSP download, no sharing.
OPENCODE = Product("opencode", "1.18.33", "opencode-ai",  # pinned; the program is in opencode-linux-x64
                   os.path.join("node_modules", "opencode-linux-x64", "bin", "opencode"), "opencode",
                   os.path.join("opencode", "opencode.json"), {}, "opencode",
                   {"OPENCODE_DISABLE_MODELS_FETCH": "1", "OPENCODE_DISABLE_AUTOUPDATE": "1",
                    "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1", "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
                    "OPENCODE_DISABLE_SHARE": "1"})


def load_scenario(path):
    return load_runs_scenario(path, SCENARIO_FIELDS)


def write_config(product, box, port, model_fields):
    model = {"name": "Stand-in Sonnet", "tool_call": True, "attachment": True,
             "limit": {"context": 200000, "output": 8192}}
    model.update(model_fields or {})
    config = {"provider": {"standin": {"npm": "@ai-sdk/anthropic", "name": "Stand-in",
                                       "options": {"baseURL": f"http://127.0.0.1:{port}/v1", "apiKey": "sk-ant-standin"},
                                       "models": {MODEL: model}}},
              "model": f"standin/{MODEL}", "small_model": f"standin/{MODEL}",
              "autoupdate": False, "share": "disabled",
              "permission": {"bash": "allow", "edit": "allow", "read": "allow", "external_directory": "allow"},
              **product.config_extra}
    target = os.path.join(box["home"], ".config", product.config)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    with open(target, "w") as f:
        json.dump(config, f, indent=1)


def cli_env(product, box):
    env = {"HOME": box["home"], "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "TERM": "dumb", "SHELL": "/bin/bash",
           "TMPDIR": box["tmp"], "XDG_CONFIG_HOME": os.path.join(box["home"], ".config"),
           "XDG_DATA_HOME": os.path.join(box["home"], ".local", "share"),
           "XDG_CACHE_HOME": os.path.join(box["home"], ".cache"),
           "XDG_STATE_HOME": os.path.join(box["home"], ".local", "state"), **product.env}
    return path_env(env, NODE_DIRS)  # npm on PATH: OpenCode installs @ai-sdk/anthropic into its cache


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


def record(product, scenario, cli, out_dir):
    name = scenario["name"]
    box = agent_sandbox(os.path.join(product.sandbox_root, name), ("work", "home", "tmp", "requests", "stdout"), scenario.get("files"))
    problems = []
    sid = None
    with StandIn(record_dir=box["requests"], script=standin_script(scenario)) as standin:
        write_config(product, box, standin.port, scenario.get("model"))
        env = cli_env(product, box)
        for i, run in enumerate(scenario["runs"]):
            argv = [cli, "run", run["prompt"], "--format", "json", *product.run_args]
            if i > 0 and sid:
                argv += ["--session", sid]
            for f in run.get("files", []):
                argv += ["--file", f]
            argv += run.get("args", [])
            out_path = run_cli(argv, box, env, i + 1, ".jsonl", RUN_SECONDS, problems, stdin=subprocess.DEVNULL)
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
                problems.append(f"{product.command} export exited {proc.returncode}: {proc.stderr[-400:]!r}")
            else:
                exported = proc.stdout
    conversation = scripted_conversation(scenario, requests, unused, reduce_messages_request, problems)
    target = os.path.join(out_dir, f"{product.name}-{product.version}", name)
    fresh_dir(target)
    db = os.path.join(box["home"], ".local", "share", product.data, product.db)
    sessions = 0
    if os.path.exists(db):
        import sqlite3
        # A copy in the sandbox is opened (opening the CLI's own files could change them): counted, and
        # checkpointed into one file unless the scenario keeps the WAL.
        probe = os.path.join(box["tmp"], "probe")
        os.makedirs(probe, exist_ok=True)
        for suffix in ("", "-wal"):
            if os.path.exists(db + suffix):
                shutil.copyfile(db + suffix, os.path.join(probe, product.db + suffix))
                if scenario.get("keep_wal"):
                    shutil.copyfile(db + suffix, os.path.join(target, product.db + suffix))
        c = sqlite3.connect(os.path.join(probe, product.db))
        sessions = c.execute("select count(*) from session").fetchone()[0]
        if not scenario.get("keep_wal"):
            c.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # still a WAL database, its log empty
        c.close()
        if not scenario.get("keep_wal"):
            shutil.copyfile(os.path.join(probe, product.db), os.path.join(target, product.db))
    else:
        problems.append(f"no database at {db}")
    if exported is not None:
        with open(os.path.join(target, "export.json"), "wb") as f:
            f.write(exported)
    return finish(name, target, conversation, sessions, problems, unit="sessions")


def main(product=OPENCODE, doc=__doc__):
    args = driver_arguments(doc, RECORDED, f"the {product.command} executable "
                            f"(default: {product.package}@{product.version} from npm)").parse_args()
    scenarios = scenarios_in(product.scenarios, args.only, load_scenario)
    cli = args.cli or install_cli(product.cli_cache, product.program, product.package, product.version,
                                  path_env(dict(os.environ), NODE_DIRS))
    return record_each(scenarios, lambda scenario: record(product, scenario, cli, args.out))


if __name__ == "__main__":
    sys.exit(main())
