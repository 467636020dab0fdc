"""Many resumes in one pi process: pi's RPC mode (docs/rpc.md of the installed package).

`pi --offline --session FILE --model M -p PROMPT` costs a node start and pi's start-up (one to two
seconds) for a turn that takes tens of milliseconds. PiRpc keeps one `pi --mode rpc --offline
--model M` process and, per resume, sends

  {"type": "switch_session", "sessionPath": FILE}    pi opens FILE as --session does (its cwd check,
                                                      then a fresh runtime made from the same command
                                                      line, --model included, in the session's cwd)
  {"type": "prompt", "message": PROMPT}               then waits for the run to settle

and answers in the shape of the `-p` run (a CompletedProcess): print mode's exit status and output,
from the same rule pi's print mode applies to the last message of the run (runPrintMode): an
assistant message that ended in an error or an abort gives exit status 1 and its error message on
stderr; any other gives its text blocks on stdout (and exit status 1 if it stopped for length). A
command pi refuses (switch_session or prompt answered with success false) gives exit status 1 and
pi's message on stderr, as the CLI prints the error it exits with.

A process that stops answering, exits, or answers out of turn is closed, and the resume says so
(exit status -1); the next resume starts a new process, so one bad session does not hide others.
"""
import json
import subprocess
import threading
import time


class RpcBroken(Exception):
    """The process is of no further use (it exited, timed out, or said something unexpected)."""


class PiRpc:
    def __init__(self, argv, cwd, env, settled_event, timeout):
        """argv: node, pi's CLI and its options (--mode rpc among them); settled_event: the event that
        ends a prompt's run ("agent_settled" from pi 1.5, "agent_end" before)."""
        self.argv, self.settled_event, self.timeout = argv, settled_event, timeout
        self.proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        self.records = []
        self.stderr = []
        self._cond = threading.Condition()
        self._serial = 0
        self.broken = None
        self.resumes = 0
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def _read(self):
        # Split on LF only (rpc.md: U+2028 may appear inside a record).
        for line in iter(self.proc.stdout.readline, b""):
            try:
                record = json.loads(line)
            except ValueError:
                record = {"type": "(not JSON)", "line": line[:300].decode(errors="replace")}
            with self._cond:
                self.records.append(record)
                self._cond.notify_all()
        with self._cond:
            self.records.append(None)  # end of stdout
            self._cond.notify_all()

    def _read_stderr(self):
        for line in iter(self.proc.stderr.readline, b""):
            with self._cond:
                self.stderr.append(line.decode(errors="replace"))
                del self.stderr[:-50]

    def stderr_tail(self):
        with self._cond:
            return "".join(self.stderr[-10:]).strip()[-600:]

    def _wait(self, match, start, what):
        deadline = time.monotonic() + self.timeout
        with self._cond:
            while True:
                for i in range(start, len(self.records)):
                    if self.records[i] is None:
                        raise RpcBroken(f"pi exited before {what}: {self.stderr_tail()}")
                    if match(self.records[i]):
                        return i
                left = deadline - time.monotonic()
                if left <= 0:
                    raise RpcBroken(f"no {what} within {self.timeout} s")
                self._cond.wait(min(left, 1.0))

    def _send(self, command):
        self._serial += 1
        command = dict(command, id=f"r{self._serial}")
        with self._cond:
            start = len(self.records)
        try:
            self.proc.stdin.write(json.dumps(command).encode() + b"\n")
            self.proc.stdin.flush()
        except OSError as e:
            raise RpcBroken(f"pi's stdin is closed: {e}; {self.stderr_tail()}")
        return command["id"], start

    def _command(self, command):
        """Sends a command and returns (its response, the index after which its events follow)."""
        cid, start = self._send(command)
        i = self._wait(lambda r: r.get("type") == "response" and r.get("id") == cid, start,
                       f"the response to {command['type']}")
        return self.records[i], start

    def resume(self, session, prompt):
        """Resumes `session` with `prompt`; a CompletedProcess shaped like `pi --session ... -p`'s."""
        argv = self.argv + ["(rpc)", "switch_session", session]
        if self.broken:
            return subprocess.CompletedProcess(argv, -1, "", f"pi's RPC process is broken: {self.broken}")
        self.resumes += 1
        try:
            reply, _ = self._command({"type": "switch_session", "sessionPath": session})
            if not reply.get("success"):
                return subprocess.CompletedProcess(argv, 1, "", str(reply.get("error")))
            if (reply.get("data") or {}).get("cancelled"):
                raise RpcBroken("switch_session was cancelled")
            reply, start = self._command({"type": "prompt", "message": prompt})
            if not reply.get("success"):
                return subprocess.CompletedProcess(argv, 1, "", str(reply.get("error")))
            end = self._wait(lambda r: r.get("type") == self.settled_event, start, self.settled_event)
            with self._cond:
                runs = [r for r in self.records[start:end + 1] if r.get("type") == "agent_end"]
            if not runs:
                raise RpcBroken(f"{self.settled_event} without an agent_end")
            return print_mode_result(argv, runs[-1].get("messages") or [])
        except RpcBroken as e:
            self.broken = str(e)
            self.close()
            return subprocess.CompletedProcess(argv, -1, "", f"pi's RPC process broke: {e}")

    def close(self):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def print_mode_result(argv, messages):
    """What `pi -p` prints and exits with after a run whose last message is messages[-1] (runPrintMode)."""
    last = messages[-1] if messages else None
    if not last or last.get("role") != "assistant":
        return subprocess.CompletedProcess(argv, 0, "", "")
    if last.get("stopReason") in ("error", "aborted"):
        return subprocess.CompletedProcess(argv, 1, "", last.get("errorMessage") or f"Request {last['stopReason']}")
    text = "".join(b["text"] + "\n" for b in last.get("content") or [] if b.get("type") == "text")
    if last.get("stopReason") == "length":
        return subprocess.CompletedProcess(argv, 1, text, "Response was truncated: the model reached its output token limit.")
    return subprocess.CompletedProcess(argv, 0, text, "")


class PiRpcPool:
    """Idle RPC processes by key (pi version, model); a caller takes one, resumes, and gives it back."""

    def __init__(self, start):
        self._start = start  # start(version, model) -> PiRpc
        self._idle = {}
        self._all = []
        self._lock = threading.Lock()
        self.started = 0

    def resume(self, version, model, session, prompt):
        key = (version, model)
        with self._lock:
            rpc = self._idle.get(key, []).pop() if self._idle.get(key) else None
        if rpc is None:
            rpc = self._start(version, model)
            with self._lock:
                self._all.append(rpc)
                self.started += 1
        try:
            return rpc.resume(session, prompt)
        finally:
            if not rpc.broken:
                with self._lock:
                    self._idle.setdefault(key, []).append(rpc)

    def close(self):
        for rpc in self._all:
            rpc.close()
