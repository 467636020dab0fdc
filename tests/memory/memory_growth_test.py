#!/usr/bin/env python3
"""Memory that grows with the input, caught: each command runs on a generated
input of SIZE and of twice SIZE, and its peak RSS may grow by no more than the
bound docs/performance.md states for it ("Memory bounds"):

    growth <= SLACK + per_entry * (entries added) + per_byte * (bytes added)

A streaming job has per_entry = per_byte = 0: doubling the input must not
move its peak by more than SLACK. A job that keeps an index of the entries
(validate, tree, a session's hydration) may grow by its stated bytes per
entry. Nothing here is timed. The inputs are generated (tools/gen_corpus.py),
never committed.

  memory_growth_test.py PI_HYDRATE [--size 8M] [--only NAME]
  memory_growth_test.py --self-test   the checker flags a job that holds its input
"""
import argparse
import os
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
GEN = ROOT / "tools" / "gen_corpus.py"
MIB = 1 << 20
SLACK = 4 * MIB  # allocator and page-cache noise between two runs of one binary

# name, generator kind, command (FILE and OUT are filled in), bytes per entry, bytes per input byte.
# Keep in step with docs/performance.md, "Memory bounds".
JOBS = [
    ("validate session", "session", ["validate", "--no-cwd-check", "FILE"], 256, 0),
    ("validate small entries", "session-small", ["validate", "--no-cwd-check", "FILE"], 256, 0),
    ("validate big entries", "session-big", ["validate", "--no-cwd-check", "FILE"], 256, 0),
    ("validate stdin", "session", ["validate", "--no-cwd-check", "-"], 256, 0),
    ("tree small entries", "session-small", ["tree", "FILE"], 256, 0),
    ("tree v1", "session-v1", ["tree", "FILE"], 256, 0),
    ("context session", "session", ["context", "FILE"], 256, 0),
    ("context small entries", "session-small", ["context", "FILE"], 256, 0),
    ("context v1", "session-v1", ["context", "FILE"], 256, 0),
    ("--session pi", "session", ["--session", "FILE", "--cwd", "/tmp", "-o", "OUT"], 384, 0),
    ("--session small entries", "session-small", ["--session", "FILE", "--cwd", "/tmp", "-o", "OUT"], 384, 0),
    ("--session big entries", "session-big", ["--session", "FILE", "--cwd", "/tmp", "-o", "OUT"], 384, 0),
    ("--session v1", "session-v1", ["--session", "FILE", "--cwd", "/tmp", "-o", "OUT"], 384, 0),
    ("--session codex", "codex", ["--session", "FILE", "--cwd", "/tmp", "-o", "OUT"], 384, 0),
    ("--thread", "thread", ["--thread", "FILE", "--cwd", "/tmp", "-o", "OUT"], 384, 0),
    ("--thread chunk-heavy", "thread-chunky", ["--thread", "FILE", "--cwd", "/tmp", "-o", "OUT"], 384, 0),
    ("--thread raw entries", "thread-raw", ["--thread", "FILE", "--cwd", "/tmp", "-o", "OUT"], 768, 0),
    ("--session claude-code", "claude-code", ["--session", "FILE", "--cwd", "/tmp", "-o", "OUT"], 384, 0),
    ("--session gemini-cli", "gemini-cli", ["--session", "FILE", "--cwd", "/tmp", "-o", "OUT"], 768, 0),
    ("--session qwen-code", "qwen-code", ["--session", "FILE", "--cwd", "/tmp", "-o", "OUT"], 640, 0),
    ("--events", "events", ["--events", "FILE", "--cwd", "/tmp", "-o", "OUT"], 512, 0),
    # Three stderr lines after each event: skipped lines are counted, not held (128 B a line of either).
    ("--events noisy", "events-noisy", ["--events", "FILE", "--cwd", "/tmp", "-o", "OUT"], 128, 0),
    ("validate codex", "codex", ["validate", "FILE"], 384, 0),
    ("context codex", "codex", ["context", "FILE"], 384, 0),
    ("tree claude-code", "claude-code", ["tree", "FILE"], 640, 0),
    ("context stdin", "session-small", ["context", "-"], 256, 0),
]
# A job whose bound per entry is large beside its generated input's bytes per
# entry runs on inputs this many times SIZE: at SIZE, an event capture's 512
# B per event would leave room for holding the capture itself (about 660 B an
# event), which must show as growth over the bound.
SCALE = {"--events": 4, "--events noisy": 4}


def parse_size(text):
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(text[:-1]) * mult[text[-1].upper()] if text[-1].upper() in mult else int(text)


def peak_rss(argv, stdin_path=None):
    """The peak RSS in bytes of one run of argv (its own, from wait4), and its exit status."""
    stdin = open(stdin_path, "rb") if stdin_path else subprocess.DEVNULL
    try:
        proc = subprocess.Popen(argv, stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
    finally:
        if stdin_path:
            stdin.close()
    return usage.ru_maxrss * 1024, proc.returncode


def entries(path):
    with open(path, "rb") as f:
        return sum(1 for line in f if line.strip())


class Input:
    def __init__(self, path):
        self.path = path
        self.size = os.path.getsize(path)
        self.entries = entries(path)


def allowed_growth(small, big, per_entry, per_byte):
    return SLACK + per_entry * (big.entries - small.entries) + per_byte * (big.size - small.size)


def measure(argv_of, small, big):
    """Peak RSS on each input: the lower of two runs, so one noisy run does not decide."""
    peaks = []
    for inp in (small, big):
        runs = []
        for _ in range(2):
            argv, stdin_path = argv_of(inp.path)
            rss, code = peak_rss(argv, stdin_path)
            if code not in (0, 1):
                raise RuntimeError(f"{' '.join(argv)} exited with {code}")
            runs.append(rss)
        peaks.append(min(runs))
    return peaks


def check(name, argv_of, small, big, per_entry, per_byte):
    """Returns (ok, line)."""
    p_small, p_big = measure(argv_of, small, big)
    grew = p_big - p_small
    limit = allowed_growth(small, big, per_entry, per_byte)
    ok = grew <= limit
    line = (f"{'ok  ' if ok else 'FAIL'} {name:<26} peak {p_small / MIB:7.1f} -> {p_big / MIB:7.1f} MiB"
            f"  grew {grew / MIB:6.1f} MiB, bound {limit / MIB:6.1f} MiB"
            f" ({per_entry} B/entry x {big.entries - small.entries} entries added"
            + (f", {per_byte} B/byte" if per_byte else "") + ")")
    return ok, line


def generate(kind, size, seed, folder):
    path = folder / f"{kind}-{size}.jsonl"
    if not path.exists():
        subprocess.run([sys.executable, str(GEN), "--kind", kind, "--size", str(size), "--seed", str(seed),
                        "-o", str(path)], check=True)
    return Input(path)


def self_test(folder):
    """The checker must flag a job that holds its whole input, and pass one that streams."""
    small = generate("session", 8 * MIB, 1, folder)
    big = generate("session", 16 * MIB, 1, folder)
    holder = lambda path: ([sys.executable, "-c", f"data = open({str(path)!r}, 'rb').read(); print(len(data))"], None)
    streamer = lambda path: ([sys.executable, "-c",
                              f"f = open({str(path)!r}, 'rb')\nwhile f.read(65536): pass"], None)
    failed = 0
    ok, line = check("holds its input", holder, small, big, 0, 0)
    print(("ok   the checker flags it: " if not ok else "FAIL the checker passed it: ") + line)
    failed += ok
    ok, line = check("streams", streamer, small, big, 0, 0)
    print(("ok   the checker passes it: " if ok else "FAIL the checker flagged it: ") + line)
    failed += not ok
    return failed


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("binary", nargs="?")
    ap.add_argument("--size", default="8M", help="the smaller input's size (the other is twice that)")
    ap.add_argument("--only", help="run the jobs whose name holds this text")
    ap.add_argument("--self-test", action="store_true")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="pi-hydrate-memory-") as tmp:
        folder = pathlib.Path(tmp)
        if a.self_test:
            return 1 if self_test(folder) else 0
        if not a.binary:
            ap.error("the pi-hydrate binary is required")
        size = parse_size(a.size)
        out = folder / "out.jsonl"
        failed = 0
        for name, kind, args, per_entry, per_byte in JOBS:
            if a.only and a.only not in name:
                continue
            scale = SCALE.get(name, 1)
            small, big = generate(kind, scale * size, 1, folder), generate(kind, 2 * scale * size, 1, folder)

            def argv_of(path, args=args):
                if out.exists():
                    out.unlink()
                argv = [a.binary] + [str(path) if x == "FILE" else str(out) if x == "OUT" else x for x in args]
                return argv, (path if "-" in args else None)

            ok, line = check(name, argv_of, small, big, per_entry, per_byte)
            print(line, flush=True)
            failed += not ok
        print(f"{failed} job(s) over their bound" if failed else "every job within its bound")
        return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
