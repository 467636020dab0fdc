#!/usr/bin/env python3
"""Differential tests: pi-hydrate against the real pi (0.78.0 and 1.5.2).

  conformance.py --pi-dest build/pi --pi-hydrate build/pi-hydrate [--update] [--jobs 2] [--only PART]

Parts (docs/conformance.md says what each compares):
  validate   our `loadable` verdict vs pi's, per pi version, for every validate (and context) golden
             input and the real fixtures in ../shared/fixtures/pi-real
  hydrate    every successful hydrate/thread golden case: pi loads the output, pi's context equals the
             pinned context in tests/conformance/expected/ (--update rewrites them: review the diff),
             and for session inputs it equals pi's context of the input modulo the documented repairs
  roundtrip  hydrating a hydrated file changes nothing; --prune-compacted keeps pi's context
  rpc        the real CLI (pi --offline --mode rpc) gives the same context for a few outputs
Wherever validate and hydrate load a file with pi, `pi-hydrate context --format json --full` is compared
with pi's request (pi_load's `llm`) for the same pi version: roles, texts and tool call ids.

Exit status 0 when every comparison agrees; a failure names the case and the first difference.
"""
import argparse
import concurrent.futures
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GOLDEN = os.path.join(ROOT, "tests", "golden")
EXPECTED = os.path.join(ROOT, "tests", "conformance", "expected")
LOADER = os.path.join(ROOT, "tests", "conformance", "pi_load.mjs")
FIXTURES = os.path.join(os.path.dirname(ROOT), "shared", "fixtures", "pi-real")
VERSIONS = {"0.78": "pi-0.78.0", "1.5": "pi-1.5.2"}
SYNTHETIC_TEXTS = ("No result provided", "No result was recorded for this tool call")


class Run:
    def __init__(self, args):
        self.args = args
        self.node = os.path.join(args.pi_dest, "node", "bin", "node")
        self.failures = []
        self.counts = {}

    def fail(self, part, case, message):
        self.failures.append(f"[{part}] {case}: {message}")

    def count(self, key, ok):
        agree, total = self.counts.get(key, (0, 0))
        self.counts[key] = (agree + (1 if ok else 0), total + 1)

    def pi_load(self, version, path, cwd, rpc=False):
        cmd = [self.node, LOADER, "--pi", os.path.join(self.args.pi_dest, VERSIONS[version]), "--cwd", cwd, "--full"]
        if rpc:
            cmd.append("--rpc")
        out = subprocess.run(cmd + [path], capture_output=True, text=True, timeout=120)
        if out.returncode != 0 or not out.stdout.strip():
            raise RuntimeError(f"pi_load failed: {out.stderr.strip()[:500]}")
        return json.loads(out.stdout)

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


def check_validate(run, item):
    case, path, cwd, no_cwd_check = item
    results = []
    for version in VERSIONS:
        argv = ["validate", "--format", "json", "--pi-version", version, "--process-cwd", cwd, path]
        if no_cwd_check:
            argv.insert(1, "--no-cwd-check")
        ours = run.hydrate(argv, cwd)
        report = json.loads(ours.stdout)["files"][0]
        pi = run.pi_load(version, path, cwd)
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


def check_hydrate(run, item):
    group, case, words = item
    name = os.path.relpath(case, GOLDEN)
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
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
            return name, [f"pi-hydrate exited {r.returncode}: {r.stderr.decode()[:300]}"], None
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
        if views["0.78"] != views["1.5"]:
            problems.append("pi 0.78 and 1.5 see different contexts: " + first_difference(views["1.5"], views["0.78"]))
        # Sessions: the input's context, modulo the documented repairs.
        plain = not any(w in argv for w in ("--leaf", "--label", "--prune-compacted")) and \
            "flatten" not in argv and "drop" not in argv
        if group == "hydrate" and "--session" in argv and plain and stdin_path is None:
            src = os.path.join(case, argv[argv.index("--session") + 1])
            with open(src, "rb") as f:
                lines = f.read().split(b"\n")
            try:
                header = json.loads(lines[0])
                header["cwd"] = "/tmp"
                lines[0] = json.dumps(header).encode()
                copy = os.path.join(tmp, "in.jsonl")
                with open(copy, "wb") as f:
                    f.write(b"\n".join(lines))
                pin = run.pi_load("1.5", copy, "/tmp")
                if pin["loaded"] and pin["llm"] is not None:
                    why = modulo_repairs(summarize(pin["llm"]), views["1.5"]["llm"])
                    if why:
                        problems.append("context differs from the input's beyond the documented repairs: " + why)
            except (ValueError, KeyError, AttributeError):
                pass  # the input has no usable header line; the pinned context still applies
        return name, problems, views["1.5"]


# ---------------------------------------------------------------- round trips and RPC

def check_roundtrip(run):
    results = []
    sources = [os.path.join(ROOT, "examples", "session.jsonl")]
    sources += [os.path.join(FIXTURES, n) for n in ("before-compaction.jsonl", "large-session.jsonl")]
    for src in sources:
        if not os.path.isfile(src):
            continue
        with tempfile.TemporaryDirectory() as tmp:
            a, b, p = (os.path.join(tmp, n) for n in ("a.jsonl", "b.jsonl", "p.jsonl"))
            r1 = run.hydrate(["--session", src, "--cwd", "/tmp", "-o", a], tmp)
            r2 = run.hydrate(["--session", a, "--cwd", "/tmp", "-o", b], tmp)
            r3 = run.hydrate(["--session", src, "--cwd", "/tmp", "-o", p, "--prune-compacted"], tmp)
            name = os.path.basename(src)
            if r1.returncode or r2.returncode or r3.returncode:
                results.append((name, "pi-hydrate failed: " + (r1.stderr + r2.stderr + r3.stderr).decode()[:300]))
                continue
            if open(a, "rb").read() != open(b, "rb").read():
                results.append((name, "hydrating the hydrated file changed its bytes"))
            else:
                results.append((name, None))
            full, pruned = pi_view(run.pi_load("1.5", a, "/tmp")), pi_view(run.pi_load("1.5", p, "/tmp"))
            diff = first_difference(full, pruned)
            results.append((name + " --prune-compacted", diff and "pi's context changed: " + diff))
    return results


def check_rpc(run):
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "thread.jsonl")
        run.hydrate(["--thread", os.path.join(ROOT, "examples", "thread.json"), "--cwd", "/tmp", "-o", out], tmp)
        for path in (out, os.path.join(ROOT, "examples", "session.jsonl")):
            for version in VERSIONS:
                fn = run.pi_load(version, path, "/tmp")
                rpc = run.pi_load(version, path, "/tmp", rpc=True)
                same = rpc["loaded"] and summarize(rpc["context"]) == summarize(fn["context"])
                results.append((f"{os.path.basename(path)} pi {version}", None if same else f"RPC: loaded={rpc['loaded']} error={rpc['error']}"))
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pi-dest", required=True)
    parser.add_argument("--pi-hydrate", required=True)
    parser.add_argument("--update", action="store_true", help="rewrite the pinned contexts in tests/conformance/expected")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--only", choices=["validate", "hydrate", "roundtrip", "rpc"])
    args = parser.parse_args()
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

    if args.only in (None, "validate"):
        for case, results in pool.map(lambda it: check_validate(run, it), validate_inputs()):
            for version, ours, pis, error, context_problem in results:
                run.count(f"context agrees with pi {version}", context_problem is None)
                if context_problem:
                    run.fail("context", case, f"pi {version}: {context_problem}")
                ok = ours == pis
                run.count(f"validate agrees with pi {version}", ok)
                if not ok:
                    run.fail("validate", case, f"pi {version}: we say loadable={ours}, pi says {pis} ({error})")

    if args.only in (None, "hydrate"):
        for name, problems, view in pool.map(lambda it: check_hydrate(run, it), hydrate_cases()):
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

    for part, check in (("roundtrip", check_roundtrip), ("rpc", check_rpc)):
        if args.only in (None, part):
            for name, problem in check(run):
                run.count(part, problem is None)
                if problem:
                    run.fail(part, name, problem)

    for key, (agree, total) in sorted(run.counts.items()):
        print(f"conformance: {key}: {agree}/{total}")
    for f in run.failures:
        print("FAIL " + f)
    passed = sum(a for a, _ in run.counts.values())
    total = sum(t for _, t in run.counts.values())
    print(f"conformance: {passed} passed, {total - passed} failed")
    return 0 if not run.failures and total > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
