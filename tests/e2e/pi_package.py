#!/usr/bin/env python3
"""The pi package (packaging/npm/pi-hydrate, docs/pi-package.md) in the real pi, offline.

tools/npm-pack.sh packs the package around the static pi-hydrate; npm installs the tarball offline
into a temporary prefix (`npm install -g --offline --prefix`), and `pi install` of that folder adds it
to an isolated agent dir whose models.json points the anthropic provider at the stand-in
(standin.py). Then, for pi 1.6.0 and 1.5.2, one RPC process (pi_rpc.py) in an empty working
directory is sent:

  /hydrate BAD        a file no format reads: an error notification with pi-hydrate's diagnostic,
                      the same session file as before, and no file added under the agent dir
  /hydrate FILE       a recorded Claude Code transcript, then examples/thread.json: an info
                      notification with the summary, a switch to a new session file stored in the
                      agent dir's folder for the working directory; then a prompt, and the request
                      the stand-in receives must hold that conversation: what pi itself loads from
                      the written file (tests/conformance/pi_load.mjs) and then the prompt, every user
                      text of the source in order, and each of its answered tool calls paired with its
                      result (the stand-in rejects an unpaired request on its own)
  /hydrate-context    pi-hydrate context of the current session, as an info notification

The checks are shown to fail: the thread's request checked against the transcript's source and
load must be rejected.

  pi_package.py --pi-dest DIR --static-binary FILE [--keep DIR]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "conformance"))
import conformance  # noqa: E402
import sent  # noqa: E402
from pi_rpc import PiRpc, RpcBroken  # noqa: E402
from resume import PI_VERSIONS, first_difference, models_json  # noqa: E402
from standin import DEFAULT_REPLY, StandIn  # noqa: E402

VERSIONS = ("1.6.0", "1.5.2")
MODEL = "anthropic/claude-sonnet-4-5"
TIMEOUT = 60
TRANSCRIPT = os.path.join(ROOT, "tests", "agents", "recorded", "claude-code-2.1.331", "tool-calls", "transcript.jsonl")
THREAD = os.path.join(ROOT, "examples", "thread.json")


# ---------------------------------------------------------------- what the source holds

def source_facts(path):
    """(the user's own texts in order, the ids of tool calls that have a result) of a Claude Code
    transcript or a thread export, read from the file itself, not through pi-hydrate."""
    texts, calls, answered = [], [], set()
    if path.endswith(".json"):
        for e in json.load(open(path))["entries"]:
            message = (e.get("data") or {}).get("message") or {}
            if e.get("kind") == "chat" and e.get("role") == "user":
                texts.append(e["text"])
            elif e.get("kind") == "pi.assistant":
                calls += [b["id"] for b in message.get("content") or [] if b.get("type") == "toolCall"]
            elif e.get("kind") == "pi.tool_result":
                answered.add(message.get("toolCallId"))
    else:
        for line in open(path):
            r = json.loads(line)
            message = r.get("message") or {}
            content = message.get("content")
            if r.get("type") == "user" and not r.get("isMeta") and isinstance(content, str):
                texts.append(content)
            elif r.get("type") in ("user", "assistant") and isinstance(content, list):
                for b in content:
                    if b.get("type") == "tool_use":
                        calls.append(b["id"])
                    elif b.get("type") == "tool_result":
                        answered.add(b.get("tool_use_id"))
    return texts, [c for c in calls if c in answered]


def holds_source(conversation, facts):
    """Problems if the sent conversation (sent.conversation's messages) lacks the source's user texts
    in order, or one of its answered tool calls, or a call's result right after the assistant
    message that made it (after that message's other results)."""
    texts, calls = facts
    problems = []
    users = [t for m in conversation if m["role"] == "user" for t in m["texts"]]
    i = 0
    for t in users:
        if i < len(texts) and t.strip() == texts[i].strip():
            i += 1
    if i < len(texts):
        problems.append(f"the request lacks the source's user text {json.dumps(texts[i])[:120]} (in order)")
    for call in calls:
        at = [k for k, m in enumerate(conversation) if m["role"] == "assistant" and call in m["toolCallIds"]]
        if not at:
            problems.append(f"the request lacks the tool call {call}")
            continue
        k = at[0] + 1
        results = []
        while k < len(conversation) and conversation[k]["role"] == "toolResult":
            results.append(conversation[k]["toolResultId"])
            k += 1
        if call not in results:
            problems.append(f"the tool call {call} is not followed by its result (results after it: {results})")
    return problems


def sent_as_loaded(request, loaded, prompt, session):
    """Problems if the request does not hold what pi loads from `session` and then `prompt`."""
    expected = conformance.summarize(loaded) + [{"role": "user", "texts": [prompt], "toolCallIds": [], "toolResultId": None}]
    api = request["api"]
    got = conformance.summarize(sent.conversation(api, request["body"]))
    got = sent.without_thinking_sent_as_text(expected, got, sent.thinking_texts(session))
    diff = first_difference(sent.comparable(api, expected), sent.comparable(api, got))
    return [f"what pi sent differs from what it loads from {os.path.basename(session)}: {diff}"] if diff else []


# ---------------------------------------------------------------- pi

class Pi:
    """One pi version in RPC mode with the package installed in its own agent dir."""

    def __init__(self, args, version, package_dir, standin, tmp):
        self.args, self.version, self.standin = args, version, standin
        self.node = os.path.join(args.pi_dest, "node", "bin", "node")
        self.cli = os.path.join(args.pi_dest, f"pi-{version}", "node_modules", "@earendil-works", "pi-coding-agent",
                                PI_VERSIONS[version])
        box = os.path.join(tmp, f"pi-{version}")
        self.home = os.path.join(box, "home")
        self.agent = os.path.join(self.home, "agent")
        self.work = os.path.join(box, "work")
        os.makedirs(self.agent)
        os.makedirs(self.work)
        with open(os.path.join(self.agent, "models.json"), "w") as f:
            json.dump(models_json(standin.port), f, indent=1)
        # PATH without any pi-hydrate: the extension must run the binary of its own package.
        self.env = {"PATH": "/usr/bin:/bin", "HOME": self.home, "PI_CODING_AGENT_DIR": self.agent,
                    "ANTHROPIC_API_KEY": "standin", "PI_OFFLINE": "1", "NO_COLOR": "1", "LANG": "C.UTF-8"}
        installed = subprocess.run([self.node, self.cli, "install", package_dir], cwd=self.work, env=self.env,
                                   capture_output=True, text=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL)
        if installed.returncode != 0:
            raise RuntimeError(f"pi {version}: pi install {package_dir} exited {installed.returncode}: "
                               f"{(installed.stderr or installed.stdout)[-400:]}")
        self.rpc = PiRpc([self.node, self.cli, "--mode", "rpc", "--offline", "--model", MODEL], self.work, self.env,
                         "agent_settled", TIMEOUT)
        self.transcript = []  # (sent, received) of the RPC exchanges, for --keep and the report

    def command(self, command):
        reply, start = self.rpc._command(command)
        with self.rpc._cond:
            end = self.rpc.records.index(reply, start)
            around = self.rpc.records[start:end + 1]
        self.transcript.append({"sent": command, "received": around})
        return reply, around

    def session_file(self):
        reply, _ = self.command({"type": "get_state"})
        return (reply.get("data") or {}).get("sessionFile")

    def slash(self, text):
        """Sends `/command ...` as a prompt; (the reply, the notifications before it)."""
        reply, around = self.command({"type": "prompt", "message": text})
        notes = [r for r in around if r.get("type") == "extension_ui_request" and r.get("method") == "notify"]
        return reply, notes

    def prompt(self, text):
        """Sends a prompt and waits for the run to settle."""
        reply, start = self.rpc._command({"type": "prompt", "message": text})
        if not reply.get("success"):
            return reply
        self.rpc._wait(lambda r: r.get("type") == "agent_settled", start, "agent_settled")
        self.transcript.append({"sent": {"type": "prompt", "message": text}, "received": [reply, "...", {"type": "agent_settled"}]})
        return reply

    def files(self):
        """Every file under the agent dir, with its size."""
        out = {}
        for folder, _, names in os.walk(self.agent):
            for n in names:
                p = os.path.join(folder, n)
                out[p] = os.path.getsize(p)
        return out

    def load(self, session):
        """What this pi loads from `session` (tests/conformance/pi_load.mjs): its LLM messages."""
        loader = os.path.join(ROOT, "tests", "conformance", "pi_load.mjs")
        out = subprocess.run([self.node, loader, "--pi", os.path.join(self.args.pi_dest, f"pi-{self.version}"),
                              "--cwd", self.work, "--full", session], cwd=self.work, env=self.env,
                             capture_output=True, text=True, timeout=TIMEOUT)
        return json.loads(out.stdout)["llm"]

    def close(self):
        self.rpc.close()


def session_folder(agent, cwd):
    return os.path.join(agent, "sessions", "--" + cwd[1:].replace("/", "-") + "--")


def check_version(args, version, package_dir, standin, tmp, report):
    """Problems of one pi version; `report` gets what the closing note shows."""
    pi = Pi(args, version, package_dir, standin, tmp)
    problems = []
    try:
        # A file no format reads: an error notification, no switch, nothing written.
        bad = os.path.join(tmp, "not-a-conversation.jsonl")
        with open(bad, "w") as f:
            f.write("this is not a conversation\n")
        before_file, before = pi.session_file(), pi.files()
        reply, notes = pi.slash(f"/hydrate {bad}")
        errors = [n for n in notes if n.get("notifyType") == "error"]
        if not reply.get("success") or not errors:
            problems.append(f"/hydrate BAD: no error notification (reply {reply}, notifications {notes})")
        elif "PH" not in errors[0]["message"] or bad not in errors[0]["message"]:
            problems.append(f"/hydrate BAD: the notification lacks pi-hydrate's diagnostic: {errors[0]['message'][:300]}")
        if pi.session_file() != before_file:
            problems.append("/hydrate BAD switched the session")
        if pi.files() != before:
            problems.append(f"/hydrate BAD wrote under the agent dir: {sorted(set(pi.files()) - set(before))}")

        requests = {}
        for serial, source in enumerate((TRANSCRIPT, THREAD), 1):
            name = os.path.relpath(source, ROOT)
            previous = pi.session_file()
            reply, notes = pi.slash(f"/hydrate {source}")
            session = pi.session_file()
            infos = [n for n in notes if n.get("notifyType") == "info"]
            if not reply.get("success") or not infos:
                problems.append(f"/hydrate {name}: no info notification (reply {reply}, notifications {notes})")
                continue
            if session == previous or not session or not os.path.isfile(session):
                problems.append(f"/hydrate {name}: no switch to a written session ({previous} -> {session})")
                continue
            if os.path.dirname(session) != session_folder(pi.agent, pi.work):
                problems.append(f"/hydrate {name}: stored in {os.path.dirname(session)}, not pi's folder for the cwd")
            if session not in infos[0]["message"] or len(infos[0]["message"].splitlines()) < 2:
                problems.append(f"/hydrate {name}: the notification lacks the path or the summary: {infos[0]['message'][:300]}")
            loaded = pi.load(session)  # before the prompt, which pi appends to the file
            token = f"[pkg {version} {serial}]"
            prompt = f"Go on. {token}"
            pi.prompt(prompt)
            mine = [r for r in standin.requests() if token in json.dumps(r.get("body"))]
            if not mine:
                problems.append(f"{name}: the stand-in received no request with {token}")
                continue
            request = mine[-1]
            if request["status"] != 200:
                problems.append(f"{name}: the stand-in rejected the request: [{request['rule']}] {request['error']}")
            conversation = sent.conversation(request["api"], request["body"])
            problems += [f"{name}: {p}" for p in sent_as_loaded(request, loaded, prompt, session)]
            problems += [f"{name}: {p}" for p in holds_source(conversation, source_facts(source))]
            requests[source] = (request, loaded, prompt, session, conversation)
            report.append(f"pi {version} /hydrate {name}: {infos[0]['message'].splitlines()[0]}; "
                          f"request {request['seq']}: HTTP {request['status']}, {len(conversation)} messages "
                          f"({', '.join(m['role'] for m in conversation)})")
            if serial == 1:
                report.append(f"  notification: {json.dumps(infos[0]['message'])[:700]}")

        # The checks can fail: the thread's request is not the transcript's conversation.
        if TRANSCRIPT in requests and THREAD in requests:
            request, _, prompt, session, conversation = requests[THREAD]
            _, transcript_loaded, _, _, _ = requests[TRANSCRIPT]
            if not holds_source(conversation, source_facts(TRANSCRIPT)):
                problems.append("holds_source accepted the thread's request as the transcript's conversation")
            if not sent_as_loaded(request, transcript_loaded, prompt, session):
                problems.append("sent_as_loaded accepted the thread's request as the transcript's load")

        reply, notes = pi.slash("/hydrate-context")
        session = pi.session_file()
        shown = [n for n in notes if n.get("notifyType") == "info"]
        if not shown or f"{session}: pi " not in shown[0]["message"] or "sends" not in shown[0]["message"]:
            problems.append(f"/hydrate-context: no context shown for {session}: {notes}")
    except (RpcBroken, ValueError, KeyError) as e:
        problems.append(f"pi {version}: {type(e).__name__}: {e}")
    finally:
        pi.close()
        if args.keep:
            with open(os.path.join(tmp, f"rpc-{version}.json"), "w") as f:
                json.dump(pi.transcript, f, indent=1)
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pi-dest", required=True, help="where tests/conformance/install_pi.sh installed node and pi")
    parser.add_argument("--static-binary", required=True, help="the static pi-hydrate the package carries")
    parser.add_argument("--keep", metavar="DIR", help="keep the sandboxes, the RPC exchanges and the requests in DIR")
    args = parser.parse_args()
    args.pi_dest, args.static_binary = os.path.abspath(args.pi_dest), os.path.abspath(args.static_binary)
    for version in VERSIONS:
        if not os.path.isdir(os.path.join(args.pi_dest, f"pi-{version}")):
            print(f"pi_package: FAILED: pi {version} is not installed in {args.pi_dest}")
            return 1
    if not shutil.which("npm"):
        print("pi_package: npm not found: skipped")
        return 77
    tmp = args.keep or tempfile.mkdtemp(prefix="pihydrate-pi-package-")
    os.makedirs(tmp, exist_ok=True)
    try:
        npm_env = dict(os.environ, npm_config_cache=os.path.join(tmp, "npm-cache"), npm_config_offline="true",
                       npm_config_userconfig=os.path.join(tmp, "npmrc"), npm_config_update_notifier="false",
                       npm_config_fund="false", npm_config_audit="false")
        packed = subprocess.run(["bash", os.path.join(ROOT, "tools", "npm-pack.sh"), os.path.join(tmp, "out"),
                                 "--binary", args.static_binary], capture_output=True, text=True, env=npm_env)
        if packed.returncode != 0:
            print(f"pi_package: FAILED: npm-pack.sh: {packed.stderr[-400:]}")
            return 1
        tarball = packed.stdout.strip().splitlines()[-1]
        prefix = os.path.join(tmp, "prefix")
        installed = subprocess.run(["npm", "install", "-g", "--prefix", prefix, tarball], capture_output=True,
                                   text=True, env=npm_env)
        package_dir = os.path.join(prefix, "lib", "node_modules", "pi-hydrate")
        if installed.returncode != 0 or not os.path.isdir(package_dir):
            print(f"pi_package: FAILED: npm install -g --offline {tarball}: {installed.stderr[-400:]}")
            return 1
        problems, report = [], []
        with StandIn(os.path.join(tmp, "requests") if args.keep else None) as standin:
            for version in VERSIONS:
                found = check_version(args, version, package_dir, standin, tmp, report)
                print(f"pi {version}: {'ok' if not found else f'{len(found)} problems'}")
                problems += [f"FAIL [pi {version}] {p}" for p in found]
        for line in report:
            print(line)
        for p in problems:
            print(p)
        print(f"pi_package: {len(VERSIONS)} pi versions, {len(problems)} problems")
        return 1 if problems else 0
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
