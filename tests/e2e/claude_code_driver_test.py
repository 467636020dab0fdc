#!/usr/bin/env python3
"""Checks the Claude Code scenarios and their recordings without running the CLI: every scenario
file loads, every one has a recording of the pinned version, and each recording holds what its
script made the stand-in answer (the replies' texts and tool calls in the transcript, a
conversation.json of accepted requests in order, the subagent files where the scenario has one).

  python3 tests/e2e/claude_code_driver_test.py
"""
import glob
import json
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import claude_code_driver as driver  # noqa: E402
from standin_script import parse_script, tool_call_id  # noqa: E402

RECORDED = os.path.join(driver.RECORDED, f"claude-code-{driver.VERSION}")
SCENARIO_PATHS = sorted(glob.glob(os.path.join(driver.SCENARIOS, "*.json")))


def records(path):
    with open(path, "rb") as f:
        return [json.loads(line) for line in f]


def conversation_blocks(transcript):
    """Every content block of the transcript's user and assistant records, in file order."""
    out = []
    for r in transcript:
        if r.get("type") in ("user", "assistant"):
            content = r["message"]["content"]
            out.extend([{"type": "text", "text": content}] if isinstance(content, str) else content)
    return out


class DriverTest(unittest.TestCase):
    def test_session_ids_are_fixed_uuids_and_cwds_encode_as_the_cli_does(self):
        self.assertEqual(driver.session_id("plain-turns"), driver.session_id("plain-turns"))
        self.assertNotEqual(driver.session_id("plain-turns"), driver.session_id("thinking"))
        self.assertEqual(driver.encoded_cwd("/tmp/pi-hydrate-agents/claude-code/tool-calls/work"),
                         "-tmp-pi-hydrate-agents-claude-code-tool-calls-work")

    def test_purpose_is_the_drivers_field_and_never_reaches_the_stand_in(self):
        scenario = {"script": ["a", {"text": "b", "purpose": "compact", "when": "x"}]}
        self.assertEqual(driver.purposes(scenario), ["main", "compact"])
        self.assertEqual(driver.standin_script(scenario), ["a", {"text": "b", "when": "x"}])
        parse_script(driver.standin_script(scenario))

    def test_only_the_system_message_try_is_an_expected_refusal(self):
        try_ = {"rule": "role", "body": {"messages": [{"role": "user", "content": "x"}, {"role": "system", "content": "e"}]}}
        other = {"rule": "role", "body": {"messages": [{"role": "tool", "content": "x"}]}}
        self.assertTrue(driver.system_message_try(try_))
        self.assertFalse(driver.system_message_try(other))
        self.assertFalse(driver.system_message_try({"rule": "orphan-tool-result", "body": try_["body"]}))

    def test_a_bad_scenario_is_refused(self):
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            for bad in ({"about": "x"}, {"about": "x", "runs": [{"prompt": "p"}], "script": [{"txt": "typo"}]},
                        {"about": "x", "runs": [{"prompt": "p"}], "extra": 1}):
                path = os.path.join(d, "bad.json")
                with open(path, "w") as f:
                    json.dump(bad, f)
                with self.assertRaises(driver.ScenarioError):
                    driver.load_scenario(path)


class RecordingTest(unittest.TestCase):
    def test_there_are_scenarios(self):
        self.assertGreaterEqual(len(SCENARIO_PATHS), 7)

    def test_each_scenario_has_a_recording_that_holds_its_script(self):
        for path in SCENARIO_PATHS:
            scenario = driver.load_scenario(path)
            with self.subTest(scenario["name"]):
                target = os.path.join(RECORDED, scenario["name"])
                transcript = records(os.path.join(target, "transcript.jsonl"))
                with open(os.path.join(target, "conversation.json")) as f:
                    conversation = json.load(f)
                sid = driver.session_id(scenario["name"])
                self.assertTrue(all(r.get("sessionId", sid) == sid for r in transcript))
                cwd = os.path.join(driver.SANDBOX_ROOT, scenario["name"], "work")
                self.assertTrue(all(r.get("cwd", cwd) == cwd for r in transcript))
                # One accepted request per scripted reply, in increasing order, each reduced.
                script = parse_script(driver.standin_script(scenario))
                self.assertEqual(len(conversation), len(script))
                self.assertEqual([r["seq"] for r in conversation], sorted(r["seq"] for r in conversation))
                for r in conversation:
                    self.assertEqual(set(r), {"seq", "path", "model", "purpose", "messages", "tools"})
                    self.assertTrue(all(isinstance(t, str) for t in r["tools"]))
                self.assertEqual(sorted(r["purpose"] for r in conversation), sorted(driver.purposes(scenario)))
                # Every prompt is in the transcript, and so is every scripted text and call of the
                # main conversation (the subagent's go to subagents/, a summary to the compact record).
                blocks = conversation_blocks(transcript)
                for sub in glob.glob(os.path.join(target, "subagents", "*.jsonl")):
                    blocks += conversation_blocks(records(sub))
                texts = "\n".join(b.get("text", "") for b in blocks if b.get("type") == "text")
                for run in scenario["runs"]:
                    self.assertIn(run["prompt"], texts)
                calls = [(b["name"], b["input"]) for b in blocks if b.get("type") == "tool_use"]
                for reply, purpose in zip(script, driver.purposes(scenario)):
                    if purpose == "compact":
                        summary = reply["text"].split("<summary>")[1].split("</summary>")[0]
                        self.assertIn(summary, texts)
                        continue
                    if reply["text"]:
                        self.assertIn(reply["text"], texts)
                    for call in reply["tool_calls"]:
                        self.assertIn((call["name"], call["arguments"]), calls)
                    if reply["thinking"]:
                        self.assertIn(reply["thinking"], [b.get("thinking") for b in blocks])

    def test_tool_results_answer_the_scripted_ids(self):
        # Tool call ids are made from the request number, so they are the same in every recording.
        transcript = records(os.path.join(RECORDED, "tool-calls", "transcript.jsonl"))
        results = [b["tool_use_id"] for b in conversation_blocks(transcript) if b.get("type") == "tool_result"]
        self.assertEqual(sorted(results), [tool_call_id(1, k) for k in range(3)])

    def test_the_subagent_writes_its_own_sidechain_file(self):
        subagents = os.path.join(RECORDED, "subagent", "subagents")
        jsonl = glob.glob(os.path.join(subagents, "agent-*.jsonl"))
        self.assertEqual(len(jsonl), 1)
        self.assertTrue(os.path.exists(jsonl[0][:-len(".jsonl")] + ".meta.json"))
        lines = [r for r in records(jsonl[0]) if r.get("type") in ("user", "assistant")]
        self.assertTrue(lines and all(r["isSidechain"] for r in lines))


if __name__ == "__main__":
    unittest.main()
