#!/usr/bin/env python3
"""Checks of the scenarios and their recordings that need no pi: every scenario file is valid, every
version it lists has a recording that matches it (one response per command sent, the stream's first
line, the sandbox's cwd), and together the scenarios cover every item issue 26 asks for.
Run: python3 tests/scenarios/scenarios_test.py (recording is tools/record-scenarios, by hand)."""
import glob
import json
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
import scenario_driver  # noqa: E402
from standin_script import parse_script  # noqa: E402

RECORDED = os.path.join(HERE, "recorded")


def scenarios():
    return [scenario_driver.load_scenario(p) for p in sorted(glob.glob(os.path.join(HERE, "*.json")))]


def read_jsonl(path):
    """The parsed lines of a file; an error names the file, the line and the reason."""
    out = []
    with open(path, "rb") as f:
        for number, line in enumerate(f, 1):
            try:
                out.append(json.loads(line))
            except ValueError as e:
                raise AssertionError(f"{path}:{number}: not JSON: {e}")
    return out


class RecordingTest(unittest.TestCase):
    def test_each_version_of_each_scenario_is_recorded_as_its_file_says(self):
        for scenario in scenarios():
            for version in scenario["versions"]:
                where = os.path.join(RECORDED, f"pi-{version}", scenario["name"])
                with self.subTest(where=where):
                    session = read_jsonl(os.path.join(where, "session.jsonl"))
                    events = read_jsonl(os.path.join(where, "events.jsonl"))
                    self.assertEqual(session[0]["type"], "session", f"{where}/session.jsonl:1: not a session header")
                    self.assertEqual(session[0]["cwd"], os.path.join(scenario_driver.SANDBOX_ROOT, scenario["name"], "work"))
                    if scenario["mode"] == "json":
                        # json mode prints the header first, once per run.
                        self.assertEqual(events[0]["type"], "session", f"{where}/events.jsonl:1")
                        self.assertEqual(sum(e["type"] == "session" for e in events), len(scenario["runs"]))
                    else:
                        sent = [s for s in scenario["steps"] if "wait" not in s and version in s.get("versions", [version])]
                        responses = [e for e in events if e["type"] == "response"]
                        # RPC prints no header; its first line is the first command's response, or an
                        # event that command caused before its response (session_info_changed for
                        # set_session_name, bash_execution_update for bash).
                        self.assertNotIn("session", [e["type"] for e in events], f"{where}/events.jsonl")
                        self.assertEqual([r["command"] for r in responses],
                                         [scenario_driver.step_kind(s) for s in sent])

    def test_no_recording_is_left_without_its_scenario(self):
        names = {s["name"]: s["versions"] for s in scenarios()}
        for where in glob.glob(os.path.join(RECORDED, "pi-*", "*")):
            version = os.path.basename(os.path.dirname(where))[len("pi-"):]
            self.assertIn(version, names.get(os.path.basename(where), []), f"{where}: no scenario lists it")


class CoverageTest(unittest.TestCase):
    """Every item of the issue is in some scenario, for pi 1.5.2 at least."""

    def test_every_step_kind_and_reply_kind_is_used(self):
        steps, replies, modes = set(), set(), set()
        for scenario in scenarios():
            if "1.5.2" not in scenario["versions"]:
                continue
            modes.add(scenario["mode"])
            for step in scenario.get("steps", []):
                steps.update(k for k in step if k in scenario_driver.COMMANDS)
                if step.get("images"):
                    steps.add("images")
            for reply in parse_script(scenario_driver.script_for(scenario, "1.5.2")):
                if len(reply["tool_calls"]) > 1:
                    replies.add("parallel tool calls")
                for key in ("thinking", "fail", "status", "delay", "when"):
                    if reply[key]:
                        replies.add(key)
                if reply["status"] and reply["status"] in (500, 529):
                    replies.add("retried status")
        self.assertEqual(steps, set(scenario_driver.COMMANDS) | {"images"})
        self.assertEqual(replies, {"parallel tool calls", "thinking", "fail", "status", "delay", "when", "retried status"})
        self.assertEqual(modes, {"rpc", "json"})

    def test_two_compactions_a_steer_during_a_tool_and_a_failed_tool_are_recorded(self):
        def kinds(name):
            return scenario_driver.describe(os.path.join(RECORDED, "pi-1.5.2", name))[0].split(", ")
        self.assertEqual(kinds("compact-twice").count("compaction"), 2)
        steer = kinds("steer-during-tool")
        self.assertEqual(steer[steer.index("message/toolResult") + 1], "message/user")
        self.assertIn("message/toolResult(error)", kinds("failed-tool"))
        self.assertIn("message/assistant(aborted)", kinds("abort"))
        self.assertIn("context_edit", kinds("retry-then-success"))
        self.assertIn("message/bashExecution", kinds("user-bash"))
        self.assertEqual(kinds("set-model").count("model_change"), 2)
        self.assertEqual(kinds("thinking-level").count("thinking_level_change"), 3)
        self.assertIn("session_info", kinds("session-name"))


class DriverTest(unittest.TestCase):
    def test_a_bad_scenario_is_refused_with_the_file_and_the_reason(self):
        import tempfile
        cases = (({"versions": ["1.5.2"], "steps": [{"prompt": "x", "steer": "y"}]}, "steps[0]: one of"),
                 ({"versions": ["9.9.9"], "steps": []}, "versions:"),
                 ({"versions": ["1.5.2"], "script": [{"txt": "x"}]}, "script[0]: unknown field(s) txt"),
                 ({"versions": ["1.5.2"], "mode": "json"}, "a json-mode scenario lists its runs"),
                 ({"versions": ["1.5.2"], "stpes": []}, "unknown field(s) stpes"))
        for scenario, words in cases:
            with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
                json.dump(scenario, f)
            try:
                with self.assertRaises(scenario_driver.ScenarioError) as caught:
                    scenario_driver.load_scenario(f.name)
                self.assertIn(f.name, str(caught.exception))
                self.assertIn(words, str(caught.exception))
            finally:
                os.remove(f.name)

    def test_waits_match_the_event_and_its_fields(self):
        match = scenario_driver.event_matcher({"wait": "tool_execution_start", "toolName": "bash", "note": "why"})
        self.assertTrue(match({"type": "tool_execution_start", "toolName": "bash", "toolCallId": "t"}))
        self.assertFalse(match({"type": "tool_execution_start", "toolName": "read"}))
        self.assertFalse(match({"type": "tool_execution_end", "toolName": "bash"}))
        delta = scenario_driver.event_matcher({"wait": "message_update", "delta": "text_delta"})
        self.assertTrue(delta({"type": "message_update", "assistantMessageEvent": {"type": "text_delta"}}))
        self.assertFalse(delta({"type": "message_update", "assistantMessageEvent": {"type": "thinking_delta"}}))

    def test_steps_become_rpc_commands(self):
        self.assertEqual(scenario_driver.command_of({"set_model": "standin/standin-haiku"}, HERE),
                         {"type": "set_model", "provider": "standin", "modelId": "standin-haiku"})
        self.assertEqual(scenario_driver.command_of({"compact": "Keep it short."}, HERE),
                         {"type": "compact", "customInstructions": "Keep it short."})
        self.assertEqual(scenario_driver.command_of({"compact": True}, HERE), {"type": "compact"})
        self.assertIsNone(scenario_driver.command_of({"wait": "agent_end"}, HERE))


if __name__ == "__main__":
    unittest.main(verbosity=1)
