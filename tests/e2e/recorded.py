#!/usr/bin/env python3
"""Real pi runs, hydrated three ways: what pi loads and sends from each, against what pi wrote.

  recorded.py --pi-hydrate BIN [--pi-dest DIR] [--no-pi] [--only NAME] [--jobs N] [--keep DIR]
              [--update-differences]

tests/scenarios/recorded/pi-<version>/<scenario>/ holds what a real pi run left (tools/record-scenarios):
the session file pi wrote (session.jsonl) and pi's stdout (events.jsonl). For each recording:

  session   pi-hydrate --session session.jsonl            the reference
  events    pi-hydrate --events events.jsonl              docs/events.md
  lossy     pi-hydrate --thread <mirror.py events>        the lossy kinds only
  raw       pi-hydrate --thread <mirror.py --session>     raw pi entries (X1-X7)
  upgraded  pi-hydrate --thread <mirror.py --session --raw-from N/2>   lossy, then raw

and checks:
  - every form hydrates (exit 0; the output is verified by pi-hydrate itself);
  - raw: the same bytes as the reference (pi's own tree: ids, parents, labels, model changes);
  - with the real pi (the recording's version, tests/conformance/pi_load.mjs): the context pi loads
    from each form equals the one it loads from the session pi wrote, message for message, except
    for the differences tests/e2e/recorded_differences.json lists for that recording and form, each
    with the rule that makes it (docs/events.md, docs/thread-export.md). Any other difference fails,
    and so does a listed one that no longer happens. raw may differ in nothing;
  - the real pi resumes events, lossy and raw against the strict stand-in (standin.py): the request is
    accepted, pi prints the reply and exits 0, and the system prompt it sends names the sandbox, not
    the directory the run was recorded in.
--no-pi runs only what needs no pi (the sanitizer build does that). --update-differences rewrites
the listed differences from what is seen, keeping each reason that still applies (review the diff).

Prints a table (recording x form: hydrated / context / resumed) and `recorded: N passed, M failed`.
"""
import argparse
import concurrent.futures
import difflib
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
RECORDINGS = os.path.join(ROOT, "tests", "scenarios", "recorded")
DIFFERENCES = os.path.join(HERE, "recorded_differences.json")
LOADER = os.path.join(ROOT, "tests", "conformance", "pi_load.mjs")
sys.path.insert(0, HERE)
import mirror  # noqa: E402
from resume import PI_VERSIONS, World  # noqa: E402
from standin import DEFAULT_REPLY, StandIn  # noqa: E402

FORMS = ("events", "lossy", "raw", "upgraded")
RESUMED_FORMS = ("events", "lossy", "raw")  # upgraded mixes the two: its context is checked
EXACT_FORMS = ("raw",)  # pi's own entries: no difference is allowed
TEXT_CUT = 100  # characters of each text in a difference line


def recordings(only):
    found = []
    for version_dir in sorted(os.listdir(RECORDINGS)) if os.path.isdir(RECORDINGS) else []:
        version = version_dir.removeprefix("pi-")
        for name in sorted(os.listdir(os.path.join(RECORDINGS, version_dir))):
            folder = os.path.join(RECORDINGS, version_dir, name)
            if os.path.isfile(os.path.join(folder, "session.jsonl")) and os.path.isfile(os.path.join(folder, "events.jsonl")):
                if not only or only in name:
                    found.append((version, name, folder))
    return found


def message_events(events_path):
    return sum(1 for e in mirror.read_jsonl(events_path) if e.get("type") == "message_end")


def render(message):
    """One message of pi_load's `llm`, as one line: role, texts (cut), tool call ids, result id."""
    texts = [t if len(t) <= TEXT_CUT else t[:TEXT_CUT] + "..." for t in message["texts"]]
    line = f"{message['role']}: {json.dumps(texts, ensure_ascii=False)}"
    if message["toolCallIds"]:
        line += f" calls {message['toolCallIds']}"
    if message["toolResultId"]:
        line += f" result of {message['toolResultId']}"
    return line


def differences(reference, got):
    """The lines of a diff from the reference context to another, '-' lost, '+' added."""
    return [d for d in difflib.unified_diff([render(m) for m in reference], [render(m) for m in got], lineterm="", n=0)
            if not d.startswith(("---", "+++", "@@"))]


class Check:
    """One recording in three steps: prepare() hydrates every form; pi loads the files of all
    recordings of a version together (load_all: pi_load.mjs, several files per node process); finish()
    compares what pi loads and has pi resume the forms."""

    def __init__(self, args, world, box_root):
        self.args = args
        self.world = world
        self.box_root = box_root

    def hydrate(self, argv, work, out):
        run = subprocess.run([self.args.pi_hydrate] + argv + ["--cwd", work, "-o", out, "--force"], cwd=work,
                             capture_output=True, text=True, timeout=300)
        return run.returncode, run.stderr

    def load_all(self, version, files):
        """pi's request (pi_load.mjs's `llm`) for each (session, cwd) of `files`, in --jobs node processes
        run side by side; (llm, why not) each, in order. pi_load.mjs gives a file that hangs or crashes
        pi its own error line and goes on with the next."""
        n = max(1, min(self.args.jobs, len(files)))
        chunks = [files[i::n] for i in range(n)]
        with concurrent.futures.ThreadPoolExecutor(max_workers=n) as pool:
            parts = list(pool.map(lambda chunk: self._load(version, chunk), chunks))
        results = [None] * len(files)
        for i, part in enumerate(parts):
            results[i::n] = part
        return results

    def _load(self, version, files):
        cmd = [self.world.node, LOADER, "--pi", os.path.join(self.args.pi_dest, f"pi-{version}"), "--full"]
        for session, cwd in files:
            cmd += ["--cwd", cwd, session]
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=120 + 25 * len(files))
        lines = [line for line in out.stdout.split("\n") if line.strip()]  # not splitlines(): texts may hold U+2028
        if len(lines) != len(files):
            return [(None, f"pi_load.mjs failed: {out.stderr[:300]}")] * len(files)
        results = []
        for line in lines:
            loaded = json.loads(line)
            if loaded.get("llm") is None:
                results.append((None, f"pi {version} gives no request: {loaded.get('error') or loaded.get('llmError')}"))
            else:
                results.append((loaded["llm"], None))
        return results

    def prepare(self, version, name, folder):
        """Hydrates every form of one recording; the state finish() goes on from. state["results"]:
        {form: {"hydrated": bool, "context": diff lines or None, "resumed": bool or None, "problems": [...]}};
        state["loads"]: the files pi is to load (the session pi wrote, then each distinct output)."""
        box = os.path.join(self.box_root, f"{version}-{name}")
        work = os.path.join(box, "work")
        os.makedirs(work, exist_ok=True)
        events, session = os.path.join(folder, "events.jsonl"), os.path.join(folder, "session.jsonl")
        state = {"version": version, "box": box, "work": work, "loads": [], "distinct": [], "same_as": {},
                 "results": {form: {"hydrated": False, "context": None, "resumed": None, "problems": []} for form in FORMS}}
        results = state["results"]
        threads = {
            "lossy": mirror.mirror(events),
            "raw": mirror.mirror(events, session),
            "upgraded": mirror.mirror(events, session, raw_from=message_events(events) // 2),
        }
        inputs = {"events": ["--events", events]}
        for form, export in threads.items():
            path = os.path.join(box, f"{form}.thread.json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump(export, f, indent=1, ensure_ascii=False)
            inputs[form] = ["--thread", path]
        reference = os.path.join(box, "session.out.jsonl")
        code, err = self.hydrate(["--session", session], work, reference)
        if code != 0:
            for r in results.values():
                r["problems"].append(f"--session on pi's own file exited {code}: {err[-300:]}")
            return state
        outputs = {}
        for form in FORMS:
            out = os.path.join(box, f"{form}.out.jsonl")
            code, err = self.hydrate(inputs[form], work, out)
            if code != 0:
                results[form]["problems"].append(f"exited {code}: {err[-400:]}")
                continue
            results[form]["hydrated"] = True
            outputs[form] = out
        if "raw" in outputs:
            with open(outputs["raw"], "rb") as a, open(reference, "rb") as b:
                if a.read() != b.read():
                    results["raw"]["problems"].append("not the bytes --session gives for the session pi wrote")
        if self.args.no_pi:
            return state
        with open(session, encoding="utf-8") as f:
            state["recorded_cwd"] = json.loads(f.readline()).get("cwd")
        # Forms that gave the same bytes are loaded and resumed once (pi's start-up is the cost).
        for form, out in outputs.items():
            with open(out, "rb") as f:
                digest = hashlib.sha256(f.read()).hexdigest()
            first = next((f for d, f in state["distinct"] if d == digest), None)
            if first:
                state["same_as"][form] = first
            else:
                state["distinct"].append((digest, form))
        state["outputs"] = outputs
        state["loads"] = [(session, work)] + [(outputs[form], work) for _, form in state["distinct"]]
        return state

    def finish(self, state, loads, cli_forms):
        """Compares what pi loads from each form with what it loads from its own session (`loads`, in
        the order of state["loads"]) and has pi resume the forms: with `pi --session -p` for the forms
        in `cli_forms`, over RPC for the others."""
        version, work, results = state["version"], state["work"], state["results"]
        if self.args.no_pi or not state["loads"]:
            return results
        wrote, why = loads[0]
        if why:
            for r in results.values():
                r["problems"].append(f"the session pi wrote: {why}")
            return results
        recorded_cwd = state["recorded_cwd"]
        for (_, form), (got, why) in zip(state["distinct"], loads[1:]):
            out = state["outputs"][form]
            if why:
                results[form]["problems"].append(why)
                continue
            results[form]["context"] = differences(wrote, got)
            if form not in RESUMED_FORMS:
                continue
            run, prompt, request = self.world.resume(version, "anthropic-messages", out, work, form in cli_forms)
            results[form]["resumed"] = False
            if run.returncode != 0 or request is None or request["status"] != 200 or DEFAULT_REPLY not in run.stdout:
                status = request and (request["status"], request["rule"], request["error"])
                results[form]["problems"].append(f"pi {version} did not resume it: exit {run.returncode}, "
                                                 f"stand-in {status}, stderr {run.stderr[-300:]!r}")
            elif recorded_cwd and recorded_cwd in json.dumps(request["body"].get("system"), ensure_ascii=False):
                # The system prompt pi sends names the sandbox it resumes in, never the one it was recorded
                # in (the conversation itself may: a tool's output, say).
                results[form]["problems"].append(f"the system prompt pi sent names the recorded cwd {recorded_cwd}")
            elif work not in json.dumps(request["body"].get("system"), ensure_ascii=False):
                results[form]["problems"].append(f"the system prompt pi sent does not name the cwd {work}")
            else:
                results[form]["resumed"] = True
        for form, first in state["same_as"].items():
            results[form]["context"], results[form]["resumed"] = results[first]["context"], results[first]["resumed"]
            results[form]["problems"] += [p for p in results[first]["problems"] if p not in results[form]["problems"]]
        if not self.args.keep:
            shutil.rmtree(state["box"], ignore_errors=True)
        return results


def compare_differences(key, form, seen, listed):
    """Problems when the differences seen are not exactly the listed ones."""
    if form in EXACT_FORMS:
        return [f"{key} {form}: differs from pi's own session: {d}" for d in seen]
    wanted = [d["diff"] for d in listed]
    problems = [f"{key} {form}: unexpected difference: {d}" for d in seen if d not in wanted]
    problems += [f"{key} {form}: listed difference not seen any more: {d}" for d in wanted if d not in seen]
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pi-hydrate", required=True)
    parser.add_argument("--pi-dest", help="where tests/conformance/install_pi.sh installed node and pi")
    parser.add_argument("--no-pi", action="store_true", help="only what needs no pi")
    parser.add_argument("--only", help="only recordings whose name contains this")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--keep", metavar="DIR", help="keep every sandbox in DIR")
    parser.add_argument("--update-differences", action="store_true")
    args = parser.parse_args()
    args.pi_hydrate = os.path.abspath(args.pi_hydrate)
    if not args.no_pi:
        if not args.pi_dest:
            parser.error("--pi-dest is required unless --no-pi")
        args.pi_dest = os.path.abspath(args.pi_dest)
    found = recordings(args.only)
    if not found:
        print(f"recorded: FAILED: no recordings under {os.path.relpath(RECORDINGS, ROOT)}")
        return 1
    with open(DIFFERENCES, encoding="utf-8") as f:
        listed = json.load(f)
    tmp = args.keep or tempfile.mkdtemp(prefix="pihydrate-recorded-")
    os.makedirs(tmp, exist_ok=True)
    with StandIn() as standin:
        world = World(args, standin, tmp) if not args.no_pi else None
        check = Check(args, world, tmp)
        found = [(v, n, f) for v, n, f in found if v in PI_VERSIONS]
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            states = list(pool.map(lambda rec: check.prepare(*rec), found))
            # Each version loads the files of all its recordings together.
            loads = [None] * len(states)
            for version in {state["version"] for state in states}:
                mine = [i for i, state in enumerate(states) if state["version"] == version and state["loads"]]
                got = check.load_all(version, [load for i in mine for load in states[i]["loads"]]) if mine else []
                for i in mine:
                    loads[i], got = got[:len(states[i]["loads"])], got[len(states[i]["loads"]):]
            # The first resume of an event capture by each pi version starts pi for real (the suite's
            # real start for that input form; resume.py has those of thread exports, raw or not); the
            # others go over RPC.
            cli, seen = [], set()
            for state in states:
                forms = {form for _, form in state["distinct"] if form == "events" and state["version"] not in seen}
                seen |= {state["version"]} if forms else set()
                cli.append(forms)
            jobs = [((v, n), pool.submit(check.finish, state, load, forms))
                    for (v, n, _f), state, load, forms in zip(found, states, loads, cli)]
            results = {key: job.result() for key, job in jobs}
        if world:
            world.close()
    problems, passed, total = [], 0, 0
    print(f"{'recording':40} " + " ".join(f"{form:>16}" for form in FORMS))
    updated = {}
    for (version, name), by_form in results.items():
        key = f"{version}/{name}"
        cells = []
        for form in FORMS:
            r = by_form[form]
            mine = list(r["problems"])
            entries = listed.get(key, {}).get(form, [])
            if r["context"] is not None:
                if args.update_differences and form not in EXACT_FORMS:
                    reasons = {d["diff"]: d["why"] for d in entries}
                    if r["context"]:
                        updated.setdefault(key, {})[form] = [{"diff": d, "why": reasons.get(d, "TODO: say which rule")}
                                                             for d in r["context"]]
                else:
                    mine += compare_differences(key, form, r["context"], entries)
            total += 1
            passed += not mine
            problems += [f"FAIL {key} {form}: {p}" if not p.startswith(key) else f"FAIL {p}" for p in mine]
            context = "-" if r["context"] is None else ("same" if not r["context"] else f"{len(r['context'])} listed")
            resumed = "-" if r["resumed"] is None else ("resumed" if r["resumed"] else "NOT")
            cells.append(("ok" if r["hydrated"] else "FAILED") + f"/{context}/{resumed}")
        print(f"{key:40} " + " ".join(f"{c:>16}" for c in cells))
    if args.update_differences:
        with open(DIFFERENCES, "w", encoding="utf-8") as f:
            json.dump(updated, f, indent=1, ensure_ascii=False, sort_keys=True)
            f.write("\n")
        print(f"recorded: wrote {os.path.relpath(DIFFERENCES, ROOT)}; review its diff")
    for p in problems:
        print(p)
    if not args.keep:
        shutil.rmtree(tmp, ignore_errors=True)
    if world:
        print(f"recorded: pi resumed {world.starts['cli']} times as `pi --session -p` and {world.starts['rpc']} times "
              f"over RPC in {world.rpc.started} RPC processes")
    print(f"recorded: {passed} passed, {total - passed} failed")
    return 0 if total and passed == total else 1


if __name__ == "__main__":
    sys.exit(main())
