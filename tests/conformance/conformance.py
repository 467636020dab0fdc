#!/usr/bin/env python3
"""Differential tests: pi-hydrate against the real pi (0.78.0, 1.5.2 and 1.6.0).

  conformance.py --pi-dest build/pi --pi-hydrate build/pi-hydrate [--update] [--jobs 2] [--only PART]
  conformance.py --no-pi --pi-hydrate build-asan/pi-hydrate [--jobs 2]

Parts (docs/conformance.md says what each compares):
  validate   our `loadable` verdict vs pi's, per pi version, for every validate (and context) golden
             input and the real fixtures in ../shared/fixtures/pi-real (an input of another format
             than a pi session: pi loads the session `pi-hydrate --session` converts it to, which is
             what validate and context judge it by)
  hydrate    every successful hydrate/thread golden case: pi loads the output, pi's context equals the
             pinned context in tests/conformance/expected/ (--update rewrites them: review the diff),
             and for session inputs it equals pi's context of the input modulo the documented repairs
  roundtrip  hydrating a hydrated file changes nothing; --prune-compacted keeps pi's context
  rpc        the real CLI (pi --offline --mode rpc) gives the same context for a few outputs
Wherever validate and hydrate load a file with pi, `pi-hydrate context --format json --full` is compared
with pi's request (pi_load's `llm`) for the same pi version: roles, texts and tool call ids.

pi loads files in batches: every file a part needs is hydrated first, then each pi version loads all of
them in a few node processes (pi_load.mjs, several FILEs each: pi's import is most of a load's time),
then the comparisons run. A file that hangs or crashes pi gets its own error line (pi_load.mjs
restarts the child for the files after it), so one bad file hides no other.

--no-pi (the sanitizer build) runs the pi-hydrate commands of the parts without pi: each hydration,
the round trips' byte comparison, and `context` for every pi version on every file pi would load;
each must exit 0 or 1 with a JSON report (a sanitizer report aborts the command). `validate` is left
out there: the golden tests and the fuzz replays run it in-process on every validate input under the
same sanitizers, and every hydration runs it on its own output (the verification).

Exit status 0 when every comparison agrees; a failure names the case and the first difference.
"""
import argparse
import concurrent.futures
import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GOLDEN = os.path.join(ROOT, "tests", "golden")
EXPECTED = os.path.join(ROOT, "tests", "conformance", "expected")
LOADER = os.path.join(ROOT, "tests", "conformance", "pi_load.mjs")
FIXTURES = os.path.join(os.path.dirname(ROOT), "shared", "fixtures", "pi-real")
VERSIONS = {"0.78": "pi-0.78.0", "1.5": "pi-1.5.2", "1.6": "pi-1.6.0"}  # --pi-version: the install's folder
# pi_load.mjs's limit per file, in seconds, counted once pi is imported (a load takes milliseconds):
# pi 0.78 never ends on a parentId cycle (it is stopped and reads "timeout"), 1.5 and 1.6 give up on
# one with a RangeError after 5 to 10 s.
TIMEOUTS = {"0.78": 5, "1.5": 30, "1.6": 30}
REFERENCE = "1.5"  # the version whose context is pinned in tests/conformance/expected; the others must see the same
SYNTHETIC_TEXTS = ("No result provided", "No result was recorded for this tool call")


class Run:
    def __init__(self, args):
        self.args = args
        self.node = os.path.join(args.pi_dest, "node", "bin", "node") if args.pi_dest else None
        self.failures = []
        self.counts = {}
        self.loads = {}  # (version, path, cwd) -> pi_load.mjs's line
        self.pi_files = {}  # validate input -> the file pi loads for it (prepare_pi_files)
        self.load_processes = 0
        self._lock = threading.Lock()

    def fail(self, part, case, message):
        self.failures.append(f"[{part}] {case}: {message}")

    def count(self, key, ok):
        agree, total = self.counts.get(key, (0, 0))
        self.counts[key] = (agree + (1 if ok else 0), total + 1)

    def report(self, title):
        """Prints each count and failure; the exit status: 1 on a failure or when nothing was checked."""
        for key, (agree, total) in sorted(self.counts.items()):
            print(f"conformance: {key}: {agree}/{total}")
        for f in self.failures:
            print("FAIL " + f)
        passed = sum(a for a, _ in self.counts.values())
        total = sum(t for _, t in self.counts.values())
        print(f"{title}: {passed} passed, {total - passed} failed")
        return 0 if not self.failures and total > 0 else 1

    def pi_load(self, version, path, cwd, rpc=False):
        """pi_load.mjs's line for `path` loaded by pi `version` in `cwd`: from the batch preload() made,
        or loaded now. --rpc runs the real CLI on the one file."""
        if rpc:
            return self._load_batch(version, [(path, cwd)], rpc=True)[0]
        key = (version, path, cwd)
        if key not in self.loads:
            self.preload([key])
        return self.loads[key]

    def preload(self, requests):
        """Loads every (version, path, cwd) of `requests` not loaded yet: each version's files in --jobs
        node processes, run side by side."""
        todo = sorted(set(r for r in requests if r not in self.loads))
        chunks = []
        for version in VERSIONS:
            mine = [(path, cwd) for v, path, cwd in todo if v == version]
            n = max(1, min(self.args.jobs, len(mine)))
            chunks += [(version, mine[i::n]) for i in range(n) if mine[i::n]]
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, self.args.jobs)) as pool:
            for (version, files), lines in zip(chunks, pool.map(lambda c: self._load_batch(*c), chunks)):
                for (path, cwd), line in zip(files, lines):
                    self.loads[(version, path, cwd)] = line

    def _load_batch(self, version, files, rpc=False):
        """pi_load.mjs on `files` ([(path, cwd)]) in one process: one parsed line per file, in order."""
        cmd = [self.node, LOADER, "--pi", os.path.join(self.args.pi_dest, VERSIONS[version]), "--full",
               "--timeout", str(TIMEOUTS.get(version, 20))]
        if rpc:
            cmd.append("--rpc")
        for path, cwd in files:
            cmd += ["--cwd", cwd, path]
        with self._lock:
            self.load_processes += 1
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=120 + 25 * len(files))
        lines = [line for line in out.stdout.split("\n") if line.strip()]  # not splitlines(): texts may hold U+2028
        if out.returncode != 0 or len(lines) != len(files):
            raise RuntimeError(f"pi_load failed ({len(lines)} lines for {len(files)} files): {out.stderr.strip()[:500]}")
        return [json.loads(line) for line in lines]

    def hydrate(self, argv, cwd, stdin_path=None):
        return run_pi_hydrate(self.args.pi_hydrate, argv, cwd, stdin_path)


def run_pi_hydrate(binary, argv, cwd, stdin_path=None):
    """Runs pi-hydrate ARGV in `cwd`, standard input from `stdin_path` (or none); the completed process."""
    stdin = open(stdin_path, "rb") if stdin_path else subprocess.DEVNULL
    try:
        return subprocess.run([binary] + argv, cwd=cwd, stdin=stdin, capture_output=True, timeout=300)
    finally:
        if stdin_path:
            stdin.close()


def case_dirs(group):
    base = os.path.join(GOLDEN, group)
    if not os.path.isdir(base):
        return []
    out = []
    for dirpath, _dirs, files in os.walk(base):
        if "cmd" in files:
            out.append(dirpath)
    return sorted(out)


def read_cmd(case):
    with open(os.path.join(case, "cmd")) as f:
        return shlex.split(f.read())


def expected_exit(case):
    path = os.path.join(case, "expected")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        first = f.readline().strip()
    return int(first.split(":")[1]) if first.startswith("exit:") else None


# ---------------------------------------------------------------- validate verdicts

def validate_inputs():
    """(case, input path, process cwd, no_cwd_check) for every validate and context golden case with one
    file input (context cases on pi's own leaf)."""
    seen = {}
    for case in case_dirs("validate") + case_dirs("context"):
        words = read_cmd(case)[1:]
        if not words or words[0] not in ("validate", "context"):
            continue
        words = words[1:]
        if any(w.startswith("--max-") for w in words) or "<" in words or "--help" in words or "--list-codes" in words:
            continue
        if "--leaf" in words or "--label" in words:
            continue
        files, flags, i = [], {}, 0
        while i < len(words):
            w = words[i]
            if w in ("--level", "--pi-version", "--format", "--process-cwd"):
                flags[w] = words[i + 1]
                i += 2
                continue
            if w.startswith("--"):
                flags[w] = True
            else:
                files.append(w)
            i += 1
        if len(files) != 1:
            continue
        path = os.path.normpath(os.path.join(case, files[0]))
        if not os.path.isfile(path):
            continue
        process_cwd = flags.get("--process-cwd", case)
        key = (path, process_cwd, bool(flags.get("--no-cwd-check")))
        seen.setdefault(key, os.path.relpath(case, GOLDEN))
    for name in ("before-compaction.jsonl", "large-session.jsonl"):
        path = os.path.join(FIXTURES, name)
        if os.path.isfile(path):
            seen.setdefault((path, "/tmp", False), "fixture " + name)
            seen.setdefault((path, "/tmp", True), "fixture " + name + " --no-cwd-check")
    return [(case, path, cwd, nocwd) for (path, cwd, nocwd), case in sorted(seen.items(), key=lambda kv: kv[1])]


def prepare_pi_files(run, items, root):
    """The file pi is given for each validate input (run.pi_files, by path): the input itself when it
    is a pi session, else the session `pi-hydrate --session` converts it to (in /tmp, a cwd that
    exists): validate and context judge a file of another format (a Claude Code transcript, a Codex
    rollout, ...) by that session (docs/cli.md). None when it does not convert."""
    def one(path):
        probe = run.hydrate(["context", "--format", "json", path], os.path.dirname(path))
        try:
            form = json.loads(probe.stdout).get("format")
        except (ValueError, AttributeError):
            form = None
        if form in (None, "pi"):
            return path, path
        out = os.path.join(root, "converted", hashlib.sha256(path.encode()).hexdigest()[:16] + ".jsonl")
        r = run.hydrate(["--session", path, "--cwd", "/tmp", "-o", out, "--force"], os.path.dirname(path))
        return path, (out if r.returncode == 0 else None)
    os.makedirs(os.path.join(root, "converted"), exist_ok=True)
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, run.args.jobs)) as pool:
        run.pi_files.update(pool.map(one, sorted({item[1] for item in items})))


NOT_CONVERTED = {"loaded": False, "error": "pi-hydrate --session does not convert it", "cwdMissing": False,
                 "context": None, "llm": None, "llmError": None, "replacedWithFreshSession": False}


def validate_loads(run, item):
    _case, path, cwd, _no_cwd_check = item
    pi_file = run.pi_files.get(path, path)
    return [(version, pi_file, cwd) for version in VERSIONS] if pi_file else []


def check_validate(run, item):
    case, path, cwd, no_cwd_check = item
    results = []
    pi_file = run.pi_files.get(path, path)
    for version in VERSIONS:
        argv = ["validate", "--format", "json", "--pi-version", version, "--process-cwd", cwd, path]
        if no_cwd_check:
            argv.insert(1, "--no-cwd-check")
        ours = run.hydrate(argv, cwd)
        report = json.loads(ours.stdout)["files"][0]
        pi = run.pi_load(version, pi_file, cwd) if pi_file else NOT_CONVERTED
        pi_loads = bool(pi["loaded"]) and not pi["replacedWithFreshSession"]
        if no_cwd_check and pi["cwdMissing"] and pi["context"] is not None:
            pi_loads = not pi["replacedWithFreshSession"]  # only the cwd stopped it
        results.append((version, report["loadable"], pi_loads, pi["error"], check_context(run, version, path, cwd, pi)))
    return case, results


# ---------------------------------------------------------------- context

def pi_sends(pi):
    """Whether pi loads the file as `context` reads it: the header cwd is not checked."""
    if pi["replacedWithFreshSession"]:
        return False
    return bool(pi["loaded"]) or (pi["cwdMissing"] and pi["context"] is not None)


def our_request(report):
    """`pi-hydrate context --format json` messages in pi_load's summary shape."""
    return [{"role": m["role"], "texts": m["texts"], "toolCallIds": [c["id"] for c in m["toolCalls"]],
             "toolResultId": m["toolCallId"]} for m in report["messages"]]


def check_context(run, version, path, cwd, pi):
    """None when `pi-hydrate context` shows what pi sends (pi_load's `llm`), else the first difference."""
    r = run.hydrate(["context", "--format", "json", "--full", "--pi-version", version, path], cwd)
    if r.returncode == 2:
        return f"context exited 2: {r.stderr.decode()[:300]}"
    ours = json.loads(r.stdout)
    if not pi_sends(pi):
        return None if r.returncode == 1 and not ours["loadable"] else \
            f"pi does not load the file ({pi['error']}), context exited {r.returncode}"
    if pi["llm"] is None:
        return None if r.returncode == 1 and ours["requestError"] else \
            f"pi-ai throws ({pi['llmError']}), context exited {r.returncode}"
    if r.returncode != 0:
        return f"pi sends {len(pi['llm'])} messages, context exited {r.returncode}: {r.stdout.decode()[:300]}"
    return first_difference({"llm": pi["llm"]}, {"llm": our_request(ours)})


# ---------------------------------------------------------------- hydrate outputs

def summarize(messages):
    out = []
    for m in messages or []:
        texts = [t for t in m["texts"]]
        if m["role"] == "toolResult" and any(s in " ".join(texts) for s in SYNTHETIC_TEXTS):
            texts = ["<synthetic>"]
        out.append({"role": m["role"], "texts": texts, "toolCallIds": m["toolCallIds"], "toolResultId": m["toolResultId"]})
    return out


def pi_view(pi):
    return {"loaded": pi["loaded"], "error": pi["error"], "llm": summarize(pi["llm"]), "llmError": pi["llmError"],
            "name": pi["name"], "model": pi["model"], "thinkingLevel": pi["thinkingLevel"]}


def first_difference(a, b):
    if a == b:
        return None
    for key in a:
        if a[key] != b.get(key):
            if isinstance(a[key], list) and isinstance(b.get(key), list):
                for i, (x, y) in enumerate(zip(a[key], b[key])):
                    if x != y:
                        return f"{key}[{i}]: expected {json.dumps(x)[:300]} got {json.dumps(y)[:300]}"
                return f"{key}: expected {len(a[key])} items, got {len(b[key])}"
            return f"{key}: expected {json.dumps(a[key])[:300]} got {json.dumps(b.get(key))[:300]}"
    return "differs"


ADDED_FIRST_USER = "No user message was recorded at the start of this conversation (added by pi-hydrate)."
NO_TOOL_OUTPUT = "(no tool output)"


def without_content_repairs(messages):
    """`messages` as the content repairs of docs/hydrate.md leave them, so that a repaired output
    compares equal to its input: blank texts left out, user and assistant messages with nothing to
    send left out, an empty tool result read as "(no tool output)", an added first user message
    passed over, and tool call ids numbered in order (a renamed id keeps its place)."""
    out = []
    for m in messages:
        m = dict(m, texts=[t for t in m["texts"] if t.strip()])
        if m["role"] in ("user", "assistant") and not m["texts"] and not m["toolCallIds"]:
            continue
        if m["role"] == "user" and not out and m["texts"] == [ADDED_FIRST_USER]:
            continue
        if m["role"] == "toolResult" and not m["texts"]:
            m["texts"] = [NO_TOOL_OUTPUT]
        out.append(m)
    return numbered_calls(out)


def numbered_calls(messages):
    """Each tool call id replaced by its number in the order of the calls, and each result's id by
    the number of the latest call with that id (an id no call has stays as it is). The messages
    are changed in place and returned."""
    latest, counted = {}, 0
    for m in messages:
        if m["role"] == "assistant":
            calls = []
            for call in m["toolCallIds"]:
                counted += 1
                latest[call] = f"call#{counted}"
                calls.append(latest[call])
            m["toolCallIds"] = calls
        elif m["role"] == "toolResult":
            m["toolResultId"] = latest.get(m["toolResultId"], m["toolResultId"])
    return messages


def modulo_repairs(input_llm, output_llm):
    """The promise of docs/hydrate.md: the non-result messages are the same, in order; every real
    result of the input that answers a call is in the output; the output has no orphans."""
    input_llm, output_llm = without_content_repairs(input_llm), without_content_repairs(output_llm)
    strip = lambda msgs: [m for m in msgs if m["role"] != "toolResult"]
    if strip(input_llm) != strip(output_llm):
        a, b = strip(input_llm), strip(output_llm)
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y:
                return f"message {i} differs: input {json.dumps(x)[:200]} output {json.dumps(y)[:200]}"
        return f"{len(a)} non-result messages in the input context, {len(b)} in the output"
    calls = {c for m in output_llm if m["role"] == "assistant" for c in m["toolCallIds"]}
    out_results = [m for m in output_llm if m["role"] == "toolResult"]
    answered = set()
    for m in input_llm:
        if m["role"] == "toolResult" and m["texts"] != ["<synthetic>"] and m["toolResultId"] in calls:
            if m["toolResultId"] in answered:
                continue  # a duplicate: the output keeps the first
            answered.add(m["toolResultId"])
            if m not in out_results:
                return f"the result for {m['toolResultId']} is missing from the output"
    pending = set()
    for m in output_llm:
        if m["role"] == "assistant":
            pending = set(m["toolCallIds"])
        elif m["role"] == "toolResult":
            if m["toolResultId"] not in pending:
                return f"orphan result {m['toolResultId']} in the output"
            pending.discard(m["toolResultId"])
        else:
            if pending:
                return f"calls {sorted(pending)} have no result before a {m['role']} message"
    return None


def hydrate_cases():
    items = []
    for group in ("hydrate", "thread"):
        for case in case_dirs(group):
            words = read_cmd(case)[1:]
            if expected_exit(case) != 0 or "-o" not in words:
                continue
            if words[words.index("-o") + 1] != "-":
                continue
            items.append((group, case, words))
    return items


def prepare_hydrate(run, item, root):
    """Hydrates one golden case into a folder of its own under `root`: the output pi loads, and for a
    plain --session case a copy of the input whose header cwd exists (pi's context of the input)."""
    group, case, words = item
    name = os.path.relpath(case, GOLDEN)
    tmp = os.path.join(root, "hydrate", name.replace(os.sep, "__"))
    os.makedirs(tmp)
    prep = {"name": name, "out": None, "copy": None, "problem": None}
    out = os.path.join(tmp, "out.jsonl")
    argv = list(words)
    stdin_path = None
    if "<" in argv:
        stdin_path = os.path.join(case, argv[-1])
        argv = argv[:-2]
    argv[argv.index("-o") + 1] = out
    argv += ["--force"]
    r = run.hydrate(argv, case, stdin_path)
    if r.returncode != 0:
        prep["problem"] = f"pi-hydrate exited {r.returncode}: {r.stderr.decode()[:300]}"
        return prep
    prep["out"] = out
    # Sessions: the input's context, modulo the documented repairs.
    plain = not any(w in argv for w in ("--leaf", "--label", "--prune-compacted")) and \
        "flatten" not in argv and "drop" not in argv
    src = os.path.join(case, argv[argv.index("--session") + 1]) if "--session" in argv else ""
    # A session given as its folder (Copilot CLI) is another agent's, not a pi session to compare.
    if group == "hydrate" and "--session" in argv and plain and stdin_path is None and os.path.isfile(src):
        with open(src, "rb") as f:
            lines = f.read().split(b"\n")
        try:
            header = json.loads(lines[0])
            header["cwd"] = "/tmp"
            lines[0] = json.dumps(header).encode()
            copy = os.path.join(tmp, "in.jsonl")
            with open(copy, "wb") as f:
                f.write(b"\n".join(lines))
            prep["copy"] = copy
        except (ValueError, KeyError, AttributeError, TypeError):
            pass  # the input has no usable header line; the pinned context still applies
    return prep


def hydrate_loads(prep):
    loads = [(version, prep["out"], "/tmp") for version in VERSIONS] if prep["out"] else []
    if prep["copy"]:
        loads.append((REFERENCE, prep["copy"], "/tmp"))
    return loads


def check_hydrate(run, prep):
    """Every pi version loads the output with the same context, `context` agrees with each, and a
    plain session's output has its input's context modulo the repairs; (name, problems, the view to
    compare with the pinned one)."""
    name, out = prep["name"], prep["out"]
    if prep["problem"]:
        return name, [prep["problem"]], None
    problems = []
    views = {}
    for version in VERSIONS:
        pi = run.pi_load(version, out, "/tmp")
        context_problem = check_context(run, version, out, "/tmp", pi)
        run.count(f"context agrees with pi {version}", context_problem is None)
        if context_problem:
            run.fail("context", name, f"pi {version}: {context_problem}")
        if not pi["loaded"]:
            problems.append(f"pi {version} does not load the output: {pi['error']}")
        views[version] = pi_view(pi)
    for version in VERSIONS:
        if version != REFERENCE and views[version] != views[REFERENCE]:
            problems.append(f"pi {version} and {REFERENCE} see different contexts: "
                            + first_difference(views[REFERENCE], views[version]))
    if prep["copy"]:
        pin = run.pi_load(REFERENCE, prep["copy"], "/tmp")
        if pin["loaded"] and pin["llm"] is not None:
            why = modulo_repairs(summarize(pin["llm"]), views[REFERENCE]["llm"])
            if why:
                problems.append("context differs from the input's beyond the documented repairs: " + why)
    return name, problems, views[REFERENCE]


# ---------------------------------------------------------------- round trips and RPC

def prepare_roundtrip(run, root):
    """Hydrates each source, its output again, and the source with --prune-compacted."""
    preps = []
    sources = [os.path.join(ROOT, "examples", "session.jsonl")]
    sources += [os.path.join(FIXTURES, n) for n in ("before-compaction.jsonl", "large-session.jsonl")]
    for k, src in enumerate(sources):
        if not os.path.isfile(src):
            continue
        tmp = os.path.join(root, f"roundtrip-{k}")
        os.makedirs(tmp)
        a, b, p = (os.path.join(tmp, n) for n in ("a.jsonl", "b.jsonl", "p.jsonl"))
        r1 = run.hydrate(["--session", src, "--cwd", "/tmp", "-o", a], tmp)
        r2 = run.hydrate(["--session", a, "--cwd", "/tmp", "-o", b], tmp)
        r3 = run.hydrate(["--session", src, "--cwd", "/tmp", "-o", p, "--prune-compacted"], tmp)
        prep = {"name": os.path.basename(src), "a": a, "p": p, "problem": None}
        if r1.returncode or r2.returncode or r3.returncode:
            prep["problem"] = "pi-hydrate failed: " + (r1.stderr + r2.stderr + r3.stderr).decode()[:300]
        else:
            prep["same"] = open(a, "rb").read() == open(b, "rb").read()
        preps.append(prep)
    return preps


def roundtrip_loads(preps):
    return [(REFERENCE, prep[k], "/tmp") for prep in preps if not prep["problem"] for k in ("a", "p")]


def check_roundtrip(run, preps):
    results = []
    for prep in preps:
        name = prep["name"]
        if prep["problem"]:
            results.append((name, prep["problem"]))
            continue
        results.append((name, None if prep["same"] else "hydrating the hydrated file changed its bytes"))
        full, pruned = pi_view(run.pi_load(REFERENCE, prep["a"], "/tmp")), pi_view(run.pi_load(REFERENCE, prep["p"], "/tmp"))
        diff = first_difference(full, pruned)
        results.append((name + " --prune-compacted", diff and "pi's context changed: " + diff))
    return results


def prepare_rpc(run, root):
    tmp = os.path.join(root, "rpc")
    os.makedirs(tmp)
    out = os.path.join(tmp, "thread.jsonl")
    run.hydrate(["--thread", os.path.join(ROOT, "examples", "thread.json"), "--cwd", "/tmp", "-o", out], tmp)
    return [out, os.path.join(ROOT, "examples", "session.jsonl")]


def rpc_loads(paths):
    return [(version, path, "/tmp") for path in paths for version in VERSIONS]


def check_rpc(run, paths):
    """The real CLI in RPC mode (`pi --mode rpc --session COPY`, one start per file and version) gives
    the context pi's functions give."""
    jobs = [(path, version) for path in paths for version in VERSIONS]
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, run.args.jobs)) as pool:
        rpcs = list(pool.map(lambda job: run.pi_load(job[1], job[0], "/tmp", rpc=True), jobs))
    results = []
    for (path, version), rpc in zip(jobs, rpcs):
        fn = run.pi_load(version, path, "/tmp")
        same = rpc["loaded"] and summarize(rpc["context"]) == summarize(fn["context"])
        results.append((f"{os.path.basename(path)} pi {version}", None if same else f"RPC: loaded={rpc['loaded']} error={rpc['error']}"))
    return results


def without_pi(args):
    """--no-pi: the hydrations, the round trips' bytes, and `context` (every pi version) on every file
    the parts would give pi, each exiting 0 or 1 with a JSON report."""
    args.pi_hydrate = os.path.abspath(args.pi_hydrate)
    args.pi_dest = None
    run = Run(args)

    def commands(item):
        case, path, cwd = item
        problems = []
        for version in VERSIONS:
            argv = ["context", "--format", "json", "--full", "--pi-version", version, path]
            r = run.hydrate(argv, cwd)
            try:
                json.loads(r.stdout)
                parsed = True
            except ValueError:
                parsed = False
            if r.returncode not in (0, 1) or not parsed:
                problems.append(f"pi-hydrate {' '.join(argv[:5])} ... exited {r.returncode}: {r.stderr.decode()[-300:]}")
        return case, problems

    with tempfile.TemporaryDirectory(prefix="pihydrate-conformance-") as root, \
            concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        preps = list(pool.map(lambda it: prepare_hydrate(run, it, root), hydrate_cases()))
        for prep in preps:
            run.count("hydrations", not prep["problem"])
            if prep["problem"]:
                run.fail("hydrate", prep["name"], prep["problem"])
        for prep in prepare_roundtrip(run, root):
            problem = prep["problem"] or (None if prep["same"] else "hydrating the hydrated file changed its bytes")
            run.count("roundtrip", problem is None)
            if problem:
                run.fail("roundtrip", prep["name"], problem)
        # `context` does not check the header cwd: one run per file and version, whatever the process cwd.
        items = {}
        for case, path, cwd, _ in validate_inputs():
            items.setdefault(path, (case, cwd))
        items.update({prep["out"]: (prep["name"], "/tmp") for prep in preps if prep["out"]})
        for case, problems in pool.map(commands, [(case, path, cwd) for path, (case, cwd) in items.items()]):
            run.count("context exits 0 or 1", not problems)
            for p in problems:
                run.fail("commands", case, p)
    return run.report("conformance (no pi)")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pi-dest")
    parser.add_argument("--pi-hydrate", required=True)
    parser.add_argument("--update", action="store_true", help="rewrite the pinned contexts in tests/conformance/expected")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--only", choices=["validate", "hydrate", "roundtrip", "rpc"])
    parser.add_argument("--no-pi", action="store_true", help="only pi-hydrate's commands, without pi (sanitizer builds)")
    args = parser.parse_args()
    if args.no_pi:
        return without_pi(args)
    if not args.pi_dest:
        parser.error("--pi-dest is required unless --no-pi")
    args.pi_dest = os.path.abspath(args.pi_dest)
    args.pi_hydrate = os.path.abspath(args.pi_hydrate)
    if not os.path.isdir(FIXTURES):
        # Extra data beside the repository; the project's own cases cover the same behaviour.
        print(f"conformance: skipping the real pi-written fixtures: {FIXTURES} is absent")
    run = Run(args)
    if not os.path.exists(run.node):
        print(f"conformance: FAILED: no node in {args.pi_dest} (run tests/conformance/install_pi.sh {args.pi_dest})")
        return 1
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs))
    wanted = lambda part: args.only in (None, part)  # noqa: E731
    phase = [time.monotonic()]

    def took(what):
        now = time.monotonic()
        print(f"conformance: {what} ({now - phase[0]:.0f} s)", flush=True)
        phase[0] = now

    with tempfile.TemporaryDirectory(prefix="pihydrate-conformance-") as root:
        # 1. Every file pi is to load, hydrated first.
        validate_items = validate_inputs() if wanted("validate") else []
        prepare_pi_files(run, validate_items, root)
        hydrate_preps = list(pool.map(lambda it: prepare_hydrate(run, it, root), hydrate_cases())) if wanted("hydrate") else []
        roundtrip_preps = prepare_roundtrip(run, root) if wanted("roundtrip") else []
        rpc_paths = prepare_rpc(run, root) if wanted("rpc") else []
        # 2. Each pi version loads them all, in --jobs node processes.
        requests = [load for item in validate_items for load in validate_loads(run, item)]
        requests += [load for prep in hydrate_preps for load in hydrate_loads(prep)]
        requests += roundtrip_loads(roundtrip_preps) + rpc_loads(rpc_paths)
        took(f"hydrated {len(hydrate_preps)} golden cases")
        run.preload(requests)
        took(f"pi loaded {len(run.loads)} files in {run.load_processes} node processes")

        # 3. The comparisons.
        for case, results in pool.map(lambda it: check_validate(run, it), validate_items):
            for version, ours, pis, error, context_problem in results:
                run.count(f"context agrees with pi {version}", context_problem is None)
                if context_problem:
                    run.fail("context", case, f"pi {version}: {context_problem}")
                ok = ours == pis
                run.count(f"validate agrees with pi {version}", ok)
                if not ok:
                    run.fail("validate", case, f"pi {version}: we say loadable={ours}, pi says {pis} ({error})")
        took(f"compared {len(validate_items)} validate inputs")

        for name, problems, view in pool.map(lambda prep: check_hydrate(run, prep), hydrate_preps):
            pinned_path = os.path.join(EXPECTED, name.replace(os.sep, "__") + ".json")
            if view is not None:
                if args.update:
                    with open(pinned_path, "w") as f:
                        json.dump(view, f, indent=1, ensure_ascii=False)
                        f.write("\n")
                elif not os.path.exists(pinned_path):
                    problems.append("no pinned context (run with --update and review it)")
                else:
                    with open(pinned_path) as f:
                        diff = first_difference(json.load(f), view)
                    if diff:
                        problems.append("pi's context differs from the pinned one: " + diff)
            run.count("hydrated outputs pi loads as pinned", not problems)
            for p in problems:
                run.fail("hydrate", name, p)
        took(f"compared {len(hydrate_preps)} hydrated outputs")

        for part, results in (("roundtrip", check_roundtrip(run, roundtrip_preps)), ("rpc", check_rpc(run, rpc_paths))):
            for name, problem in results:
                run.count(part, problem is None)
                if problem:
                    run.fail(part, name, problem)
        took("round trips and RPC")

    return run.report("conformance")


if __name__ == "__main__":
    sys.exit(main())
