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
import base64
import glob
import json
import os
import re
import shutil
import sys
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from scenario_driver import (ScenarioError, agent_sandbox, driver_arguments, finish, fresh_dir, install_cli,  # noqa: E402,F401
                             load_runs_scenario, path_env, purposes, record_each, reduce_messages_request,
                             run_cli, scenarios_in, scripted_conversation, standin_script)
from standin import StandIn  # noqa: E402

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
    return load_runs_scenario(path, SCENARIO_FIELDS)


def cli_path_env(env):
    return path_env(env, NODE_DIRS)


def make_sandbox(name, files):
    return agent_sandbox(os.path.join(SANDBOX_ROOT, name), ("work", "home", "config", "tmp", "requests", "stdout"), files)


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
            run_cli(argv, box, env, i + 1, ".jsonl", RUN_SECONDS, problems, input=stdin)
        requests = standin.requests()
        unused = standin.unused_replies()
    conversation = scripted_conversation(scenario, requests, unused, reduce_messages_request, problems,
                                         forgiven=system_message_try)
    project = os.path.join(box["config"], "projects", encoded_cwd(box["work"]))
    transcript = os.path.join(project, f"{sid}.jsonl")
    target = os.path.join(out_dir, f"claude-code-{VERSION}", name)
    fresh_dir(target)
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


def main():
    args = driver_arguments(__doc__, RECORDED, f"the claude executable (default: {PACKAGE}@{VERSION} from npm)").parse_args()
    scenarios = scenarios_in(SCENARIOS, args.only, load_scenario)
    cli = args.cli or install_cli(CLI_CACHE, os.path.join("node_modules", ".bin", "claude"), PACKAGE, VERSION,
                                  cli_path_env(dict(os.environ)))
    return record_each(scenarios, lambda scenario: record(scenario, cli, args.out))


if __name__ == "__main__":
    sys.exit(main())
