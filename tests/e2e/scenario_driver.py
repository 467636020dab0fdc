"""Runs the real pi through a scenario (tests/scenarios/<name>.json) against the scripted stand-in
and keeps what it wrote: the session file and its stdout, byte for byte.

tools/record-scenarios is the command; tests/scenarios/README.md describes a scenario file. A run:
  - makes a fresh, fixed sandbox /tmp/pi-hydrate-scenarios/<name>/ with work/ (pi's cwd, the
    scenario's files in it) and home/ (HOME; home/agent is pi's agent dir: models.json pointing a
    `standin` provider at the stand-in on a fixed port, and the scenario's settings.json), so a
    recording names no other path;
  - starts the stand-in with the scenario's script and pi in RPC mode (or json mode, one process per
    run), sends the steps in order and waits where the scenario says;
  - closes pi's stdin, waits for it to exit, and copies the one session file pi wrote.

Its last part serves the recording drivers of the coding-agent CLIs (tests/e2e/*_driver.py,
tests/agents/README.md): their scenarios, sandboxes, npm installs, runs, conversation.json and loops.
"""
import argparse
import base64
import glob
import json
import os
import shutil
import subprocess
import sys
import threading
import time

from standin import StandIn
from standin_script import ScriptError, parse_script

SANDBOX_ROOT = "/tmp/pi-hydrate-scenarios"
PORT = 47311  # fixed, so models.json and the model objects pi prints are the same in every recording
PI_VERSIONS = {"1.6.0": "dist/bundle/cli.js", "1.5.2": "dist/bundle/cli.js", "0.78.0": "dist/cli.js"}
MODEL = "standin/standin-sonnet"
# Events a version lacks, and what a wait for them waits for there instead: pi 0.78 has no
# agent_settled (a scenario with retries waits for auto_retry_end first, so agent_end is the last one).
STAND_INS = {"0.78.0": {"agent_settled": "agent_end"}}
WAIT_SECONDS = 60
NODE_FLAGS = ["--preserve-symlinks", "--preserve-symlinks-main"]  # a guard against a scenario that waits for what never comes, not a measurement
MIME = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp"}
COMMANDS = ("prompt", "steer", "follow_up", "abort", "compact", "set_model", "set_thinking_level", "bash",
            "set_session_name", "wait")
SCENARIO_FIELDS = {"description", "versions", "mode", "settings", "files", "script", "steps", "runs", "skipped"}


class ScenarioError(Exception):
    pass


def models_json(port):
    """Two models on the stand-in, both speaking Anthropic Messages, both with reasoning: enough for a
    model change and a thinking level change."""
    model = {"reasoning": True, "input": ["text", "image"], "contextWindow": 200000, "maxTokens": 8192,
             "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}}
    return {"providers": {"standin": {
        "baseUrl": f"http://127.0.0.1:{port}", "api": "anthropic-messages", "apiKey": "standin",
        "models": [dict(model, id="standin-sonnet", name="Stand-in Sonnet"),
                   dict(model, id="standin-haiku", name="Stand-in Haiku")]}}}


def script_for(scenario, version):
    """The scenario's script as `version` gets it: a reply that says "versions" is for those only
    (pi versions do not all make the same requests)."""
    out = []
    for reply in scenario.get("script", []):
        if isinstance(reply, dict) and "versions" in reply:
            if version not in reply["versions"]:
                continue
            reply = {k: v for k, v in reply.items() if k != "versions"}
        out.append(reply)
    return out


def read_scenario_file(path, fields):
    """The JSON object in `path`, with no field outside `fields`; ScenarioError names the file and
    the reason. (The drivers of the coding-agent CLIs read their scenarios with it too.)"""
    try:
        with open(path) as f:
            scenario = json.load(f)
    except ValueError as e:
        raise ScenarioError(f"{path}: not JSON: {e}")
    if not isinstance(scenario, dict):
        raise ScenarioError(f"{path}: a scenario is a JSON object")
    unknown = set(scenario) - fields
    if unknown:
        raise ScenarioError(f"{path}: unknown field(s) {', '.join(sorted(unknown))}")
    return scenario


def load_scenario(path):
    """The scenario in `path`, checked; ScenarioError names the file and the reason."""
    name = os.path.splitext(os.path.basename(path))[0]
    scenario = read_scenario_file(path, SCENARIO_FIELDS)
    mode = scenario.get("mode", "rpc")
    if mode not in ("rpc", "json"):
        raise ScenarioError(f"{path}: mode: 'rpc' or 'json'")
    if not scenario.get("versions") or any(v not in PI_VERSIONS for v in scenario["versions"]):
        raise ScenarioError(f"{path}: versions: a list of {', '.join(PI_VERSIONS)}")
    try:
        for version in scenario["versions"]:
            parse_script(script_for(scenario, version), f"{path}: script")
    except ScriptError as e:
        raise ScenarioError(str(e))
    if mode == "rpc":
        for i, step in enumerate(scenario.get("steps", [])):
            kinds = [k for k in step if k in COMMANDS]
            if len(kinds) != 1:
                raise ScenarioError(f"{path}: steps[{i}]: one of {', '.join(COMMANDS)} expected, got {sorted(step)}")
    elif not scenario.get("runs"):
        raise ScenarioError(f"{path}: a json-mode scenario lists its runs")
    scenario["name"] = name
    scenario["mode"] = mode
    return scenario


class PiProcess:
    """pi in RPC mode: commands in, every stdout line kept (raw bytes) and parsed for the waits."""

    def __init__(self, argv, cwd, env):
        self.proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        self.raw = []      # stdout lines, as pi wrote them
        self.records = []  # the same, parsed (None for a line that is not JSON)
        self.stderr = b""
        self._cond = threading.Condition()
        self._serial = 0
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._err = threading.Thread(target=self._read_stderr, daemon=True)
        self._err.start()

    def _read(self):
        # Split on LF only (rpc.md: U+2028 may appear inside a record).
        for line in iter(self.proc.stdout.readline, b""):
            try:
                record = json.loads(line)
            except ValueError:
                record = None
            with self._cond:
                self.raw.append(line)
                self.records.append(record)
                self._cond.notify_all()
        with self._cond:
            self._cond.notify_all()

    def _read_stderr(self):
        self.stderr = self.proc.stderr.read()

    def send(self, command):
        """Sends a command with a fresh id; returns the id."""
        self._serial += 1
        command = dict(command, id=f"step-{self._serial}")
        self.proc.stdin.write(json.dumps(command).encode() + b"\n")
        self.proc.stdin.flush()
        return command["id"]

    def wait_for(self, match, start, what):
        """The index of the first record at or after `start` that `match` accepts."""
        deadline = time.monotonic() + WAIT_SECONDS
        with self._cond:
            while True:
                for i in range(start, len(self.records)):
                    if self.records[i] is not None and match(self.records[i]):
                        return i
                if self.proc.poll() is not None and not self._reader.is_alive():
                    raise ScenarioError(f"pi exited ({self.proc.returncode}) before {what}")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise ScenarioError(f"no {what} within {WAIT_SECONDS} s")
                self._cond.wait(min(left, 1.0))

    def response(self, command_id, what):
        i = self.wait_for(lambda r: r.get("type") == "response" and r.get("id") == command_id, 0, what)
        return self.records[i]

    def close(self):
        """Closes stdin (pi's orderly shutdown) and waits for the exit."""
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=WAIT_SECONDS)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise ScenarioError(f"pi did not exit within {WAIT_SECONDS} s of its stdin closing")
        self._reader.join()
        self._err.join()


def step_kind(step):
    """What a step does: "wait", or the RPC command it sends (the step's key is the command's type)."""
    return next(k for k in step if k in COMMANDS)


def event_matcher(step):
    """A wait step as a predicate: {"wait": TYPE} plus optional fields the event must have, e.g.
    {"wait": "tool_execution_start", "toolName": "bash"} or {"wait": "message_update", "delta": "text_delta"}."""
    kind = step["wait"]
    fields = {k: v for k, v in step.items() if k not in ("wait", "note", "versions")}

    def match(record):
        if record.get("type") != kind:
            return False
        for key, want in fields.items():
            if key == "delta":
                if (record.get("assistantMessageEvent") or {}).get("type") != want:
                    return False
            elif record.get(key) != want:
                return False
        return True
    return match


def image_blocks(names, workdir):
    out = []
    for name in names:
        with open(os.path.join(workdir, name), "rb") as f:
            data = f.read()
        out.append({"type": "image", "data": base64.b64encode(data).decode(), "mimeType": MIME[os.path.splitext(name)[1]]})
    return out


def command_of(step, workdir):
    """The RPC command a step sends (None for a wait)."""
    if "prompt" in step:
        command = {"type": "prompt", "message": step["prompt"]}
        if step.get("streamingBehavior"):
            command["streamingBehavior"] = step["streamingBehavior"]
    elif "steer" in step:
        command = {"type": "steer", "message": step["steer"]}
    elif "follow_up" in step:
        command = {"type": "follow_up", "message": step["follow_up"]}
    elif "abort" in step:
        command = {"type": "abort"}
    elif "compact" in step:
        command = {"type": "compact"}
        if isinstance(step["compact"], str):
            command["customInstructions"] = step["compact"]
    elif "set_model" in step:
        provider, model_id = step["set_model"].split("/", 1)
        command = {"type": "set_model", "provider": provider, "modelId": model_id}
    elif "set_thinking_level" in step:
        command = {"type": "set_thinking_level", "level": step["set_thinking_level"]}
    elif "bash" in step:
        command = {"type": "bash", "command": step["bash"]}
    elif "set_session_name" in step:
        command = {"type": "set_session_name", "name": step["set_session_name"]}
    else:
        return None
    if step.get("images"):
        command["images"] = image_blocks(step["images"], workdir)
    return command


class Sandbox:
    """The fixed directories of one scenario, made afresh."""

    def __init__(self, name, settings, files, port):
        self.root = os.path.join(SANDBOX_ROOT, name)
        shutil.rmtree(self.root, ignore_errors=True)
        self.work = os.path.join(self.root, "work")
        self.home = os.path.join(self.root, "home")
        self.agent = os.path.join(self.home, "agent")
        os.makedirs(self.work)
        os.makedirs(self.agent)
        with open(os.path.join(self.agent, "models.json"), "w") as f:
            json.dump(models_json(port), f, indent=1)
        if settings:
            with open(os.path.join(self.agent, "settings.json"), "w") as f:
                json.dump(settings, f, indent=1)
        write_files(self.work, files)
        # No extensions, skills, themes or context files: pi finds none in an empty agent dir.
        self.env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": self.home, "PI_CODING_AGENT_DIR": self.agent,
                    "PI_OFFLINE": "1", "NO_COLOR": "1", "LANG": "C.UTF-8", "TZ": "UTC"}

    def session_files(self):
        return sorted(glob.glob(os.path.join(self.agent, "sessions", "**", "*.jsonl"), recursive=True))


def pi_cli(pi_dest, version):
    """pi's CLI through a fixed link, /tmp/pi-hydrate-scenarios/pi -> pi_dest: pi names its own docs in
    the system prompt it stores, and with node keeping the link's path (--preserve-symlinks*) that
    path is the same on every machine."""
    link = os.path.join(SANDBOX_ROOT, "pi")
    if os.path.realpath(link) != os.path.realpath(pi_dest):
        if os.path.lexists(link):
            os.remove(link)
        os.makedirs(SANDBOX_ROOT, exist_ok=True)
        os.symlink(os.path.realpath(pi_dest), link)
    return os.path.join(link, f"pi-{version}", "node_modules", "@earendil-works", "pi-coding-agent", PI_VERSIONS[version])


def run_rpc(scenario, pi, box, version):
    """Sends the steps; returns problems (commands that failed unexpectedly)."""
    problems = []
    cursor = 0  # waits look at events after the previous wait's match
    for i, step in enumerate(scenario.get("steps", [])):
        if version not in step.get("versions", [version]):
            continue  # a step for other versions only (the scenario's file says why)
        if "wait" in step:
            step = dict(step, wait=STAND_INS.get(version, {}).get(step["wait"], step["wait"]))
            cursor = pi.wait_for(event_matcher(step), cursor, f"steps[{i}] {step['wait']}") + 1
            continue
        command = command_of(step, box.work)
        command_id = pi.send(command)
        reply = pi.response(command_id, f"the response to steps[{i}] {command['type']}")
        if not reply.get("success") and not step.get("expect_failure"):
            problems.append(f"steps[{i}] {command['type']} failed: {reply.get('error')}")
        if reply.get("success") and step.get("expect_failure"):
            problems.append(f"steps[{i}] {command['type']} succeeded but the scenario expects a failure")
    return problems


def record(scenario, version, pi_dest, out_dir, node):
    """Runs one scenario for one pi version; returns a result dict (ok, problems, entries, events)."""
    name = scenario["name"]
    box = Sandbox(name, scenario.get("settings"), scenario.get("files"), PORT)
    cli = pi_cli(pi_dest, version)
    problems = []
    raw = []
    try:
        standin = StandIn(record_dir=os.path.join(box.root, "requests"), port=PORT, script=script_for(scenario, version))
    except OSError as e:
        return {"name": name, "version": version, "ok": False, "entries": 0, "events": 0,
                "problems": [f"the stand-in cannot listen on 127.0.0.1:{PORT}: {e}"]}
    with standin:
        if scenario["mode"] == "rpc":
            pi = PiProcess([node, *NODE_FLAGS, cli, "--mode", "rpc", "--offline", "--model", MODEL], box.work, box.env)
            try:
                problems += run_rpc(scenario, pi, box, version)
            except ScenarioError as e:
                problems.append(str(e))
            try:
                pi.close()
            except ScenarioError as e:
                problems.append(str(e))
            raw = pi.raw
            if pi.proc.returncode != 0:
                problems.append(f"pi exited {pi.proc.returncode}: {pi.stderr.decode(errors='replace')[-300:]}")
        else:
            for k, run in enumerate(scenario["runs"]):
                argv = [node, *NODE_FLAGS, cli, "--mode", "json", "--offline", "--model", MODEL] + run.get("args", []) + ["-p", run["prompt"]]
                done = subprocess.run(argv, cwd=box.work, env=box.env, stdin=subprocess.DEVNULL, capture_output=True,
                                      timeout=WAIT_SECONDS)
                raw += done.stdout.splitlines(keepends=True)
                if done.returncode != 0:
                    problems.append(f"runs[{k}]: pi exited {done.returncode}: {done.stderr.decode(errors='replace')[-300:]}")
        requests = standin.requests()
    problems += check_requests(script_for(scenario, version), requests)
    sessions = box.session_files()
    if len(sessions) != 1:
        problems.append(f"pi wrote {len(sessions)} session files, 1 expected")
    target = os.path.join(out_dir, f"pi-{version}", name)
    shutil.rmtree(target, ignore_errors=True)
    os.makedirs(target)
    entries = 0
    if sessions:
        shutil.copyfile(sessions[0], os.path.join(target, "session.jsonl"))
        with open(sessions[0], "rb") as f:
            entries = sum(1 for line in f if line.strip()) - 1  # the header is not an entry
    with open(os.path.join(target, "events.jsonl"), "wb") as f:
        f.write(b"".join(raw))
    return {"name": name, "version": version, "ok": not problems, "problems": problems, "entries": entries, "events": len(raw)}


def check_requests(script, requests):
    """The stand-in's side: no request broke a rule, and the script was used up exactly (a pi that
    asks more or less often than the scenario planned does not do what the scenario says)."""
    problems = [f"request {r['seq']} broke the rule {r['rule']}: {r['error']}" for r in requests if r.get("rule")]
    scripted = len(script)
    used = sum(1 for r in requests if r.get("api") == "anthropic-messages")
    if used != scripted:
        problems.append(f"the script has {scripted} replies, pi made {used} requests")
    return problems


def entry_kind(entry):
    """An entry's kind for a listing: its type, a message's role, an assistant's stop reason."""
    kind = entry.get("type")
    message = entry.get("message") or {}
    if kind == "message":
        kind = f"message/{message.get('role')}"
        if message.get("role") == "assistant":
            kind += f"({message.get('stopReason')})"
        if message.get("role") == "toolResult" and message.get("isError"):
            kind += "(error)"
    return kind


def describe(target):
    """A recording in two lines, the same for two runs of a scenario that did the same things: the
    entry kinds of session.jsonl in order, and the event types of events.jsonl in order (repeats of
    one type folded into `type*N`). Made to be compared by eye (or diff) across runs and versions."""
    with open(os.path.join(target, "session.jsonl"), "rb") as f:
        kinds = [entry_kind(json.loads(line)) for line in f if line.strip()]
    with open(os.path.join(target, "events.jsonl"), "rb") as f:
        types = [json.loads(line).get("type") for line in f if line.strip()]
    folded = []
    for t in types:
        if folded and folded[-1][0] == t:
            folded[-1][1] += 1
        else:
            folded.append([t, 1])
    return (", ".join(kinds), ", ".join(t if n == 1 else f"{t}*{n}" for t, n in folded))


# What the recording drivers of the coding-agent CLIs (tests/e2e/*_driver.py, tests/agents/README.md)
# share: each keeps only what is its CLI's own (settings files, env, argv, where the session is written).

def write_files(folder, files):
    """A scenario's `files` made in `folder`: {"path": "text"} or {"path": {"base64": ...}} (a binary file)."""
    for rel, content in (files or {}).items():
        path = os.path.join(folder, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if isinstance(content, dict):
            with open(path, "wb") as f:
                f.write(base64.b64decode(content["base64"]))
        else:
            with open(path, "w") as f:
                f.write(content)


def fresh_dir(path):
    """`path`, emptied: what a recording or a sandbox starts from."""
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


def agent_sandbox(root, dirs, files):
    """A fresh, fixed sandbox `root` with the folders `dirs` (work/ among them, the scenario's files in
    it): {folder: path, ..., "root": root}."""
    shutil.rmtree(root, ignore_errors=True)
    box = {k: os.path.join(root, k) for k in dirs}
    for d in box.values():
        os.makedirs(d)
    box["root"] = root
    write_files(box["work"], files)
    return box


def standin_script(scenario):
    """The script as the stand-in reads it: without the driver's own `purpose` field."""
    return [{k: v for k, v in r.items() if k != "purpose"} if isinstance(r, dict) else r
            for r in scenario.get("script", [])]


def purposes(scenario):
    return [(r.get("purpose", "main") if isinstance(r, dict) else "main") for r in scenario.get("script", [])]


def load_runs_scenario(path, fields):
    """A scenario of `runs` (Claude Code, Qwen Code, OpenCode): about, runs of prompts, a script whose
    replies may say `purpose`."""
    name = os.path.splitext(os.path.basename(path))[0]
    scenario = read_scenario_file(path, fields)
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


def load_steps_scenario(path, fields, step_fields, step_shape):
    """A scenario of `steps` (Codex, Gemini CLI): each step a prompt and only `step_fields`."""
    name = os.path.splitext(os.path.basename(path))[0]
    scenario = read_scenario_file(path, fields)
    if not scenario.get("steps"):
        raise ScenarioError(f"{path}: steps: at least one prompt")
    for i, step in enumerate(scenario["steps"]):
        if not isinstance(step, dict) or not isinstance(step.get("prompt"), str) or set(step) - step_fields:
            raise ScenarioError(f"{path}: steps[{i}]: {step_shape} expected")
    try:
        parse_script(scenario.get("script", []), f"{path}: script")
    except ScriptError as e:
        raise ScenarioError(str(e))
    scenario["name"] = name
    return scenario


def path_env(env, dirs):
    """`env` with those of `dirs` that exist (node 22's bin) first on PATH."""
    env["PATH"] = os.pathsep.join([d for d in dirs if os.path.isdir(d)] + [env.get("PATH", "/usr/bin:/bin")])
    return env


def npm_install(cache, package, version, env, flags):
    """The pinned `package@version` installed with npm into `cache`."""
    os.makedirs(cache, exist_ok=True)
    subprocess.run(["npm", "install", *flags, "--prefix", cache, f"{package}@{version}"], check=True, env=env)


def install_cli(cache, program, package, version, env):
    """The CLI at `program` (a path in `cache`), installed from npm when it is not there."""
    cli = os.path.join(cache, program)
    if not os.path.exists(cli):
        npm_install(cache, package, version, env, ["--no-audit", "--no-fund"])
    return cli


def find_pinned_cli(explicit, cache, program, package, version, label, node_dirs, parse_version):
    """The pinned CLI whose `--version` says `version` (read by parse_version): --cli, the one in
    `cache`, or an npm install there; returns (cli, env: os.environ with node first on PATH)."""
    node_dir = next((d for d in node_dirs if os.path.exists(os.path.join(d, "node"))), None)
    env = dict(os.environ)
    if node_dir:
        env["PATH"] = node_dir + os.pathsep + env.get("PATH", "")

    def version_of(cli):
        try:
            out = subprocess.run([cli, "--version"], env=env, capture_output=True, text=True, timeout=60).stdout
        except (OSError, subprocess.TimeoutExpired):
            return None
        return parse_version(out.strip()) if out.strip() else None

    cached = os.path.join(cache, "node_modules", ".bin", program)
    for cli in [explicit] if explicit else [cached]:
        if cli and os.path.exists(cli) and version_of(cli) == version:
            return cli, env
    if explicit:
        raise ScenarioError(f"{explicit}: not {label} {version}")
    npm_install(cache, package, version, env, ["--no-save"])
    if version_of(cached) != version:
        raise ScenarioError(f"{cached}: the npm install did not give {label} {version}")
    return cached, env


def run_cli(argv, box, env, number, suffix, timeout, problems, **io):
    """One CLI process of a scenario in work/, its stdout and stderr kept in stdout/run-N (a failure
    added to `problems`); `io` is its stdin (input= or stdin=)."""
    with open(os.path.join(box["stdout"], f"run-{number}{suffix}"), "wb") as out, \
         open(os.path.join(box["stdout"], f"run-{number}.stderr"), "wb") as err:
        try:
            proc = subprocess.run(argv, cwd=box["work"], env=env, stdout=out, stderr=err, timeout=timeout, **io)
            if proc.returncode != 0:
                problems.append(f"run {number} exited {proc.returncode} (see {err.name})")
        except subprocess.TimeoutExpired:
            problems.append(f"run {number} did not finish in {timeout} s")
    return out.name


def reduce_messages_request(entry, purpose):
    """A Messages API request as conversation.json keeps it: the system prompt and the tool schemas
    dropped, tools named."""
    body = entry["body"] or {}
    return {"seq": entry["seq"], "path": entry["path"], "model": body.get("model"), "purpose": purpose,
            "messages": body.get("messages"), "tools": [t.get("name") for t in body.get("tools") or []]}


def scripted_conversation(scenario, requests, unused, reduce, problems, forgiven=lambda entry: False):
    """The requests the stand-in accepted, each reduced with its script reply's purpose; a refusal
    (but those `forgiven` accepts), a reply left unused and a request the script did not answer go
    to `problems`."""
    script_purposes = purposes(scenario)
    conversation = []
    for entry in requests:
        if entry["status"] != 200:
            if not forgiven(entry):
                problems.append(f"request {entry['seq']} refused: {entry.get('rule')}: {entry.get('error')}")
            continue
        index = entry.get("script_index")
        conversation.append(reduce(entry, script_purposes[index] if index is not None else "unscripted"))
    if unused:
        problems.append(f"script replies never used: {unused}")
    unscripted = [r["seq"] for r in conversation if r["purpose"] == "unscripted"]
    if unscripted:
        problems.append(f"requests the script did not answer (the default text did): {unscripted}")
    return conversation


def write_conversation(target, conversation):
    with open(os.path.join(target, "conversation.json"), "w") as f:
        json.dump(conversation, f, indent=1, ensure_ascii=False)
        f.write("\n")


def finish(name, target, conversation, count, problems, unit="records"):
    """Writes conversation.json into `target` and prints the scenario's line (NAME ok|failed COUNT
    UNIT REQUESTS requests) and its problems; True when there are none."""
    write_conversation(target, conversation)
    print(f"{name} {'failed' if problems else 'ok'} {count} {unit} {len(conversation)} requests", flush=True)
    for p in problems:
        print(f"  {p}", flush=True)
    return not problems


def copy_into(folder, paths):
    """Copies `paths` into `folder` (made when there is one), each under its own name."""
    for path in paths:
        os.makedirs(folder, exist_ok=True)
        shutil.copyfile(path, os.path.join(folder, os.path.basename(path)))


def scenario_paths(folder, only):
    paths = sorted(glob.glob(os.path.join(folder, "*.json")))
    if only:
        paths = [p for p in paths if os.path.splitext(os.path.basename(p))[0] in only]
    return paths


def scenarios_in(folder, only, load):
    """The scenarios of `folder` (all, or those `only` names), loaded and checked; exits 2 when `only`
    names one that is not there or a scenario is wrong."""
    paths = scenario_paths(folder, only)
    if only and len(paths) != len(set(only)):
        print(f"unknown scenario among {only}", file=sys.stderr)
        sys.exit(2)
    try:
        return [load(p) for p in paths]
    except ScenarioError as e:
        print(e, file=sys.stderr)
        sys.exit(2)


def driver_arguments(doc, recorded, cli_help):
    """A driver's command line: --only NAME (repeatable), --out DIR, --cli PATH."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", metavar="NAME", action="append", help="only this scenario (repeatable)")
    parser.add_argument("--out", metavar="DIR", default=recorded)
    parser.add_argument("--cli", metavar="PATH", help=cli_help)
    return parser


def record_each(scenarios, record):
    """Records every scenario; the exit status: 0 when all are ok."""
    ok = True
    for scenario in scenarios:
        ok = record(scenario) and ok
    return 0 if ok else 1


def record_steps(prog, args, folder, find_cli, load, run, unit):
    """The Codex and Gemini CLI drivers' loop: the pinned CLI (2 when there is none), then each
    scenario loaded and run, one line each: NAME ok REQUESTS requests LINES UNIT, or NAME failed and
    the reason."""
    paths = scenario_paths(folder, args.only)
    try:
        cli, env = find_cli(args.cli)
    except (ScenarioError, subprocess.CalledProcessError) as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return 2
    failed = 0
    for path in paths:
        name = os.path.splitext(os.path.basename(path))[0]
        try:
            requests, lines = run(load(path), cli, env, args.out)
            print(f"{name} ok {requests} requests {lines} {unit}", flush=True)
        except (ScenarioError, subprocess.TimeoutExpired, OSError) as e:
            failed += 1
            print(f"{name} failed\n  {e}", flush=True)
    return 1 if failed else 0
