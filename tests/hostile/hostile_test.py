#!/usr/bin/env python3
"""Hostile-input tests for pi-hydrate, run on the real binary.

    tests/hostile/hostile_test.py PI_HYDRATE_BINARY [--only REGEX] [-v] [--keep] [--no-timing]

Every hostile file is generated into a temporary directory at run time (nothing big is committed).
For each case the binary runs once and the test checks:

  * the exact exit code the docs give (docs/cli.md, docs/diagnostics.md, docs/thread-export.md);
  * that the expected diagnostic codes appear (`validate --format json`: the JSON report;
    `--session`/`--thread`: `[PHnnn]` on stderr), and that forbidden ones do not;
  * no crash: no death by signal, no sanitizer report or abort message on stderr;
  * time: every input of 1 MB or more is compared with a valid generated input of about the same
    size run through the same command; more than 5x (+0.5 s) fails.  Smaller inputs must finish
    within SMALL_LIMIT seconds (a hang detector).  --no-timing, for a sanitizer build, turns both
    time checks off and keeps only a hang detector of NO_TIMING_TIMEOUT seconds per command; every
    other check, sanitizer reports included, stays;
  * hydrate commands: a failed command leaves neither the output file nor a `.pi-hydrate-*`
    temporary file (in the output directory, TMPDIR or the input's directory); a successful one
    writes a session that Python's own JSON reader sees as a linear v3 chain with the new cwd.

Expectations come from the docs, not from the binary: when the two differ the case fails, and the
failure is the report.  Output: one `ok: NAME` / `FAIL: NAME: reason` line per case, a few `#`
statistics lines, and finally `hostile: N passed, M failed`.  Exit 0 only when every case passes.
Only the Python standard library is used.
"""
import base64
import hashlib
import json
import math
import mmap
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

MB = 1 << 20
TIME_FACTOR = 5.0
TIME_SLACK = 0.5
SMALL_LIMIT = 5.0       # seconds, inputs under 1 MB
HARD_TIMEOUT = 90.0     # seconds, any single command
NO_TIMING_TIMEOUT = 600.0  # seconds, any single command with --no-timing (sanitizer builds: a hang detector)
STDIO_CAP = 64 * MB     # most stderr bytes read back
JSON_PARSE_CAP = 16 * MB  # larger JSON reports are scanned for codes, not parsed

SANITIZER_RE = re.compile(
    r"AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|MemorySanitizer|ThreadSanitizer|"
    r"runtime error:|Segmentation fault|core dumped|terminate called|Assertion .* failed|"
    r"stack-overflow|std::bad_alloc|\bAborted\b")
CODE_RE = re.compile(r"\[(PH\d{3})\]")

# --------------------------------------------------------------------------------------------
# Input builders
# --------------------------------------------------------------------------------------------

SESSION_ID = "019c3a1e-7b42-7c10-8d5e-3f2a9b6c4d01"
TS = "2026-03-14T09:00:00.000Z"
MS = 1773478800000
USAGE = ('{"input":1834,"output":212,"cacheRead":0,"cacheWrite":0,"totalTokens":2046,'
         '"cost":{"input":0.005502,"output":0.00318,"cacheRead":0,"cacheWrite":0,"total":0.008682}}')


def js(s):
    return json.dumps(s, ensure_ascii=False)


def header(cwd, version="3", sid=SESSION_ID):
    v = "" if version is None else f'"version":{version},'
    return f'{{"type":"session",{v}"id":{js(sid)},"timestamp":"{TS}","cwd":{js(cwd)}}}'


def e_model(eid, parent):
    return (f'{{"type":"model_change","id":{js(eid)},"parentId":{js(parent)},"timestamp":"{TS}",'
            f'"provider":"anthropic","modelId":"claude-sonnet-4-5"}}')


def e_user(eid, parent, text_json='"Why does make check fail?"', extra=""):
    return (f'{{"type":"message","id":{js(eid)},"parentId":{js(parent)},"timestamp":"{TS}",{extra}'
            f'"message":{{"role":"user","content":[{{"type":"text","text":{text_json}}}],"timestamp":{MS}}}}}')


def e_call(eid, parent, call_id="toolu_01Mk7pQ2", args='{"command":"make check"}', usage=USAGE):
    return (f'{{"type":"message","id":{js(eid)},"parentId":{js(parent)},"timestamp":"{TS}",'
            f'"message":{{"role":"assistant","content":[{{"type":"text","text":"Let me run them."}},'
            f'{{"type":"toolCall","id":"{call_id}","name":"bash","arguments":{args}}}],'
            f'"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5",'
            f'"usage":{usage},"stopReason":"toolUse","timestamp":{MS}}}}}')


def e_result(eid, parent, call_id="toolu_01Mk7pQ2", content='[{"type":"text","text":"FAIL: parse_number"}]'):
    return (f'{{"type":"message","id":{js(eid)},"parentId":{js(parent)},"timestamp":"{TS}",'
            f'"message":{{"role":"toolResult","toolCallId":"{call_id}","toolName":"bash",'
            f'"content":{content},"isError":false,"timestamp":{MS}}}}}')


def e_answer(eid, parent, text_json='"Switch to shortest round-trip formatting."', usage=USAGE):
    return (f'{{"type":"message","id":{js(eid)},"parentId":{js(parent)},"timestamp":"{TS}",'
            f'"message":{{"role":"assistant","content":[{{"type":"text","text":{text_json}}}],'
            f'"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5",'
            f'"usage":{usage},"stopReason":"stop","timestamp":{MS}}}}}')


def e_custom(eid, parent, data="{}"):
    return (f'{{"type":"custom","id":{js(eid)},"parentId":{js(parent)},"timestamp":"{TS}",'
            f'"customType":"hostile","data":{data}}}')


def base_session(cwd):
    """A small, validate-clean, linear v3 session (list of str lines, no newlines)."""
    return [
        header(cwd),
        e_model("a1f0c3d2", None),
        e_user("c3d2e5b4", "a1f0c3d2"),
        e_call("d4c3f6a5", "c3d2e5b4"),
        e_result("e5b4a7f6", "d4c3f6a5"),
        e_answer("f6a5b8e7", "e5b4a7f6"),
        e_user("0a0b0c0d", "f6a5b8e7", '"Thanks, that fixed it."'),
    ]


LAST_ID = "0a0b0c0d"


def write(path, data):
    with open(path, "wb") as f:
        if isinstance(data, str):
            data = data.encode("utf-8", "surrogatepass")
        f.write(data)
    return path


def lines_bytes(lines, final_newline=True):
    out = b"\n".join(l if isinstance(l, bytes) else l.encode("utf-8") for l in lines)
    return out + (b"\n" if final_newline else b"")


# --- generated valid sessions and threads (baselines and big cases) -------------------------

WORDS = ("the parser fails on numbers because the printer uses seventeen digits while the test expects "
         "the shortest form that round trips so we switch formatting and rerun the whole suite").split()
CODE = ('export function toCsv(rows: Row[]): string {\n\tconst out = [header(rows[0])];\n'
        '\tfor (let i = 0; i < rows.length; i++) out.push(line(rows[i]));\n\treturn out.join("\\n");\n}\n'
        'caf\u00e9 \u6570\u636e \U0001F642 "quoted" C:\\Users\\dev\n')


def gen_session(path, cwd, target):
    """A valid, resume-clean linear v3 session of about `target` bytes (entries of ~0.3-3 KB)."""
    n = 0
    prev = None
    turn = 0
    with open(path, "w", encoding="utf-8") as f:
        f.write(header(cwd) + "\n")
        size = 200
        while size < target:
            t = turn
            text = " ".join(WORDS[(t + k) % len(WORDS)] for k in range(20 + t % 30))
            ids = [f"{(n + k) & 0xffffffff:08x}" for k in range(4)]
            call = f"toolu_{t:010d}"
            out = (CODE * (1 + t % 4))
            chunk = "\n".join([
                e_user(ids[0], prev, js(text)),
                e_call(ids[1], ids[0], call, js({"command": f"make check TESTS={t}"})),
                e_result(ids[2], ids[1], call, js([{"type": "text", "text": out}])),
                e_answer(ids[3], ids[2], js(text.upper())),
            ]) + "\n"
            f.write(chunk)
            size += len(chunk.encode("utf-8"))
            prev = ids[3]
            n += 4
            turn += 1
    return path


def gen_thread(path, target):
    """A valid thread export of about `target` bytes, one entry object per line."""
    with open(path, "w", encoding="utf-8") as f:
        f.write('{"format":"thread-export","version":1,"thread":{"id":"thr_base","title":"Baseline",'
                '"createdAt":"2026-11-20T14:00:00.000Z","model":{"provider":"anthropic",'
                '"modelId":"claude-sonnet-4-5","api":"anthropic-messages"}},"entries":[\n')
        size = 300
        t = 0
        first = True
        while size < target:
            text = " ".join(WORDS[(t + k) % len(WORDS)] for k in range(20 + t % 30))
            call = f"toolu_{t:010d}"
            ents = [
                {"id": f"msg_{t}", "kind": "chat", "role": "user", "ts": MS + 4 * t, "text": text},
                {"id": f"thr_base:pi:idx:{3 * t}", "kind": "pi.assistant", "ts": MS + 4 * t + 1, "data": {"message": json.loads(
                    e_call("x", None, call, js({"command": f"make check TESTS={t}"})))["message"]}},
                {"id": f"thr_base:pi:idx:{3 * t + 1}", "kind": "pi.tool_result", "ts": MS + 4 * t + 2, "data": {"message": json.loads(
                    e_result("x", None, call, js([{"type": "text", "text": CODE * (1 + t % 4)}])))["message"]}},
                {"id": f"thr_base:pi:idx:{3 * t + 2}", "kind": "pi.assistant", "ts": MS + 4 * t + 3, "data": {"message": json.loads(
                    e_answer("x", None, js(text.upper())))["message"]}},
            ]
            chunk = ",\n".join(json.dumps(e, ensure_ascii=False, separators=(",", ":")) for e in ents)
            chunk = ("" if first else ",\n") + chunk
            first = False
            f.write(chunk)
            size += len(chunk.encode("utf-8"))
            t += 1
        f.write("\n]}\n")
    return path


def thread_doc(entries=None, thread=None, **top):
    doc = {"format": "thread-export", "version": 1,
           "thread": thread if thread is not None else
           {"id": "thr_hostile", "title": "Hostile", "createdAt": "2026-11-20T14:00:00.000Z",
            "model": {"provider": "anthropic", "modelId": "claude-sonnet-4-5", "api": "anthropic-messages"}},
           "entries": entries if entries is not None else base_thread_entries()}
    doc.update(top)
    return doc


def assistant_msg(text="Done.", call=None):
    if call:
        return json.loads(e_call("x", None, call))["message"]
    return json.loads(e_answer("x", None, js(text)))["message"]


def base_thread_entries():
    return [
        {"id": "msg_01", "kind": "chat", "role": "user", "ts": "2026-11-20T14:00:01.000Z", "text": "Run the tests."},
        {"id": "thr_hostile:pi:idx:0", "kind": "pi.assistant", "ts": "2026-11-20T14:00:02.000Z",
         "data": {"message": assistant_msg(call="toolu_01")}},
        {"id": "thr_hostile:pi:idx:1", "kind": "pi.tool_result", "ts": "2026-11-20T14:00:03.000Z",
         "data": {"message": json.loads(e_result("x", None, "toolu_01"))["message"]}},
        {"id": "thr_hostile:pi:idx:2", "kind": "pi.assistant", "ts": "2026-11-20T14:00:04.000Z",
         "data": {"message": assistant_msg("All green now.")}},
    ]


def dump(doc):
    return json.dumps(doc, ensure_ascii=False, indent=1)


# --------------------------------------------------------------------------------------------
# Running
# --------------------------------------------------------------------------------------------

class Result:
    pass


TIME_BIN = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None


def run_cmd(argv, cwd, env, out_path, err_path, timeout=HARD_TIMEOUT):
    """Runs argv; returns Result(rc, sig, wall, maxrss_kib, timed_out). Retries while the binary is missing.

    Peak memory: ru_maxrss survives exec, so a child forked from this (possibly large) Python process
    would report this process's peak.  GNU time, itself small, forks the binary and reports its own
    child's peak (%M); without it the wait4 figure is an upper bound."""
    rss_path = out_path + ".rss"
    deadline = time.time() + 120
    while not os.access(argv[0], os.X_OK):  # the binary is being rebuilt
        if time.time() > deadline:
            break
        time.sleep(1)
    full = [TIME_BIN, "-f", "%M", "-o", rss_path, *argv] if TIME_BIN else argv
    while True:
        try:
            with open(out_path, "wb") as fo, open(err_path, "wb") as fe:
                t0 = time.monotonic()
                p = subprocess.Popen(full, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=fo, stderr=fe,
                                     start_new_session=True)
            break
        except OSError:  # ENOENT, ETXTBSY while the binary is replaced
            if time.time() > deadline:
                raise
            time.sleep(1)
    timed_out = []

    def kill():
        timed_out.append(True)
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    timer = threading.Timer(timeout, kill)
    timer.start()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    timer.cancel()
    p.returncode = 0  # reaped by us; keep Popen from waiting again
    r = Result()
    r.wall = wall
    r.maxrss = ru.ru_maxrss
    r.timed_out = bool(timed_out)
    if os.WIFSIGNALED(status):
        r.sig, r.rc = os.WTERMSIG(status), None
    else:
        r.sig, r.rc = None, os.WEXITSTATUS(status)
    if TIME_BIN and not r.timed_out:
        try:
            rep = open(rss_path).read()
            m = re.search(r"terminated by signal (\d+)", rep)
            if m:
                r.sig, r.rc = int(m.group(1)), None
            r.maxrss = int(rep.strip().splitlines()[-1])
        except (OSError, ValueError, IndexError):
            if r.rc == 127 and not os.access(argv[0], os.X_OK):  # exec failed: binary gone mid-rebuild
                time.sleep(2)
                return run_cmd(argv, cwd, env, out_path, err_path, timeout)
        try:
            os.unlink(rss_path)
        except OSError:
            pass
    return r


def read_capped(path, cap=STDIO_CAP):
    with open(path, "rb") as f:
        return f.read(cap)


class Case:
    def __init__(self, name, cat, mode, build, exit, codes=(), any_codes=(), forbid=(), extra=(),
                 path=None, check=None, may_exit=None):
        self.name, self.cat, self.mode, self.build = name, cat, mode, build
        self.exit, self.codes, self.any_codes, self.forbid = exit, tuple(codes), tuple(any_codes), tuple(forbid)
        self.extra, self.path, self.check = tuple(extra), path, check
        self.may_exit = may_exit  # alternative outcomes: {exit_code: (required codes...)}, for cases the docs leave open


class Suite:
    def __init__(self, binary, work, verbose=False, timing=True):
        self.bin = binary
        self.timing = timing
        self.timeout = HARD_TIMEOUT if timing else NO_TIMING_TIMEOUT
        self.slowest = []  # (wall seconds, case name), for the statistics line
        self.work = work
        self.verbose = verbose
        self.cwd = os.path.join(work, "cwd")
        os.makedirs(self.cwd)
        self.tmp = os.path.join(work, "tmp")
        os.makedirs(self.tmp)
        self.cache = os.path.join(work, "cache")
        os.makedirs(self.cache)
        self.memo = {}
        self.baselines = {}
        self.peak_kib = 0
        self.peak_case = ""
        self.passed = 0
        self.failed = 0
        self.fail_lines = []
        self.env = dict(os.environ, TMPDIR=self.tmp, LC_ALL="C")

    # memoised generated inputs shared by several cases
    def shared(self, key, fn):
        if key not in self.memo:
            self.memo[key] = fn(os.path.join(self.cache, key))
        return self.memo[key]

    def argv(self, mode, inp, extra, out):
        if mode == "validate":
            return [self.bin, "validate", "--format", "json", *extra, inp]
        flag = "--session" if mode == "session" else "--thread"
        return [self.bin, flag, inp, "--cwd", self.cwd, "-o", out, *extra]

    def baseline(self, mode, size, extra):
        bucket = (mode, round(math.log(max(size, MB), 1.25)))
        if bucket not in self.baselines:
            d = os.path.join(self.work, "baseline-" + str(len(self.baselines)))
            os.makedirs(d)
            if mode == "thread":
                inp = gen_thread(os.path.join(d, "base.json"), size)
            else:
                inp = gen_session(os.path.join(d, "base.jsonl"), self.cwd, size)
            self.baselines[bucket] = (d, inp)
        d, inp = self.baselines[bucket]
        od = os.path.join(d, "out")
        shutil.rmtree(od, ignore_errors=True)
        os.makedirs(od)
        r = run_cmd(self.argv(mode, inp, (), os.path.join(od, "out.jsonl")), d, self.env,
                    os.path.join(d, "stdout"), os.path.join(d, "stderr"))
        shutil.rmtree(od, ignore_errors=True)
        if r.rc != 0:
            raise RuntimeError(f"baseline {mode} of {size} bytes did not pass: exit {r.rc} signal {r.sig}: "
                               + read_capped(os.path.join(d, "stderr"))[:300].decode("utf-8", "replace"))
        return r.wall, os.path.getsize(inp)

    def run_case(self, c):
        d = os.path.join(self.work, "case-" + re.sub(r"[^A-Za-z0-9_.-]", "_", c.name))
        os.makedirs(d)
        try:
            reasons = self._run_case(c, d)
        except Exception as e:  # a harness error is a failure too, never a silent pass
            reasons = [f"harness error: {type(e).__name__}: {e}"]
        finally:
            shutil.rmtree(d, ignore_errors=True)
        if reasons:
            self.failed += 1
            line = f"FAIL: {c.name}: " + "; ".join(reasons)
            self.fail_lines.append(line)
            print(line, flush=True)
        else:
            self.passed += 1
            print(f"ok: {c.name}", flush=True)

    def _run_case(self, c, d):
        inp = c.build(d)
        size = os.path.getsize(inp)
        outdir = os.path.join(d, "out")
        os.makedirs(outdir)
        out = os.path.join(outdir, "out.jsonl")
        for f in os.listdir(self.tmp):
            shutil.rmtree(os.path.join(self.tmp, f), ignore_errors=True)
        so, se = os.path.join(d, "stdout.txt"), os.path.join(d, "stderr.txt")
        argv = self.argv(c.mode, inp, c.extra, out)
        r = run_cmd(argv, d, self.env, so, se, self.timeout)
        self.slowest.append((r.wall, c.name))
        if r.maxrss > self.peak_kib:
            self.peak_kib, self.peak_case = r.maxrss, c.name
        stdout = read_capped(so) if os.path.getsize(so) <= JSON_PARSE_CAP else b""
        stderr = read_capped(se) if os.path.getsize(se) <= JSON_PARSE_CAP else read_capped(se, MB)
        err_text = stderr.decode("utf-8", "replace")
        reasons = []
        cmd = " ".join(os.path.basename(a) if a in (inp,) else a for a in argv[1:])
        cmd = cmd.replace(self.cwd, "DIR").replace(out, "OUT")

        if r.timed_out:
            return [f"hang: killed after {self.timeout:.0f} s ({cmd}, input {size} bytes)"]
        if r.sig is not None:
            reasons.append(f"crash: killed by signal {r.sig} ({signal.Signals(r.sig).name})")
        m = SANITIZER_RE.search(err_text)
        if m:
            i = m.start()
            reasons.append("crash report on stderr: " + err_text[max(0, i - 80):i + 200].replace("\n", " | "))

        # diagnostics
        codes, diags, note = set(), [], ""
        if c.mode == "validate" and os.path.getsize(so) > JSON_PARSE_CAP:
            # a huge report: find the codes without loading it
            with open(so, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
                codes = set(x.decode() for x in set(re.findall(rb'"code":"(PH\d{3})"', mm)))
                if not mm[-300:].rstrip().endswith(b"}}"):
                    reasons.append("the JSON report is cut off")
                note = f"a {os.path.getsize(so) / MB:.0f} MB JSON report for a {size / MB:.1f} MB input"
                if self.verbose:
                    print("  " + note)
        elif c.mode == "validate":
            if r.rc in (0, 1):
                try:
                    doc = json.loads(stdout.decode("utf-8", "replace"))
                    for f in doc["files"]:
                        for dg in f["diagnostics"]:
                            codes.add(dg["code"])
                            diags.append(dg)
                except Exception as e:
                    reasons.append(f"stdout is not the JSON report ({type(e).__name__}: {str(e)[:80]}): "
                                   + stdout[:160].decode("utf-8", "replace"))
        elif os.path.getsize(se) > JSON_PARSE_CAP:
            with open(se, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
                codes = set(x.decode() for x in set(re.findall(rb"\[(PH\d{3})\]", mm)))
            note = f"{os.path.getsize(se) / MB:.0f} MB of diagnostics on stderr for a {size / MB:.1f} MB input"
        else:
            codes = set(CODE_RE.findall(err_text))

        # exit code and codes; may_exit lists outcomes the docs leave open
        outcomes = {c.exit: c.codes}
        if c.may_exit:
            outcomes.update(c.may_exit)
        if r.sig is None:
            if r.rc not in outcomes:
                want = " or ".join(str(k) for k in outcomes)
                reasons.append(f"exit {r.rc}, expected {want}")
            else:
                missing = [x for x in outcomes[r.rc] if x not in codes]
                if missing:
                    reasons.append(f"missing {','.join(missing)}")
            if c.any_codes and not any(x in codes for x in c.any_codes):
                reasons.append(f"none of {'/'.join(c.any_codes)} reported")
            bad = [x for x in c.forbid if x in codes]
            if bad:
                reasons.append(f"unexpected {','.join(bad)}")
            if reasons:
                reasons.append(f"reported {{{','.join(sorted(codes)) or 'nothing'}}}"
                               + (f", stderr: {first_lines(err_text)}" if c.mode != "validate" else
                                  f", messages: {summarise(diags)}"))

        # PH601 path in the message
        if c.path is not None and r.rc == c.exit:
            if not path_ok(err_text, c.path):
                reasons.append(f"no PH601 message naming the JSON path {c.path!r} with a FILE:LINE:COL position: "
                               + first_lines(err_text))

        # leftovers and output
        if c.mode != "validate":
            left = []
            for dd in (outdir, self.tmp, d):
                for root, dirs, files in os.walk(dd):
                    for f in files + dirs:
                        if f.startswith(".pi-hydrate"):
                            left.append(os.path.relpath(os.path.join(root, f), self.work))
            if left:
                reasons.append("temporary file(s) left behind: " + ", ".join(left[:3]))
            if r.rc != 0 and os.path.lexists(out):
                reasons.append(f"exit {r.rc} but the output file was written ({os.path.getsize(out)} bytes)")
            if r.rc == 0:
                if not os.path.exists(out):
                    reasons.append("exit 0 but no output file")
                else:
                    why = check_output(out, self.cwd)
                    if why:
                        reasons.append("output: " + why)
        if c.check and not reasons:
            why = c.check(d, inp, out, stdout, stderr, diags)
            if why:
                reasons.append(why)

        # time
        if not self.timing:
            if self.verbose:
                print(f"  time {c.name}: {r.wall:.2f} s (not checked), rss {r.maxrss // 1024} MiB")
        elif size >= MB and r.sig is None:
            base_t, base_size = self.baseline(c.mode, size, c.extra)
            limit = TIME_FACTOR * base_t + TIME_SLACK
            t = r.wall
            if t > limit:  # one retry of both, to rule out noise
                if os.path.lexists(out):
                    os.unlink(out)
                r2 = run_cmd(argv, d, self.env, so, se)
                if os.path.lexists(out):
                    os.unlink(out)
                b2, _ = self.baseline(c.mode, size, c.extra)
                if r2.rc == r.rc and r2.sig == r.sig:
                    t = min(t, r2.wall)
                base_t = min(base_t, b2)
                limit = TIME_FACTOR * base_t + TIME_SLACK
            if t > limit:
                reasons.append(f"slow: {t:.2f} s on {size / MB:.1f} MB, a valid {base_size / MB:.1f} MB input "
                               f"takes {base_t:.2f} s (limit {limit:.2f} s)" + (f"; {note}" if note else ""))
            if self.verbose:
                print(f"  time {c.name}: {t:.2f} s vs baseline {base_t:.2f} s, {size / MB:.1f} MB, rss {r.maxrss // 1024} MiB")
        elif r.wall > SMALL_LIMIT and r.sig is None:
            reasons.append(f"slow: {r.wall:.2f} s on a {size} byte input (limit {SMALL_LIMIT} s)")
        elif self.verbose:
            print(f"  time {c.name}: {r.wall:.3f} s, rss {r.maxrss // 1024} MiB")
        return reasons


def first_lines(text, n=3, width=300):
    ls = [l for l in text.splitlines() if l.strip()][:n]
    s = " | ".join(ls)
    return (s[:width] + "...") if len(s) > width else (s or "(empty)")


def summarise(diags, n=3):
    return " | ".join(f"{d['code']} {d.get('line')}:{d.get('column')} {d['message'][:90]}" for d in diags[:n]) or "(none)"


def path_ok(err_text, path):
    for line in err_text.splitlines():
        if "[PH601]" not in line:
            continue
        m = re.match(r"^.+?:(\d+):(\d+): error: (.*)$", line)
        if not m:
            continue
        msg = m.group(3)
        if msg.startswith(path) and (len(msg) == len(path) or msg[len(path)] in ":. ["):
            return True
    return False


def check_output(out, cwd):
    """The output as pi's JSON.parse would see it (Python's json: last duplicate key wins, U+FFFD for bad
    bytes): a v3 header with the given cwd, then a linear chain with unique ids."""
    prev = None
    seen = set()
    with open(out, "rb") as f:
        for n, raw in enumerate(f, 1):
            if not raw.endswith(b"\n"):
                return f"line {n} has no newline"
            try:
                obj = json.loads(raw.decode("utf-8", "replace"))
            except ValueError as e:
                return f"line {n} is not JSON: {e}"
            if not isinstance(obj, dict):
                return f"line {n} is not an object"
            if n == 1:
                if obj.get("type") != "session" or obj.get("version") != 3 or obj.get("cwd") != cwd:
                    return "line 1 is not a v3 header with the new cwd"
                continue
            eid = obj.get("id")
            if not isinstance(eid, str) or eid in seen:
                return f"line {n}: id {eid!r} missing or repeated"
            if obj.get("parentId") != prev:
                return f"line {n}: parentId {obj.get('parentId')!r}, expected {prev!r} (not a linear chain)"
            if obj.get("type") == "message" and not isinstance(obj.get("message"), dict):
                return f"line {n}: message entry without a message"
            seen.add(eid)
            prev = eid
    if prev is None:
        return "no entries written"
    return None


# --------------------------------------------------------------------------------------------
# Output checks used by some cases
# --------------------------------------------------------------------------------------------

def output_contains(*needles):
    def check(d, inp, out, stdout, stderr, diags):
        data = open(out, "rb").read()
        for nd in needles:
            if nd not in data:
                return f"output lacks the bytes {nd[:40]!r}..."
        return None
    return check


def output_image_digest(digest):
    def check(d, inp, out, stdout, stderr, diags):
        with open(out, "rb") as f:
            for raw in f:
                if len(raw) < MB:
                    continue
                obj = json.loads(raw)
                for blk in obj.get("message", {}).get("content", []):
                    if isinstance(blk, dict) and blk.get("type") == "image":
                        if hashlib.sha256(blk.get("data", "").encode()).hexdigest() == digest:
                            return None
        return "the 50 MB image is not in the output byte for byte"
    return check


def diag_at_line(code, line):
    def check(d, inp, out, stdout, stderr, diags):
        if not any(x["code"] == code and x.get("line") == line for x in diags):
            return f"{code} not reported at line {line}: {summarise(diags)}"
        return None
    return check


# --------------------------------------------------------------------------------------------
# The cases
# --------------------------------------------------------------------------------------------

def cases(S):
    cwd = S.cwd
    C = []

    def add(*a, **k):
        C.append(Case(*a, **k))

    def sess(lines, final_newline=True):
        return lambda d: write(os.path.join(d, "in.jsonl"), lines_bytes(lines, final_newline))

    def raw(data, name="in.jsonl"):
        return lambda d: write(os.path.join(d, name), data)

    base = base_session(cwd)

    # ---- 1. truncation at every structural position --------------------------------------
    victim = e_call("b0b0b0b0", LAST_ID, "toolu_trunc", '{"command":"ls"}')
    # victim begins {"type":"message","id":...; usage holds "input":1834
    k_num = victim.index('"input":1834') + len('"input":18')
    cuts = {
        "after-open-brace": victim[:1],
        "inside-key": victim[:victim.index('"type"') + 3],
        "after-colon": victim[:victim.index(":") + 1],
        "inside-string": victim[:victim.index('"message"') + 5],
        "inside-number": victim[:k_num],
        "after-comma": victim[:victim.index(",") + 1],
        "before-close-brace": victim[:-1],
    }
    for pos, part in cuts.items():
        # middle: the partial record sits between two complete entries; nothing refers to it
        mid = base[:4] + [part] + base[4:]
        add(f"truncated-middle-{pos}", "truncation", "validate", sess(mid), 1, ["PH001"],
            check=diag_at_line("PH001", 5))
        # last line, no newline
        add(f"truncated-last-{pos}", "truncation", "validate", sess(base + [part], False), 0, ["PH003"],
            forbid=["PH001"])
    add("hydrate-truncated-middle-inside-string", "truncation", "session",
        sess(base[:4] + [cuts["inside-string"]] + base[4:]), 0, ["PH001"])
    add("hydrate-truncated-last-inside-number", "truncation", "session",
        sess(base + [cuts["inside-number"]], False), 0, ["PH003"])

    # ---- 2. glued records ---------------------------------------------------------------------
    g1 = e_user("11110000", LAST_ID, '"glued one"')
    g2 = e_user("22220000", "11110000", '"glued two"')
    add("glued-two-entries", "glued", "validate", sess(base + [g1 + g2]), 1, ["PH002"])
    add("glued-with-space", "glued", "validate", sess(base + [g1 + "  " + g2]), 1, ["PH002"])
    add("glued-three-entries", "glued", "validate",
        sess(base + [g1 + g2 + e_user("33330000", "22220000", '"three"')]), 1, ["PH002"])
    add("glued-header-and-entry", "glued", "validate", sess([base[0] + base[1]] + base[2:]), 1,
        ["PH102", "PH002"])
    add("hydrate-glued-two-entries", "glued", "session", sess(base + [g1 + g2]), 0, ["PH002"])
    add("hydrate-glued-header-and-entry", "glued", "session", sess([base[0] + base[1]] + base[2:]), 1,
        ["PH102"])

    # ---- 3. a single ~100 MB line ---------------------------------------------------------------
    def big_line_session(p, garbage=False):
        with open(p, "wb") as f:
            f.write(lines_bytes(base))
            pre = e_result("b1b1b1b1", LAST_ID, "toolu_big", "@@").encode()
            a, b = pre.split(b"@@")
            f.write(a + b'[{"type":"text","text":"')
            blk = (b"0123456789abcdef\\n\\t\\\"" * 4096)
            for _ in range((100 * MB) // len(blk)):
                f.write(blk)
            if garbage:
                f.write(b'"}]\x01,,}\n')       # breaks the JSON at the end of the 100 MB line
            else:
                f.write(b'"}]' + b + b"\n")
            f.write((g1 + g2 + "\n").encode())  # a glued line after it: the reader must resync
        return p

    big = lambda d: S.shared("big-line.jsonl", big_line_session)
    big_bad = lambda d: S.shared("big-line-bad.jsonl", lambda p: big_line_session(p, True))
    add("huge-line-100MB", "huge-line", "validate", big, 1, ["PH002"], forbid=["PH001", "PH901"])
    add("huge-line-100MB-max-line-bytes-1MB", "huge-line", "validate", big, 1, ["PH901", "PH002"],
        extra=["--max-line-bytes", "1048576"], check=diag_at_line("PH901", 8))
    add("huge-line-100MB-max-line-bytes-100", "huge-line", "validate", big, 1, ["PH901"],
        extra=["--max-line-bytes", "100"])
    add("huge-line-100MB-invalid-json", "huge-line", "validate", big_bad, 1, ["PH001", "PH002"],
        check=diag_at_line("PH001", 8))
    add("hydrate-huge-line-100MB", "huge-line", "session", big, 0, ["PH002"])

    def no_newline_garbage(p):  # 100 MB with no newline and no JSON at all
        with open(p, "wb") as f:
            blk = b"x" * MB
            for _ in range(100):
                f.write(blk)
        return p
    add("huge-line-100MB-no-newline-garbage", "huge-line", "validate",
        lambda d: S.shared("garbage.jsonl", no_newline_garbage), 1, ["PH102"])

    # ---- 4. 100k-deep nesting -----------------------------------------------------------------
    N = 100000
    deep_arr = "[" * N + "]" * N
    deep_obj = '{"a":' * N + "1" + "}" * N
    deep_arr_open = "[" * N
    for nm, frag in (("arrays", deep_arr), ("objects", deep_obj)):
        add(f"deep-{nm}-100k-session-line", "nesting", "validate",
            sess(base + [e_custom("d0d0d0d0", LAST_ID, frag)]), 1, ["PH902"], check=diag_at_line("PH902", 8))
    add("deep-arrays-100k-unclosed", "nesting", "validate",
        sess(base[:3] + [e_custom("d0d0d0d0", "c3d2e5b4", deep_arr_open)] + base[3:]), 1, ["PH902"])
    add("deep-arrays-100k-whole-line", "nesting", "validate", sess(base + [deep_arr]), 1, ["PH902"])
    add("deep-objects-100k-as-header-line", "nesting", "validate", sess([deep_obj] + base), 1, ["PH902"])
    add("hydrate-deep-arrays-100k", "nesting", "session",
        sess(base + [e_custom("d0d0d0d0", LAST_ID, deep_arr)]), 1, ["PH902"])
    add("hydrate-deep-objects-100k", "nesting", "session",
        sess(base + [e_custom("d0d0d0d0", LAST_ID, deep_obj)]), 1, ["PH902"])
    for nm, frag in (("arrays", deep_arr), ("objects", deep_obj)):
        def mk(d, frag=frag):
            ents = base_thread_entries()
            ents[0]["extra"] = "@@DEEP@@"
            return write(os.path.join(d, "t.json"), dump(thread_doc(ents)).replace('"@@DEEP@@"', frag))
        add(f"thread-deep-{nm}-100k", "nesting", "thread", mk, 1, any_codes=["PH601", "PH902"])

    def mk_jsonl_deep(d):
        lines = ['{"format":"thread-export","version":1,"thread":{"id":"thr_jsonl"}}',
                 json.dumps(base_thread_entries()[0]),
                 '{"id":"deep","kind":"chat","role":"user","text":"x","extra":' + deep_arr + "}"]
        return write(os.path.join(d, "t.jsonl"), "\n".join(lines) + "\n")
    add("thread-jsonl-deep-arrays-100k", "nesting", "thread", mk_jsonl_deep, 1, any_codes=["PH601", "PH902"])

    # ---- 5. invalid and overlong UTF-8 ---------------------------------------------------------
    bad_utf8 = {
        "lone-continuation": b"\x80",
        "truncated-sequence": b"\xe2\x82",
        "surrogate-ED-A0-80": b"\xed\xa0\x80",
        "overlong-C0-AF": b"\xc0\xaf",
        "overlong-E0-80-AF": b"\xe0\x80\xaf",
    }
    for nm, bb in bad_utf8.items():
        line = e_user("babababa", LAST_ID, '"bad @@ bytes"').encode().replace(b"@@", bb)
        add(f"utf8-{nm}", "utf8", "validate", sess(base + [line]), 0, ["PH005"], forbid=["PH001"],
            check=diag_at_line("PH005", 8))
    for nm in ("lone-continuation", "surrogate-ED-A0-80", "overlong-E0-80-AF"):
        line = e_user("babababa", LAST_ID, '"bad @@ bytes"').encode().replace(b"@@", bad_utf8[nm])
        add(f"hydrate-utf8-{nm}", "utf8", "session", sess(base + [line]), 0, ["PH005"],
            check=output_contains(b"bad " + bad_utf8[nm] + b" bytes"))

    def mk_thread_utf8(d):
        ents = base_thread_entries()
        ents[0]["text"] = "bad @@ bytes"
        return write(os.path.join(d, "t.json"), dump(thread_doc(ents)).encode().replace(b"@@", b"\xc0\xaf"))
    # the docs do not say whether bad UTF-8 in an export is "not JSON": accept a clean refusal too
    add("thread-utf8-overlong", "utf8", "thread", mk_thread_utf8, 0, ["PH005"], may_exit={1: ("PH601",)},
        check=output_contains(b"bad \xc0\xaf bytes"))

    # ---- 6. UTF-16 ----------------------------------------------------------------------------
    text16 = "\n".join(base) + "\n"
    for nm, enc, bom in (("le-bom", "utf-16-le", b"\xff\xfe"), ("le-no-bom", "utf-16-le", b""),
                         ("be-bom", "utf-16-be", b"\xfe\xff"), ("be-no-bom", "utf-16-be", b"")):
        add(f"utf16-{nm}", "utf16", "validate", raw(bom + text16.encode(enc)), 1, ["PH102", "PH006"])
    add("hydrate-utf16-le-bom", "utf16", "session", raw(b"\xff\xfe" + text16.encode("utf-16-le")), 1, ["PH102"])
    add("thread-utf16-le-bom", "utf16", "thread",
        raw(b"\xff\xfe" + dump(thread_doc()).encode("utf-16-le"), "t.json"), 1, ["PH601"])
    add("thread-utf16-be-no-bom", "utf16", "thread",
        raw(dump(thread_doc()).encode("utf-16-be"), "t.json"), 1, ["PH601"])

    # ---- 7. NUL bytes -------------------------------------------------------------------------
    nul_in_string = e_user("dededede", LAST_ID, '"nul @@ here"').encode().replace(b"@@", b"\x00")
    nul_between = e_user("dededede", LAST_ID).encode().replace(b',"timestamp"', b',\x00"timestamp"', 1)
    add("nul-inside-string", "nul", "validate", sess(base[:5] + [nul_in_string] + base[5:]), 1, ["PH006"],
        check=diag_at_line("PH006", 6))
    add("nul-between-tokens", "nul", "validate", sess(base[:5] + [nul_between] + base[5:]), 1, ["PH006"])
    add("nul-last-line-no-newline", "nul", "validate", sess(base + [b"\x00\x00\x00"], False), 1, ["PH006"])
    add("nul-file-2MB", "nul", "validate", raw(b"\x00" * (2 * MB)), 1, ["PH006", "PH102"])
    add("nul-lines-2MB", "nul", "validate", raw(b"\x00\x00\x00\n" * (MB // 2)), 1, ["PH006", "PH102"])
    add("hydrate-nul-inside-string", "nul", "session", sess(base[:5] + [nul_in_string] + base[5:]), 0, ["PH006"])
    add("hydrate-nul-file", "nul", "session", raw(b"\x00" * 4096), 1, ["PH102"])

    # ---- 8. numbers beyond double ---------------------------------------------------------------
    d400 = "9" * 400
    for nm, num in (("1e400", "1e400"), ("minus-1e400", "-1e400"), ("400-digit-integer", d400)):
        usage = USAGE.replace('"input":1834', f'"input":{num}').replace('"totalTokens":2046', f'"totalTokens":{num}')
        lines = base + [e_call("abababab", LAST_ID, "toolu_num", f'{{"n":{num},"m":[{num}]}}', usage=usage),
                        e_result("acacacac", "abababab", "toolu_num")]
        add(f"number-{nm}-in-message", "numbers", "validate", sess(lines), 0, forbid=["PH001"])
        add(f"hydrate-number-{nm}-in-message", "numbers", "session", sess(lines), 0, forbid=["PH001"],
            check=output_contains(f'"input":{num}'.encode(), f'{{"n":{num},"m":[{num}]}}'.encode()))
    for nm, num in (("1e400", "1e400"), ("minus-1e400", "-1e400"), ("400-digit-integer", d400)):
        add(f"number-{nm}-as-header-version", "numbers", "validate",
            sess([header(cwd, version=num)] + base[1:]), 0, ["PH110"], forbid=["PH001", "PH102"])
    add("hydrate-number-1e400-as-header-version", "numbers", "session",
        sess([header(cwd, version="1e400")] + base[1:]), 0, forbid=["PH102"])

    # ---- 9. duplicate keys (JSON.parse: the last one wins) ----------------------------------------
    def dup_id(first, second):
        l = e_user(second, "e5b4a7f6", '"dup"')
        return l.replace(f'"id":"{second}"', f'"id":"{first}","id":"{second}"', 1)
    # the real id last: the next entry's parent resolves
    l7 = base[6]
    add("dup-key-id-last-is-real", "dup-keys", "validate",
        sess(base[:5] + [dup_id("99990000", "f6a5b8e7")] + [l7]), 0, forbid=["PH203", "PH001"])
    add("dup-key-id-first-is-real", "dup-keys", "validate",
        sess(base[:5] + [dup_id("f6a5b8e7", "99990000")] + [l7]), 1, ["PH203"], check=diag_at_line("PH203", 7))
    pl = base[6].replace('"parentId":"f6a5b8e7"', '"parentId":"bogus000","parentId":"f6a5b8e7"')
    add("dup-key-parentId-last-is-real", "dup-keys", "validate", sess(base[:6] + [pl]), 0, forbid=["PH203"])
    pl2 = base[6].replace('"parentId":"f6a5b8e7"', '"parentId":"f6a5b8e7","parentId":"bogus000"')
    add("dup-key-parentId-last-is-bogus", "dup-keys", "validate", sess(base[:6] + [pl2]), 1, ["PH203"])
    ml = base[6][:-1] + ',"message":null}'
    add("dup-key-message-last-is-null", "dup-keys", "validate", sess(base[:6] + [ml]), 1, ["PH301"])
    add("hydrate-dup-key-parentId-last-is-real", "dup-keys", "session", sess(base[:6] + [pl]), 0)
    add("hydrate-dup-key-id-last-is-real", "dup-keys", "session",
        sess(base[:5] + [dup_id("99990000", "f6a5b8e7")] + [l7]), 0)
    add("hydrate-dup-key-parentId-last-is-bogus", "dup-keys", "session",
        sess(base[:6] + [pl2]), 0, ["PH203"])
    tdup = dump(thread_doc()).replace('"format": "thread-export"', '"format": "thread-export", "format": "nope"', 1)
    add("thread-dup-key-format-last-wrong", "dup-keys", "thread", raw(tdup, "t.json"), 1, ["PH601"], path="format")

    # ---- 10. ids shared between entries -----------------------------------------------------
    # the last entry reuses the id of the previous leaf (which has no children): no cycle
    shared = base + [e_answer(LAST_ID, "f6a5b8e7", '"same id as the user turn before"')]
    add("shared-id-two-entries", "shared-ids", "validate", sess(shared), 1, ["PH202"])
    cyc = [base[0], e_user("aaaa0001", None), e_answer("aaaa0002", "aaaa0001"), e_user("aaaa0001", "aaaa0002")]
    add("shared-id-makes-cycle", "shared-ids", "validate", sess(cyc), 1, ["PH202", "PH201"])
    add("hydrate-shared-id-two-entries", "shared-ids", "session", sess(shared), 0, ["PH202"])
    add("hydrate-shared-id-makes-cycle", "shared-ids", "session", sess(cyc), 1, ["PH201"])

    # ---- 11. parent cycles ------------------------------------------------------------------
    c1 = base + [e_user("c1c1c1c1", "c1c1c1c1", '"my own parent"')]
    c2 = base + [e_user("c2c2c2c1", "c2c2c2c2"), e_answer("c2c2c2c2", "c2c2c2c1")]
    off = base[:6] + [e_user("0f0f0f01", "0f0f0f02"), e_answer("0f0f0f02", "0f0f0f01")] + base[6:]

    def cycle_100k(p):
        with open(p, "w") as f:
            f.write(header(cwd) + "\n")
            n = 100000
            for i in range(n):
                parent = f"{(i - 1) % n:08x}"  # entry 0's parent is the last entry: one 100000-long cycle
                f.write(e_user(f"{i:08x}", parent, '"round and round"') + "\n")
        return p
    add("cycle-length-1", "cycles", "validate", sess(c1), 1, ["PH201"])
    add("cycle-length-2", "cycles", "validate", sess(c2), 1, ["PH201"])
    add("cycle-length-100000", "cycles", "validate", lambda d: S.shared("cycle100k.jsonl", cycle_100k), 1, ["PH201"])
    add("cycle-off-the-leaf-path", "cycles", "validate", sess(off), 0, ["PH201"])
    add("hydrate-cycle-length-1", "cycles", "session", sess(c1), 1, ["PH201"])
    add("hydrate-cycle-length-2", "cycles", "session", sess(c2), 1, ["PH201"])
    add("hydrate-cycle-length-100000", "cycles", "session", lambda d: S.shared("cycle100k.jsonl", cycle_100k), 1,
        ["PH201"])
    add("hydrate-cycle-off-the-leaf-path", "cycles", "session", sess(off), 0)

    # ---- 12. a million entries ------------------------------------------------------------------
    def million(p):
        with open(p, "w") as f:
            f.write(header(cwd) + "\n")
            parent = None
            buf = []
            for i in range(1000000):
                eid = f"{i:08x}"
                if i % 2 == 0:
                    buf.append(f'{{"type":"message","id":"{eid}","parentId":{js(parent)},"timestamp":"{TS}",'
                               f'"message":{{"role":"user","content":"q{i}","timestamp":{MS}}}}}\n')
                else:
                    buf.append(f'{{"type":"custom","id":"{eid}","parentId":"{parent}","timestamp":"{TS}",'
                               f'"customType":"tick","data":{{"n":{i}}}}}\n')
                parent = eid
                if len(buf) >= 10000:
                    f.write("".join(buf))
                    buf.clear()
            f.write("".join(buf))
        return p
    add("million-entries-linear-v3", "scale", "validate", lambda d: S.shared("million.jsonl", million), 0,
        forbid=["PH903"], check=lambda d, i, o, so, se, dg: None if json.loads(so)["files"][0]["entries"] == 1000000
        else f"entries reported: {json.loads(so)['files'][0]['entries']}, expected 1000000")
    add("million-entries-max-entries-1000", "scale", "validate", lambda d: S.shared("million.jsonl", million), 1,
        ["PH903"], extra=["--max-entries", "1000"])

    # ---- 13. thread export: every required field wrong in turn ----------------------------------
    def tcase(nm, doc_or_text, path, name="t.json"):
        text = doc_or_text if isinstance(doc_or_text, str) else dump(doc_or_text)
        add(f"thread-{nm}", "thread-contract", "thread", raw(text, name), 1, ["PH601"], path=path)

    def without(d, k):
        d = dict(d)
        del d[k]
        return d

    tcase("format-wrong", thread_doc(format="thread-exprot"), "format")
    tcase("format-missing", without(thread_doc(), "format"), "format")
    tcase("format-number", thread_doc(format=1), "format")
    tcase("version-2", thread_doc(version=2), "version")
    tcase("version-string", thread_doc(version="1"), "version")
    tcase("version-missing", without(thread_doc(), "version"), "version")
    tcase("version-1e400", dump(thread_doc(version=2)).replace('"version": 2', '"version": 1e400'), "version")
    tcase("thread-missing", without(thread_doc(), "thread"), "thread")
    tcase("thread-not-object", thread_doc(thread="thr_1"), "thread")
    tcase("thread-id-missing", thread_doc(thread={"title": "no id"}), "thread.id")
    tcase("thread-id-empty", thread_doc(thread={"id": ""}), "thread.id")
    tcase("entries-missing", without(thread_doc(), "entries"), "entries")
    tcase("entries-object", thread_doc(entries={"0": base_thread_entries()[0]}), "entries")
    tcase("entries-null", thread_doc(entries=None) | {"entries": None}, "entries")
    e = base_thread_entries(); e[1] = "not an entry"
    tcase("entry-not-object", thread_doc(e), "entries[1]")
    e = base_thread_entries(); del e[1]["id"]
    tcase("entry-id-missing", thread_doc(e), "entries[1].id")
    e = base_thread_entries(); e[2]["id"] = e[0]["id"]
    tcase("entry-id-duplicate", thread_doc(e), "entries[2].id")
    e = base_thread_entries(); del e[1]["kind"]
    tcase("entry-kind-missing", thread_doc(e), "entries[1].kind")
    e = base_thread_entries(); e[3]["data"] = {"piEntryId": "5b1e9a20"}
    tcase("assistant-without-message", thread_doc(e), "entries[3].data.message")
    e = base_thread_entries(); e[3]["data"] = {"message": None}
    tcase("assistant-message-null", thread_doc(e), "entries[3].data.message")
    e = base_thread_entries(); del e[3]["data"]
    tcase("assistant-without-data", thread_doc(e), "entries[3].data")
    e = base_thread_entries(); e[2]["data"] = {}
    tcase("tool-result-without-message", thread_doc(e), "entries[2].data.message")
    e = base_thread_entries(); del e[0]["text"]
    tcase("chat-without-text", thread_doc(e), "entries[0].text")
    e = base_thread_entries(); del e[0]["role"]
    tcase("chat-without-role", thread_doc(e), "entries[0].role")
    e = base_thread_entries(); e[2]["data"]["message"]["role"] = "assistant"
    tcase("role-mismatch", thread_doc(e), "entries[2].data.message.role")
    for nm, v in (("1.5", "1.5"), ("string", '"3"'), ("1e400", "1e400"), ("true", "true")):
        e = base_thread_entries(); e[0]["seq"] = "@@SEQ@@"
        tcase(f"seq-{nm}", dump(thread_doc(e)).replace('"@@SEQ@@"', v), "entries[0].seq")
    full = dump(thread_doc())
    add("thread-not-json-truncated", "thread-contract", "thread", raw(full[: len(full) // 2], "t.json"), 1, ["PH601"])
    add("thread-empty-file", "thread-contract", "thread", raw(b"", "t.json"), 1, ["PH601"])
    add("thread-top-level-array", "thread-contract", "thread", raw("[]", "t.json"), 1, ["PH601"])
    jl = ['{"format":"thread-export","version":1,"thread":{"id":"thr_jsonl"}}',
          json.dumps(base_thread_entries()[0]), '{"id":"msg_02","role":"user","text":"no kind"}']
    add("thread-jsonl-kind-missing", "thread-contract", "thread", raw("\n".join(jl) + "\n", "t.jsonl"), 1, ["PH601"],
        path="entries[1].kind",
        check=lambda d, i, o, so, se, dg: None if re.search(rb"t\.jsonl:3:\d+: error: entries\[1\]\.kind", se)
        else "PH601 not positioned on line 3 of the JSONL export")

    # ---- 14. huge base64 payloads ---------------------------------------------------------------
    b64blk = base64.b64encode(bytes((i * 7919) & 0xff for i in range(3 * 4096)))  # 16 KiB, no padding
    n_blk = (50 * MB) // len(b64blk)
    h = hashlib.sha256()
    for _ in range(n_blk):
        h.update(b64blk)
    digest = h.hexdigest()

    def write_b64(f):
        for _ in range(n_blk):
            f.write(b64blk)

    def session_image(p):
        with open(p, "wb") as f:
            f.write(lines_bytes(base[:4]))
            a, b = e_result("e5b4a7f6", "d4c3f6a5", content="@@").encode().split(b"@@")
            f.write(a + b'[{"type":"text","text":"screenshot"},{"type":"image","mimeType":"image/png","data":"')
            write_b64(f)
            f.write(b'"}]' + b + b"\n")
            f.write(lines_bytes(base[5:]))
        return p

    def thread_image(p, where):
        doc = thread_doc()
        if where == "tool_result":
            doc["entries"][2]["data"]["message"]["content"] = [
                {"type": "text", "text": "screenshot"}, {"type": "image", "mimeType": "image/png", "data": "@@B64@@"}]
        else:
            doc["entries"][0]["attachments"] = [{"type": "image", "mimeType": "image/png", "data": "@@B64@@"}]
        a, b = dump(doc).encode().split(b"@@B64@@")
        with open(p, "wb") as f:
            f.write(a)
            write_b64(f)
            f.write(b)
        return p

    simg = lambda d: S.shared("image50.jsonl", session_image)
    add("base64-50MB-image-session-validate", "base64", "validate", simg, 0)
    add("base64-50MB-image-session-hydrate", "base64", "session", simg, 0, check=output_image_digest(digest))
    add("base64-50MB-image-thread-tool-result", "base64", "thread",
        lambda d: thread_image(os.path.join(d, "t.json"), "tool_result"), 0, check=output_image_digest(digest))
    add("base64-50MB-image-thread-attachment", "base64", "thread",
        lambda d: thread_image(os.path.join(d, "t.json"), "attachment"), 0, check=output_image_digest(digest))

    # ---- 15. escapes JSON.parse accepts ------------------------------------------------------
    add("escape-u0000-is-not-a-nul-byte", "escapes", "validate",
        sess(base + [e_user("e0e0e0e0", LAST_ID, '"a\\u0000b"')]), 0, forbid=["PH001", "PH006"])
    add("escape-lone-surrogate-u-d800", "escapes", "validate",
        sess(base + [e_user("e0e0e0e0", LAST_ID, '"half \\ud800 pair"')]), 0, forbid=["PH001"])
    add("hydrate-escape-lone-surrogate-u-d800", "escapes", "session",
        sess(base + [e_user("e0e0e0e0", LAST_ID, '"half \\ud800 pair"')]), 0, forbid=["PH001"],
        check=output_contains(b'"half \\ud800 pair"'))

    def escape_storm(p):  # 20 MB of escaped quotes and backslashes in one string
        with open(p, "wb") as f:
            f.write(lines_bytes(base))
            a, b = e_user("e1e1e1e1", LAST_ID, "@@").encode().split(b"@@")
            f.write(a + b'"')
            blk = b'\\"\\\\\\\\\\"' * 8192
            for _ in range((20 * MB) // len(blk)):
                f.write(blk)
            f.write(b'"' + b + b"\n")
        return p
    add("escape-storm-20MB", "escapes", "validate", lambda d: S.shared("storm.jsonl", escape_storm), 0)
    add("hydrate-escape-storm-20MB", "escapes", "session", lambda d: S.shared("storm.jsonl", escape_storm), 0)

    # ---- 16. other hostile shapes ----------------------------------------------------------------
    add("empty-file", "misc", "validate", raw(b""), 1, ["PH101"])
    add("hydrate-empty-file", "misc", "session", raw(b""), 1, any_codes=["PH101", "PH102"])

    def many_bad_lines(p):  # 2 MB of one-byte garbage lines after a valid header: one finding per line
        with open(p, "wb") as f:
            f.write(lines_bytes(base))
            f.write(b"x\n" * MB)
        return p
    add("many-malformed-lines-1M", "misc", "validate", lambda d: S.shared("manybad.jsonl", many_bad_lines), 1,
        ["PH001"])
    add("hydrate-many-malformed-lines-1M", "misc", "session", lambda d: S.shared("manybad.jsonl", many_bad_lines), 0,
        ["PH001"])

    # ---- 17. Gemini CLI chat logs (docs/gemini-cli.md): a log replayed, its results counted once ----
    g_head = json.dumps({"sessionId": "g-1", "projectHash": "h", "startTime": "2026-11-28T06:07:22.028Z", "kind": "main"})

    def g_user(mid, text):
        return json.dumps({"id": mid, "timestamp": "2026-11-28T06:07:23.000Z", "type": "user", "content": [{"text": text}]})

    def g_call(mid, cid):
        return json.dumps({"id": mid, "type": "gemini", "content": "Looking.", "model": "gemini-2.5-pro", "toolCalls": [
            {"id": cid, "name": "run_shell_command", "args": {"command": "ls"}, "status": "success", "result": [
                {"functionResponse": {"id": cid, "name": "run_shell_command", "response": {"output": "Output: a"}}}]}]})

    def g_answer(mid, text="Done."):
        return json.dumps({"id": mid, "type": "gemini", "content": text, "model": "gemini-2.5-pro"})

    g_base = [g_head, g_user("u1", "List the files."), g_call("g1", "c1"), g_answer("g2")]
    gsess = lambda lines, nl=True: lambda d: write(os.path.join(d, "in.jsonl"), lines_bytes(lines, nl))  # noqa: E731
    g_cut = g_base[2][:len(g_base[2]) // 2]
    add("gemini-truncated-last-line", "gemini-cli", "session", gsess(g_base + [g_cut], False), 0, ["PH606"])
    add("gemini-truncated-middle-line", "gemini-cli", "session", gsess(g_base[:2] + [g_cut] + g_base[3:]), 1, ["PH605"])
    add("gemini-no-header", "gemini-cli", "session", gsess(g_base[1:]), 1, extra=["--from", "gemini-cli"],
        any_codes=["PH605"])
    add("gemini-wrong-types", "gemini-cli", "session", gsess(g_base + [
        json.dumps({"id": "g3", "type": "gemini", "content": 7, "toolCalls": "x", "thoughts": {}}),
        json.dumps({"id": "u2", "type": "user", "content": {"a": 1}}),
        json.dumps({"id": 5, "type": "user"}), json.dumps({"$set": {"messages": "no"}}), json.dumps({"$rewindTo": 3}),
        json.dumps({"id": "g4", "type": "gemini", "toolCalls": [7, {"id": 1, "args": [], "result": {"x": 1}}]}),
        g_answer("g5")]), 0, ["PH606"])
    # Ids do not link, so no cycle: a rewind to a message written later, a message rewound and
    # written again, a result answering no call.
    add("gemini-rewinds-and-rewrites", "gemini-cli", "session", gsess(g_base + [
        json.dumps({"$rewindTo": "g9"}), g_user("u1", "Again."), json.dumps({"$rewindTo": "u1"}), g_user("u1", "Once more."),
        g_call("g1", "c1"), json.dumps({"id": "r9", "type": "user", "content": [
            {"functionResponse": {"id": "nowhere", "name": "x", "response": {"output": "?"}}}]}), g_answer("g2")]), 0)
    add("gemini-rewound-to-nothing", "gemini-cli", "session",
        gsess(g_base + [json.dumps({"$rewindTo": "not-there"})]), 1, ["PH605"])

    def g_many_rewrites(p):  # one message written 200000 times, a list of 100000 set at once
        with open(p, "wb") as f:
            f.write(lines_bytes(g_base))
            for i in range(200000):
                f.write((g_answer("g2", f"version {i}") + "\n").encode())
            f.write((json.dumps({"$set": {"messages": [json.loads(g_user(f"m{i}", "hi")) for i in range(100000)]}})
                     + "\n").encode())
            f.write((g_answer("last") + "\n").encode())
        return p
    add("gemini-many-rewrites", "gemini-cli", "session", lambda d: S.shared("gemini-rewrites.jsonl", g_many_rewrites), 0)
    # ---- 18. Qwen Code chat files (docs/qwen-code.md): records linked by uuid/parentUuid -------------
    def qrec(uuid, parent, kind="user", rest=None):
        record = {"uuid": uuid, "parentUuid": parent, "sessionId": "q-1", "timestamp": TS, "type": kind,
                  "provenance": "real_user", "cwd": cwd, "version": "0.24.4"}
        record.update(rest if rest is not None else {"message": {"role": "user", "parts": [{"text": "hi " + str(uuid)}]}})
        return json.dumps(record)

    qbase = [qrec("q1", None), qrec("q2", "q1", "assistant", {"model": "m", "message": {"role": "model", "parts": [{"text": "hello"}]}})]
    add("qwen-cut-off-last-line", "qwen", "session", sess(qbase + [qrec("q3", "q2")[:40]], False), 0, ["PH606"])
    def error_at_line(line):  # a --session run reports on stderr, FILE:LINE:COL: error: ... [CODE]
        def check(d, inp, out, stdout, stderr, diags):
            text = stderr.decode("utf-8", "replace")
            return None if re.search(rf"in\.jsonl:{line}:\d+: error: .*\[PH605\]", text) else \
                f"no PH605 error at line {line}: {first_lines(text)}"
        return check
    add("qwen-cut-in-the-middle", "qwen", "session", sess(qbase[:1] + [qrec("q3", "q1")[:40]] + qbase[1:]), 1,
        ["PH605"], check=error_at_line(2))
    add("qwen-parts-not-a-list", "qwen", "session",
        sess(qbase + [qrec("q3", "q2", "user", {"message": {"role": "user", "parts": "hi"}})]), 1, ["PH605"])
    add("qwen-uuid-a-number", "qwen", "session", sess([qrec(7, None)] + qbase[1:]), 0, ["PH606"])
    add("qwen-two-record-loop", "qwen", "session", sess([qrec("q1", "q2"), qbase[1]]), 1, ["PH605"])
    add("qwen-own-parent", "qwen", "session", sess([qrec("q1", "q1")]), 1, ["PH605"])

    def qwen_chain(n, loop):
        def make(p):
            with open(p, "w") as f:
                for i in range(n):
                    parent = f"q{i - 1}" if i else (f"q{n - 1}" if loop else None)
                    f.write(qrec(f"q{i}", parent) + "\n")
            return p
        return make
    add("qwen-loop-over-100k-records", "qwen", "session",
        lambda d: qwen_chain(100000, True)(os.path.join(d, "in.jsonl")), 1, ["PH605"])
    add("qwen-chain-of-100k-records", "qwen", "session",
        lambda d: qwen_chain(100000, False)(os.path.join(d, "in.jsonl")), 0)
    add("qwen-garbage-read-as-qwen", "qwen", "session", raw(bytes(range(256)) * 64), 1, ["PH605"],
        extra=("--from", "qwen-code"))

    # ---- 20. Copilot CLI events (docs/copilot-cli.md): one chain of events by id/parentId -----------
    def cev(eid, parent, kind, data):
        return json.dumps({"type": kind, "data": data, "id": eid, "timestamp": TS, "parentId": parent})

    c_start = cev("c0", None, "session.start", {"sessionId": "c-1", "version": 1, "producer": "copilot-agent",
                                                "copilotVersion": "1.0.102", "startTime": TS, "context": {"cwd": cwd}})
    c_base = [c_start, cev("c1", "c0", "user.message", {"content": "List the files."}),
              cev("c2", "c1", "assistant.message", {"messageId": "m1", "content": "Looking.", "toolRequests": [
                  {"toolCallId": "toolu_c1", "name": "bash", "arguments": {"command": "ls"}}]}),
              cev("c3", "c2", "tool.execution_complete", {"toolCallId": "toolu_c1", "success": True,
                                                          "shellExecution": {"exitCode": 1},
                                                          "result": {"content": "x\n<shellId: 0 completed with exit code 1>"}}),
              cev("c4", "c3", "assistant.message", {"messageId": "m2", "content": "Done."})]
    c_cut = c_base[2][:len(c_base[2]) // 2]
    add("copilot-cut-off-last-line", "copilot-cli", "session", sess(c_base + [c_cut], False), 0, ["PH606"])
    add("copilot-cut-in-the-middle", "copilot-cli", "session", sess(c_base[:2] + [c_cut] + c_base[3:]), 1, ["PH605"])
    add("copilot-no-start", "copilot-cli", "session", sess(c_base[1:]), 1, ["PH605"], extra=("--from", "copilot-cli"))
    add("copilot-wrong-types", "copilot-cli", "session", sess(c_base + [
        cev("c5", "c4", "user.message", {"content": 7, "attachments": "x"}),
        cev("c6", "c5", "assistant.message", {"content": ["a"], "toolRequests": {"x": 1}, "reasoningBlocks": [1]}),
        cev("c7", "c6", "tool.execution_complete", {"toolCallId": 3, "success": "yes", "result": [1]}),
        json.dumps({"type": 5, "data": "x", "id": 9, "parentId": {}}),
        cev("c8", "c7", "session.compaction_complete", {"success": True, "summaryContent": {"a": 1}}),
        cev("c9", "c8", "assistant.message", {"messageId": "m3", "content": "Still here."})]), 0, ["PH606"])
    # Ids that link in a loop, to themselves or to a later event: the file's order stands.
    add("copilot-chain-loops", "copilot-cli", "session", sess([c_start] + [
        cev("c1", "c4", "user.message", {"content": "hi"}), cev("c2", "c2", "assistant.message", {"content": "a"}),
        cev("c3", "c9", "user.message", {"content": "again"}), cev("c4", "c1", "assistant.message", {"content": "b"})]),
        0, ["PH606"])
    add("copilot-deep-nesting", "copilot-cli", "session", sess(c_base[:2] + [
        cev("c2", "c1", "assistant.message", {"content": "x", "toolRequests": []})[:-1] + ',"deep":' +
        "[" * 100000 + "]" * 100000 + "}"] + c_base[3:]), 1, ["PH605"])
    add("copilot-garbage-read-as-copilot", "copilot-cli", "session", raw(bytes(range(256)) * 64), 1, ["PH605"],
        extra=("--from", "copilot-cli"))

    def copilot_events(n):
        def make(p):
            with open(p, "w") as f:
                f.write(c_start + "\n")
                for i in range(1, n):
                    kind = "user.message" if i % 2 else "assistant.message"
                    f.write(cev(f"c{i}", f"c{i - 1}", kind, {"messageId": f"m{i}", "content": f"turn {i}"}) + "\n")
            return p
        return make
    add("copilot-100k-events", "copilot-cli", "session",
        lambda d: copilot_events(100000)(os.path.join(d, "in.jsonl")), 0)

    # ---- 19. OpenCode databases and exports (docs/opencode.md) ----------------------------------
    add("opencode-db-valid", "opencode", "session", lambda d: opencode_db(d), 0, forbid=["PH605"])
    add("opencode-db-truncated", "opencode", "session",
        lambda d: cut_file(opencode_db(d, checkpoint=True), 5000), 1, ["PH605"])
    add("opencode-db-header-only", "opencode", "session",
        lambda d: cut_file(opencode_db(d, checkpoint=True), 100), 1, ["PH605"])
    add("opencode-db-garbage-pages", "opencode", "session", lambda d: garble_file(opencode_db(d, checkpoint=True)),
        1, ["PH605"])
    # SQLite skips WAL frames whose checksums fail: here the schema itself was only in the log.
    add("opencode-db-garbage-wal", "opencode", "session", lambda d: garble_file(opencode_db(d) + "-wal", keep=32)
        and os.path.join(d, "opencode.db"), 1, ["PH605"])
    add("opencode-db-wrong-schema", "opencode", "session", lambda d: opencode_db(d, schema="CREATE TABLE notes (x)"),
        1, ["PH605"])
    add("opencode-db-data-not-json", "opencode", "session",
        lambda d: opencode_db(d, rows=[("msg_1", "{not json", [])]), 1, ["PH605"])
    add("opencode-db-data-deep-nesting", "opencode", "session",
        lambda d: opencode_db(d, rows=[("msg_1", OC_USER, [("prt_1", "[" * 200000 + "]" * 200000)])]), 1, ["PH605"])
    add("opencode-db-wrong-types", "opencode", "session",
        lambda d: opencode_db(d, rows=[("msg_1", '{"role":7,"time":"x"}', [("prt_1", '{"type":"text","text":42}')]),
                                       ("msg_2", '{"role":"user","time":{"created":"x"}}',
                                        [("prt_2", '{"type":"text","text":"hi"}'), ("prt_3", '{"type":"tool","state":7}')]),
                                       ("msg_3", '{"role":"assistant","tokens":"x","finish":5,"summary":"yes"}',
                                        [("prt_4", '{"type":"tool","callID":3,"state":{"status":"completed","input":[1],'
                                                   '"output":{"o":1},"metadata":{"exit":"1"}}}')])]),
        0, forbid=["PH605"])
    add("opencode-db-parent-cycles", "opencode", "session",
        lambda d: opencode_db(d, rows=[("msg_1", '{"role":"user","parentID":"msg_1"}', [("prt_1", '{"type":"compaction","tail_start_id":"msg_2"}')]),
                                       ("msg_2", '{"role":"assistant","parentID":"msg_1","summary":true,"finish":"stop"}',
                                        [("prt_2", '{"type":"text","text":"sum"}')]),
                                       ("msg_3", '{"role":"assistant","parentID":"msg_3","summary":true,"finish":"stop"}',
                                        [("prt_3", '{"type":"compaction","tail_start_id":"msg_3"}')])]),
        0, forbid=["PH605"])
    add("opencode-db-no-session", "opencode", "session", lambda d: opencode_db(d, rows=None), 1, ["PH605"])
    export = json.dumps({"info": {"id": "ses_x", "directory": "/w"}, "messages": [
        {"info": {"id": "msg_1", "role": "user"}, "parts": [{"type": "text", "text": "hi"}]}]}, indent=2)
    add("opencode-export-cut", "opencode", "session", raw(export[:len(export) // 2].encode(), "s.json"), 1, ["PH605"])
    add("opencode-export-wrong-types", "opencode", "session",
        raw(b'{"info": {"id": "ses_x"}, "messages": [{"info": 1, "parts": "x"}]}', "s.json"), 1, ["PH605"])

    # ---- 20. Kilo CLI databases and exports: OpenCode's reader under Kilo's names (docs/opencode.md KL1-KL3)
    # KL1: the schema in the file's first page: Kilo's reader bids; only in the -wal: OpenCode's reader
    # bids, finds Kilo's tables in the database and counts under Kilo's name.
    add("kilo-db-valid", "kilo", "session", lambda d: opencode_db(d, checkpoint=True, kilo=True), 0, forbid=["PH605"],
        check=lambda d, inp, out, stdout, stderr, diags: None if b"Kilo CLI messages" in stderr
        else "not read as Kilo CLI's (KL1): " + stderr[-200:].decode(errors="replace"))
    add("kilo-db-schema-only-in-wal", "kilo", "session", lambda d: opencode_db(d, rows=[
        ("msg_1", OC_USER, [("prt_1", '{"type":"step-start"}'), ("prt_2", '{"type":"text","text":"hello"}')])], kilo=True),
        0, forbid=["PH605"], check=lambda d, inp, out, stdout, stderr, diags: None
        if b"kilo-cli-bookkeeping-parts=1" in stderr else "not counted as Kilo CLI's (KL1): " + stderr[-200:].decode(errors="replace"))
    add("kilo-db-truncated", "kilo", "session",
        lambda d: cut_file(opencode_db(d, checkpoint=True, kilo=True), 5000), 1, ["PH605"])
    add("kilo-db-garbage-pages", "kilo", "session",
        lambda d: garble_file(opencode_db(d, checkpoint=True, kilo=True)), 1, ["PH605"])
    add("kilo-db-garbage-wal", "kilo", "session", lambda d: garble_file(opencode_db(d, kilo=True) + "-wal", keep=32)
        and os.path.join(d, "opencode.db"), 1, ["PH605"], extra=("--from", "kilo-cli"))
    add("kilo-db-wrong-schema", "kilo", "session",
        lambda d: opencode_db(d, schema="CREATE TABLE `kilo_board` (x)"), 1, ["PH605"])
    add("kilo-db-data-not-json", "kilo", "session",
        lambda d: opencode_db(d, rows=[("msg_1", "{not json", [])], kilo=True), 1, ["PH605"])
    add("kilo-db-wrong-types", "kilo", "session",
        lambda d: opencode_db(d, rows=[("msg_1", '{"role":["user"],"time":{"created":[1]}}',
                                        [("prt_1", '{"type":"file","mime":7,"url":{"u":1}}')]),
                                       ("msg_2", '{"role":"assistant","error":"x","finish":[],"parentID":9}',
                                        [("prt_2", '{"type":"reasoning","text":1,"metadata":[]}'),
                                         ("prt_3", '{"type":"tool","state":{"status":"error","metadata":{"interrupted":true,"output":3}}}')])],
                              kilo=True),
        0, forbid=["PH605"])
    add("kilo-db-compaction-cycles", "kilo", "session",
        lambda d: opencode_db(d, rows=[("msg_1", '{"role":"user"}', [("prt_1", '{"type":"compaction","tail_start_id":"msg_1"}')]),
                                       ("msg_2", '{"role":"assistant","parentID":"msg_1","summary":true,"finish":"stop"}',
                                        [("prt_2", '{"type":"compaction","tail_start_id":"msg_2"}')]),
                                       ("msg_3", '{"role":"user"}', [("prt_3", '{"type":"compaction","tail_start_id":"msg_1"}')])],
                              kilo=True),
        0, forbid=["PH605"])
    add("kilo-db-no-session", "kilo", "session", lambda d: opencode_db(d, rows=None, kilo=True), 1, ["PH605"])
    add("kilo-garbage-read-as-kilo", "kilo", "session", raw(b"SQLite format 3\0" + bytes(range(256)) * 64, "kilo.db"),
        1, ["PH605"], extra=("--from", "kilo-cli"))
    add("kilo-export-cut", "kilo", "session", raw(export[:len(export) // 3].encode(), "s.json"), 1, ["PH605"],
        extra=("--from", "kilo-cli"))
    return C


OC_USER = '{"role":"user","time":{"created":1795846051458}}'


def opencode_db(d, rows=(), schema=None, checkpoint=False, kilo=False):
    """An OpenCode database in d (WAL mode; rows only in its -wal unless checkpoint): one session holding
    `rows` ((message id, data, [(part id, data)])), a small conversation by default; no session for None.
    kilo: Kilo CLI's, with its own tables (docs/opencode.md KL1)."""
    import sqlite3
    path = os.path.join(d, "opencode.db")
    live = os.path.join(d, "live")
    os.makedirs(live, exist_ok=True)
    db = sqlite3.connect(os.path.join(live, "opencode.db"), isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA wal_autocheckpoint=0")
    db.executescript(schema or (
        "CREATE TABLE session (id text PRIMARY KEY, parent_id text, directory text, title text, version text, "
        "revert text, time_created integer, time_updated integer);"
        "CREATE TABLE message (id text PRIMARY KEY, session_id text, time_created integer, data text);"
        "CREATE TABLE part (id text PRIMARY KEY, message_id text, session_id text, data text);"))
    if kilo:
        db.executescript("CREATE TABLE `kilo_board` (`root_session_id` text PRIMARY KEY);"
                         "CREATE TABLE `kilo_board_message` (`id` text PRIMARY KEY, `board_root_session_id` text);")
    if schema is None and rows is not None:
        if rows == ():
            rows = [("msg_1", OC_USER, [("prt_1", '{"type":"text","text":"hello"}')]),
                    ("msg_2", '{"role":"assistant","parentID":"msg_1","finish":"stop"}',
                     [("prt_2", '{"type":"text","text":"hi"}')])]
        db.execute("INSERT INTO session VALUES ('ses_a', NULL, '/w', 'T', '1.18.33', NULL, 1, 2)")
        for n, (mid, data, parts) in enumerate(rows):
            db.execute("INSERT INTO message VALUES (?, 'ses_a', ?, ?)", (mid, n, data))
            for pid, pdata in parts:
                db.execute("INSERT INTO part VALUES (?, ?, 'ses_a', ?)", (pid, mid, pdata))
    if checkpoint:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    for suffix in ("", "-wal"):  # as the CLI leaves them: copied while the connection is open
        if os.path.exists(os.path.join(live, "opencode.db" + suffix)):
            shutil.copyfile(os.path.join(live, "opencode.db" + suffix), path + suffix)
    db.close()
    shutil.rmtree(live)
    return path


def cut_file(path, size):
    with open(path, "r+b") as f:
        f.truncate(size)
    if os.path.exists(path + "-wal"):
        os.remove(path + "-wal")
    return path


def garble_file(path, keep=4096):
    with open(path, "r+b") as f:
        data = bytearray(f.read())
        for i in range(keep, len(data)):
            data[i] = (i * 7 + 13) & 0xFF
        f.seek(0)
        f.write(data)
    return path


def main():
    args = sys.argv[1:]
    if not args or args[0] in ("-h", "--help"):
        print(__doc__)
        return 2
    binary = os.path.abspath(args[0])
    only = None
    verbose = "-v" in args
    keep = "--keep" in args
    timing = "--no-timing" not in args
    if "--only" in args:
        only = re.compile(args[args.index("--only") + 1])
    work = tempfile.mkdtemp(prefix="pi-hydrate-hostile-")
    t0 = time.monotonic()
    S = Suite(binary, work, verbose, timing)
    try:
        by_cat = {}
        for c in cases(S):
            if only and not only.search(c.name):
                continue
            by_cat[c.cat] = by_cat.get(c.cat, 0) + 1
            S.run_case(c)
    finally:
        if not keep:
            shutil.rmtree(work, ignore_errors=True)
    wall = time.monotonic() - t0
    self_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print("# cases by category: " + ", ".join(f"{k}={v}" for k, v in by_cat.items()))
    print(f"# wall {wall:.1f} s; peak RSS: pi-hydrate {S.peak_kib // 1024} MiB ({S.peak_case}), "
          f"this script {self_kib // 1024} MiB")
    slow = sorted(S.slowest, reverse=True)[:5]
    print("# slowest commands: " + ", ".join(f"{n} {w:.1f} s" for w, n in slow))
    if not timing:
        print(f"# --no-timing: time bounds not checked (hang detector {NO_TIMING_TIMEOUT:.0f} s per command)")
    print(f"hostile: {S.passed} passed, {S.failed} failed")
    return 0 if S.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
