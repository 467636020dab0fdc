#!/usr/bin/env python3
"""End-to-end resume: the real pi continues hydrated sessions against the strict stand-in.

  resume.py --pi-dest build/pi --pi-hydrate build/pi-hydrate [--jobs 2] [--only resume|pairs|conventions]
            [--case SUBSTRING] [--keep DIR]

For every successful hydrate and thread golden case and the bundled examples, it hydrates the input
into a fresh sandbox directory (the golden command with `--cwd` pointing there), then runs

  pi --offline --session COPY --model M -p "Go on. [e2e N]"

in that sandbox, in an isolated HOME and agent dir whose models.json points the anthropic and
openai providers and a Chat Completions provider at the stand-in (standin.py), for pi 1.6.0 and
1.5.2 against each of the three APIs and pi 0.78.0 against Anthropic's. Each run must:
  - be accepted by the stand-in, and pi must print the reply and exit 0;
  - send the conversation pinned for that case (tests/conformance/expected/<group>__<case>.json,
    the context pi *loads*), followed by the new prompt: what pi sends must equal what it loads;
  - leave a file in which `pi-hydrate validate --level resume` finds no error and no warning.

The pairs (tests/e2e/pairs.json) are raw files with the defects users hit: each raw file must fail
as pinned there (HTTP 400 from the stand-in, or pi refusing to start), and the same file after
`pi-hydrate --session` must resume.

The conventions: examples/thread.json hydrated with no output option (PI_CODING_AGENT_DIR, a default
~/.pi/agent, PI_CODING_AGENT_SESSION_DIR) is found by `pi --continue` run in --cwd, and
`pi --session "$(pi-hydrate ...)"` resumes it, for both pi versions.

How pi runs. A pi start costs one to two seconds; a resume, tens of milliseconds. So most resumes go
to pi processes in RPC mode (pi_rpc.py: `pi --mode rpc --offline --model M`, then `switch_session`
and `prompt` per resume, one process per pi version and model and worker), which open the file as
--session does and answer in the shape of the `-p` run; the checks are the same either way. For
each pi version, the first case of each input form (a pi session, a Claude Code or Codex transcript,
a thread export, a thread export with raw pi entries) runs the real `pi --session FILE -p` instead,
as do the conventions; a session whose header names no cwd does too (pi would take the process cwd).

The last line is `e2e: N passed, M failed`; exit status 0 when nothing failed.
"""
import argparse
import concurrent.futures
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
GOLDEN = os.path.join(ROOT, "tests", "golden")
PINNED = os.path.join(ROOT, "tests", "conformance", "expected")
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "conformance"))
import conformance  # noqa: E402  (the golden cases and the pinned contexts' shape)
import sent  # noqa: E402
from pi_rpc import PiRpc, PiRpcPool  # noqa: E402
from standin import DEFAULT_REPLY, StandIn  # noqa: E402

PI_VERSIONS = {"1.6.0": "dist/bundle/cli.js", "1.5.2": "dist/bundle/cli.js", "0.78.0": "dist/cli.js"}
# What --pi-version of pi-hydrate calls each installed pi.
HYDRATE_PI_VERSION = {"1.6.0": "1.6", "1.5.2": "1.5", "0.78.0": "0.78"}
# The event that ends an RPC prompt's run: pi 0.78 has no agent_settled (a retry ends a run of its own
# there too, but the stand-in answers resumes without errors it would retry).
SETTLED = {"0.78.0": "agent_end"}
TOKEN = re.compile(r"\[e2e \d+\]")
MODELS = {  # the API pi speaks for each model, all three pointed at the stand-in by models.json
    "anthropic-messages": "anthropic/claude-sonnet-4-5",
    "openai-responses": "openai/gpt-5",
    "openai-completions": "standin-chat/standin-chat-1",
}
PI_TIMEOUT = 120


def models_json(port):
    base = f"http://127.0.0.1:{port}"
    return {"providers": {
        "anthropic": {"baseUrl": base},
        "openai": {"baseUrl": base + "/v1"},
        "standin-chat": {"baseUrl": base + "/v1", "api": "openai-completions", "apiKey": "standin",
                         "models": [{"id": "standin-chat-1", "input": ["text", "image"]}]},
    }}


class World:
    """The stand-in, an isolated HOME with its agent dir, and the pi installs."""

    def __init__(self, args, standin, tmp):
        self.args = args
        self.standin = standin
        self.node = os.path.join(args.pi_dest, "node", "bin", "node")
        self.home = os.path.join(tmp, "home")
        agent = os.path.join(self.home, "agent")
        os.makedirs(agent)
        with open(os.path.join(agent, "models.json"), "w") as f:
            json.dump(models_json(standin.port), f, indent=1)
        # No extensions, skills, themes or context files: pi finds none in an empty agent dir.
        self.env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": self.home, "PI_CODING_AGENT_DIR": agent,
                    "ANTHROPIC_API_KEY": "standin", "OPENAI_API_KEY": "standin", "PI_OFFLINE": "1",
                    "NO_COLOR": "1", "LANG": "C.UTF-8"}
        self.tmp = tmp
        self._serial = itertools.count(1)
        self._lock = threading.Lock()
        self._by_token, self._indexed = {}, 0
        self.rpc = PiRpcPool(self._start_rpc)
        self.starts = {"cli": 0, "rpc": 0}  # resumes by way

    def serial(self):
        with self._lock:
            return next(self._serial)

    def _start_rpc(self, version, model):
        argv = [self.node, self.pi_cli(version), "--mode", "rpc", "--offline", "--model", model]
        return PiRpc(argv, self.tmp, self.env, SETTLED.get(version, "agent_settled"), PI_TIMEOUT)

    def close(self):
        self.rpc.close()

    def requests_with(self, token):
        """The stand-in's requests whose body holds `token` ("[e2e N]"), in order. Each request is
        read once (its body's JSON text searched for tokens), not once per resume."""
        with self._lock:
            new = self.standin.requests()[self._indexed:]
            self._indexed += len(new)
            for r in new:
                for t in set(TOKEN.findall(json.dumps(r.get("body")))):
                    self._by_token.setdefault(t, []).append(r)
            return list(self._by_token.get(token, []))

    def pi_cli(self, version):
        return os.path.join(self.args.pi_dest, f"pi-{version}", "node_modules", "@earendil-works",
                            "pi-coding-agent", PI_VERSIONS[version])

    def sandbox(self, name):
        path = tempfile.mkdtemp(prefix=name.replace("/", "_") + "-", dir=self.tmp)
        os.makedirs(os.path.join(path, "work"))
        return path

    def hydrate(self, argv, cwd, stdin_path=None):
        return conformance.run_pi_hydrate(self.args.pi_hydrate, argv, cwd, stdin_path)

    def resume(self, version, api, session, workdir, cli=False):
        """pi resumes `session` in `workdir` with a new prompt: the real `pi --session` when `cli` (or
        when the session's header names no cwd, which pi would take from the process), else a
        switch_session and prompt in an RPC process (pi_rpc.py). Returns (completed process, shaped
        like the -p run's, the prompt, the request pi sent or None)."""
        token = f"[e2e {self.serial()}]"
        prompt = f"Go on. {token}"
        if not cli and header_cwd(session) is None:
            cli = True
        if cli:
            cmd = [self.node, self.pi_cli(version), "--offline", "--session", session, "--model", MODELS[api], "-p", prompt]
            try:
                run = subprocess.run(cmd, cwd=workdir, env=self.env, capture_output=True, text=True, timeout=PI_TIMEOUT,
                                     stdin=subprocess.DEVNULL)
            except subprocess.TimeoutExpired:
                run = subprocess.CompletedProcess(cmd, -1, "", f"pi did not finish in {PI_TIMEOUT} s")
        else:
            run = self.rpc.resume(version, MODELS[api], session, prompt)
        with self._lock:
            self.starts["cli" if cli else "rpc"] += 1
        mine = self.requests_with(token)
        return run, prompt, (mine[-1] if mine else None)

    def validate_clean(self, version, session, workdir):
        """Problems `pi-hydrate validate --level resume` finds, for pi `version`, in the file pi appended
        to (none, or each diagnostic): it must stay loadable and resumable without a warning."""
        pi_version = HYDRATE_PI_VERSION[version]
        check = subprocess.run([self.args.pi_hydrate, "validate", "--level", "resume", "--pi-version", pi_version,
                                "--format", "json", session], cwd=workdir, capture_output=True, text=True, timeout=120)
        try:
            report = json.loads(check.stdout)["files"][0]
        except (ValueError, KeyError, IndexError):
            return [f"pi-hydrate validate exited {check.returncode}: {check.stderr[:300]}"]
        return [f"after the resume, validate says {d['severity']} {d['code']} at line {d['line']}: {d['message']}"
                for d in report["diagnostics"]]


def header_cwd(session):
    """The cwd the session file's first line names, or None."""
    try:
        with open(session, "rb") as f:
            header = json.loads(f.readline())
        return header.get("cwd") if isinstance(header, dict) and isinstance(header.get("cwd"), str) else None
    except (OSError, ValueError):
        return None


def input_form(argv, folder):
    """What a golden case hydrates, for the choice of the runs that start pi for real: "session",
    "claude-code", "codex", "gemini-cli", "thread" or "raw thread" (a thread export with pi.entry or
    pi.snapshot)."""
    if "--thread" in argv:
        path = argv[argv.index("--thread") + 1]
        try:
            with open(os.path.join(folder, path), encoding="utf-8", errors="replace") as f:
                text = f.read()
        except OSError:
            return "thread"
        return "raw thread" if '"pi.entry"' in text or '"pi.snapshot"' in text else "thread"
    name = os.path.basename(folder)
    for form in ("claude-code", "codex", "gemini-cli"):
        if name.startswith(form + "-"):
            return form
    return "session"


def first_runs(jobs, key):
    """The indexes of `jobs` that start pi for real: the first job of each (pi version, key(job))."""
    seen, out = set(), set()
    for i, job in enumerate(jobs):
        k = (job[0], key(job))
        if k not in seen:
            seen.add(k)
            out.add(i)
    return out


# ---------------------------------------------------------------- the cases

def golden_cases():
    """(name, argv, case dir, stdin path, pinned context path) for each successful hydrate golden case
    (the ones whose context conformance.py pins) and the bundled examples."""
    out = []
    for group, folder, words in conformance.hydrate_cases():
        stdin_path = None
        if "<" in words:
            stdin_path = os.path.join(folder, words[-1])
            words = words[:-2]
        name = os.path.relpath(folder, GOLDEN)
        out.append((name, words, folder, stdin_path, os.path.join(PINNED, name.replace(os.sep, "__") + ".json")))
    for name, source in (("example/thread", ["--thread", "thread.json"]), ("example/session", ["--session", "session.jsonl"])):
        out.append((name, source + ["--cwd", "/tmp", "-o", "-"], os.path.join(ROOT, "examples"), None, None))
    return out


def hydrate_into(world, argv, folder, stdin_path, workdir, out):
    argv = list(argv)
    argv[argv.index("-o") + 1] = out
    if "--cwd" in argv:
        argv[argv.index("--cwd") + 1] = workdir
    else:
        argv += ["--cwd", workdir]
    return world.hydrate(argv + ["--force"], folder, stdin_path)


def first_difference(expected, got):
    for i, (a, b) in enumerate(zip(expected, got)):
        if a != b:
            return f"message {i}: expected {json.dumps(a)[:240]} sent {json.dumps(b)[:240]}"
    if len(expected) != len(got):
        return f"expected {len(expected)} messages, sent {len(got)}"
    return None


def check_resume(world, version, api, case, loaded, cli=False):
    """One resume of one hydrated case; returns a list of problems (empty: it resumed as pinned)."""
    name, argv, folder, stdin_path, _pinned = case
    box = world.sandbox(name)
    workdir = os.path.join(box, "work")
    session = os.path.join(box, "s.jsonl")
    made = hydrate_into(world, argv, folder, stdin_path, workdir, session)
    if made.returncode != 0:
        return [f"pi-hydrate exited {made.returncode}: {made.stderr.decode()[:300]}"]
    run, prompt, request = world.resume(version, api, session, workdir, cli)
    problems = []
    if request is None:
        problems.append(f"pi sent no request (exit {run.returncode}): {run.stderr.strip()[:300]}")
    elif request["status"] != 200:
        problems.append(f"the stand-in rejected the request: HTTP {request['status']} [{request['rule']}] {request['error']}")
    if run.returncode != 0 or DEFAULT_REPLY not in run.stdout:
        problems.append(f"pi exited {run.returncode} without the reply: {run.stderr.strip()[:300]}")
    if request is not None and loaded is not None:
        expected = conformance.summarize(loaded) + [{"role": "user", "texts": [prompt], "toolCallIds": [], "toolResultId": None}]
        api_name = request["api"]
        got = conformance.summarize(sent.conversation(api_name, request["body"]))
        got = sent.without_thinking_sent_as_text(expected, got, sent.thinking_texts(session))
        diff = first_difference(sent.comparable(api_name, expected), sent.comparable(api_name, got))
        if diff:
            problems.append("what pi sent differs from what it loads: " + diff)
    if not problems:
        problems += world.validate_clean(version, session, workdir)
    if not problems and not world.args.keep:
        shutil.rmtree(box, ignore_errors=True)
    return problems


def loaded_context(world, case):
    """The context pi loads for a case: the pinned one, or for the examples pi's own load of them."""
    name, argv, folder, stdin_path, pinned = case
    if pinned is not None:
        if not os.path.exists(pinned):
            return None, f"no pinned context {os.path.relpath(pinned, ROOT)}"
        with open(pinned) as f:
            return json.load(f)["llm"], None
    box = world.sandbox(name)
    session = os.path.join(box, "s.jsonl")
    hydrate_into(world, argv, folder, stdin_path, os.path.join(box, "work"), session)
    loader = os.path.join(ROOT, "tests", "conformance", "pi_load.mjs")
    out = subprocess.run([world.node, loader, "--pi", os.path.join(world.args.pi_dest, "pi-1.5.2"), "--full", session],
                         cwd=os.path.join(box, "work"), capture_output=True, text=True, timeout=120)
    try:
        return json.loads(out.stdout)["llm"], None
    except (ValueError, KeyError):
        return None, f"pi_load.mjs failed: {out.stderr[:300]}"


# ---------------------------------------------------------------- pi's own conventions

# Where the hydrated session goes when no output option is given, and how pi then finds it.
CONVENTIONS = ("PI_CODING_AGENT_DIR + pi --continue", "~/.pi/agent + pi --continue",
               "PI_CODING_AGENT_SESSION_DIR + pi --continue", 'pi --session "$(pi-hydrate ...)"')


def check_convention(world, version, convention):
    """Hydrates examples/thread.json with no output option, as a bootstrap script would, then lets pi find
    the session its own way; returns a list of problems."""
    box = world.sandbox("conventions")
    workdir = os.path.join(box, "work")
    env = dict(world.env)
    expected_dir = os.path.join(env["PI_CODING_AGENT_DIR"], "sessions", "--" + workdir[1:].replace("/", "-") + "--")
    if convention.startswith("~/.pi/agent"):
        home = os.path.join(box, "home")
        os.makedirs(os.path.join(home, ".pi"))
        shutil.copytree(env["PI_CODING_AGENT_DIR"], os.path.join(home, ".pi", "agent"))
        env["HOME"] = home
        del env["PI_CODING_AGENT_DIR"]
        expected_dir = os.path.join(home, ".pi", "agent", "sessions", "--" + workdir[1:].replace("/", "-") + "--")
    elif convention.startswith("PI_CODING_AGENT_SESSION_DIR"):
        env["PI_CODING_AGENT_SESSION_DIR"] = expected_dir = os.path.join(box, "flat")
    hydrate = [world.args.pi_hydrate, "--thread", os.path.join(ROOT, "examples", "thread.json"), "--cwd", workdir]
    token = f"[e2e {world.serial()}]"
    prompt = f"Go on. {token}"
    pi = [world.node, world.pi_cli(version), "--offline", "--model", MODELS["anthropic-messages"], "-p", prompt]
    if convention.startswith("pi --session"):
        # Literally the command the docs give, through a shell.
        script = 'exec "$@" --session "$(' + " ".join(f"'{w}'" for w in hydrate) + ')"'
        run = subprocess.run(["bash", "-c", script, "pi"] + pi, cwd=workdir, env=env, capture_output=True,
                             text=True, timeout=PI_TIMEOUT, stdin=subprocess.DEVNULL)
        written = [f for f in os.listdir(expected_dir)] if os.path.isdir(expected_dir) else []
        session = os.path.join(expected_dir, written[0]) if len(written) == 1 else None
    else:
        made = subprocess.run(hydrate, cwd=workdir, env=env, capture_output=True, text=True, timeout=120)
        if made.returncode != 0:
            return [f"pi-hydrate exited {made.returncode}: {made.stderr[:300]}"]
        session = made.stdout.strip()
        if os.path.dirname(session) != expected_dir:
            return [f"pi-hydrate wrote {session}, not into {expected_dir}"]
        run = subprocess.run(pi + ["--continue"], cwd=workdir, env=env, capture_output=True, text=True,
                             timeout=PI_TIMEOUT, stdin=subprocess.DEVNULL)
    if session is None or not os.path.isfile(session):
        return [f"no single session file in {expected_dir} (pi exited {run.returncode}: {run.stderr.strip()[:300]})"]
    mine = world.requests_with(token)
    problems = []
    if not mine or mine[-1]["status"] != 200:
        problems.append(f"pi sent no accepted request (exit {run.returncode}): {run.stderr.strip()[:300]}")
    elif run.returncode != 0 or DEFAULT_REPLY not in run.stdout:
        problems.append(f"pi exited {run.returncode} without the reply: {run.stderr.strip()[:300]}")
    else:
        # pi resumed the hydrated conversation, not a new one: its first user text was sent.
        with open(os.path.join(ROOT, "examples", "thread.json")) as f:
            first_user = next(e["text"] for e in json.load(f)["entries"] if e.get("kind") == "chat" and e.get("role") == "user")
        got = conformance.summarize(sent.conversation(mine[-1]["api"], mine[-1]["body"]))
        if not got or first_user not in " ".join(got[0]["texts"]):
            problems.append(f"pi did not send the hydrated conversation: first message {json.dumps(got[:1])[:300]}")
    if not problems and not world.args.keep:
        shutil.rmtree(box, ignore_errors=True)
    return problems


# ---------------------------------------------------------------- raw-versus-hydrated pairs

def rehome(src, dst, workdir):
    """A copy of the raw file whose header cwd is the sandbox (so only the defect under test is left)."""
    with open(src, "rb") as f:
        lines = f.read().split(b"\n")
    header = json.loads(lines[0])
    header["cwd"] = workdir
    lines[0] = json.dumps(header).encode()
    with open(dst, "wb") as f:
        f.write(b"\n".join(lines))


def outcome(run, request):
    """How a resume ended, in the words pairs.json pins: "ok", "400 RULE" or "refused" (pi exited
    before it sent anything; pairs.json may add ": WORDS", which pi's stderr must contain)."""
    if request is not None and request["status"] != 200:
        return f"400 {request['rule']}"
    if run.returncode == 0 and request is not None and DEFAULT_REPLY in run.stdout:
        return "ok"
    return "refused"


def check_pair(world, version, api, pair):
    box = world.sandbox("pair-" + pair["name"])
    workdir = os.path.join(box, "work")
    src = os.path.join(ROOT, pair["input"])
    raw = os.path.join(box, "raw.jsonl")
    if pair.get("keep_cwd"):
        shutil.copyfile(src, raw)
    else:
        rehome(src, raw, workdir)
    run, _prompt, request = world.resume(version, api, raw, workdir)
    got_raw = outcome(run, request)
    want = pair["raw"].get(f"{version} {api}", pair["raw"].get(api, pair["raw"].get("*"))) or "(not pinned)"
    problems = []
    if got_raw == "refused" and want.startswith("refused: "):
        # pinned with the words pi refuses with
        if want[len("refused: "):] in run.stderr:
            got_raw = want
    if got_raw != want:
        detail = request["error"] if request is not None and request["status"] != 200 else run.stderr.strip()[:200]
        problems.append(f"the raw file: expected {want}, got {got_raw} ({detail})")
    hydrated = os.path.join(box, "hydrated.jsonl")
    made = world.hydrate(["--session", raw, "--cwd", workdir, "-o", hydrated], box)
    if made.returncode != 0:
        problems.append(f"pi-hydrate exited {made.returncode}: {made.stderr.decode()[:300]}")
        return got_raw, None, problems
    run, _prompt, request = world.resume(version, api, hydrated, workdir)
    got_hydrated = outcome(run, request)
    if got_hydrated != "ok":
        problems.append(f"the hydrated file did not resume: {got_hydrated} ({run.stderr.strip()[:200]})")
    else:
        problems += world.validate_clean(version, hydrated, workdir)
    if not problems and not world.args.keep:
        shutil.rmtree(box, ignore_errors=True)
    return got_raw, got_hydrated, problems


# ---------------------------------------------------------------- main

def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pi-dest", required=True, help="where tests/conformance/install_pi.sh installed node and pi")
    parser.add_argument("--pi-hydrate", required=True)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--only", choices=["resume", "pairs", "conventions"])
    parser.add_argument("--case", help="only cases whose name contains this")
    parser.add_argument("--keep", metavar="DIR", help="keep every sandbox and the stand-in's records in DIR")
    args = parser.parse_args()
    args.pi_dest, args.pi_hydrate = os.path.abspath(args.pi_dest), os.path.abspath(args.pi_hydrate)
    for version in PI_VERSIONS:
        if not os.path.isdir(os.path.join(args.pi_dest, f"pi-{version}")):
            print(f"e2e: FAILED: pi {version} is not installed in {args.pi_dest} "
                  f"(run tests/conformance/install_pi.sh {args.pi_dest})")
            return 1
    tmp = args.keep or tempfile.mkdtemp(prefix="pihydrate-e2e-")
    os.makedirs(tmp, exist_ok=True)
    counts, failures = {}, []

    def tally(key, problems, what):
        ok, total = counts.get(key, (0, 0))
        counts[key] = (ok + (not problems), total + 1)
        failures.extend(f"FAIL [{what}] {p}" for p in problems)

    with StandIn(os.path.join(tmp, "requests") if args.keep else None) as standin:
        world = World(args, standin, tmp)
        pool = concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs))
        every = [(v, a) for v in PI_VERSIONS for a in MODELS]
        # The golden cases: pi 1.6.0 and 1.5.2 against the three APIs, pi 0.78.0 against Anthropic's;
        # the pairs: every version against every API.
        runs = [(v, a) for v in PI_VERSIONS if v != "0.78.0" for a in MODELS] + [("0.78.0", "anthropic-messages")]
        if args.only in (None, "resume"):
            cases = [c for c in golden_cases() if not args.case or args.case in c[0]]
            contexts = {c[0]: loaded_context(world, c) for c in cases}
            planned = []
            for case in cases:
                loaded, why = contexts[case[0]]
                if why:
                    tally("pinned contexts found", [f"{case[0]}: {why}"], "resume")
                    continue
                planned += [(version, api, case, loaded) for version, api in runs]
            # The first Anthropic run of each input form and pi version starts pi for real.
            cli = first_runs(planned, lambda p: input_form(p[2][1], p[2][2]))
            jobs = [((version, api, case[0]), pool.submit(check_resume, world, version, api, case, loaded, i in cli))
                    for i, (version, api, case, loaded) in enumerate(planned)]
            for (version, api, name), job in jobs:
                tally(f"resumes accepted, pi {version}, {api}", [f"{name} (pi {version}, {api}): {p}" for p in job.result()], "resume")
        if args.only in (None, "conventions"):
            jobs = [((v, c), pool.submit(check_convention, world, v, c)) for v in PI_VERSIONS for c in CONVENTIONS]
            for (version, convention), job in jobs:
                tally("pi's session dir conventions", [f"{convention} (pi {version}): {p}" for p in job.result()],
                      "conventions")
        if args.only in (None, "pairs"):
            with open(os.path.join(HERE, "pairs.json")) as f:
                pairs = [p for p in json.load(f) if not args.case or args.case in p["name"]]
            jobs = [((v, a, p["name"]), pool.submit(check_pair, world, v, a, p)) for p in pairs for v, a in every]
            for (version, api, name), job in jobs:
                got_raw, got_hydrated, problems = job.result()
                print(f"e2e pair: {name:34} pi {version:6} {api:19} raw: {got_raw:32} hydrated: {got_hydrated}")
                tally("raw-versus-hydrated pairs", [f"{name} (pi {version}, {api}): {p}" for p in problems], "pairs")
        rejected = {}
        for r in standin.requests():
            if r["status"] != 200:
                rejected[r["rule"]] = rejected.get(r["rule"], 0) + 1
        world.close()
    for key, (ok, total) in sorted(counts.items()):
        print(f"e2e: {key}: {ok}/{total}")
    print(f"e2e: pi resumed {world.starts['cli']} times as `pi --session -p` and {world.starts['rpc']} times over RPC "
          f"in {world.rpc.started} RPC processes")
    print("e2e: the stand-in rejected: " + (", ".join(f"{rule} x{n}" for rule, n in sorted(rejected.items())) or "nothing"))
    for line in failures:
        print(line)
    if not args.keep:
        shutil.rmtree(tmp, ignore_errors=True)
    passed = sum(ok for ok, _ in counts.values())
    total = sum(t for _, t in counts.values())
    print(f"e2e: {passed} passed, {total - passed} failed")
    return 0 if total and passed == total else 1


if __name__ == "__main__":
    sys.exit(main())
