#!/usr/bin/env python3
"""Unit tests of agents.py's normalization and comparison (no pi, no pi-hydrate binary).

  python3 tests/e2e/agents_test.py
"""
import copy
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agents  # noqa: E402
from agents import compare, from_anthropic, from_responses, pi_side  # noqa: E402

REMINDER = "<system-reminder>\nToday's date is 2026-11-26.\n</system-reminder>"
PNG = "iVBORw0KGgo="


def user(text):
    return {"kind": "user", "text": text}


def assistant(text):
    return {"kind": "assistant", "text": text}


def call(name, arguments):
    return {"kind": "call", "name": name, "arguments": arguments}


def result(text, is_error=False):
    return {"kind": "result", "text": text, "isError": is_error}


# A Claude Code request: reminders, the prompt, two parallel calls, their results, a follow-up.
CC_MESSAGES = [
    {"role": "user", "content": [{"type": "text", "text": REMINDER},
                                 {"type": "text", "text": "List and count.", "cache_control": {"type": "ephemeral"}}]},
    {"role": "assistant", "content": [{"type": "thinking", "thinking": "Two calls.", "signature": "s"},
                                      {"type": "text", "text": "Running two."},
                                      {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}},
                                      {"type": "tool_use", "id": "toolu_2", "name": "Bash", "input": {"command": "false"}}]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.txt"},
                                 {"type": "tool_result", "tool_use_id": "toolu_2", "content": "Exit code 1", "is_error": True}]},
    {"role": "assistant", "content": [{"type": "text", "text": "Done."}]},
    {"role": "user", "content": "Thanks."},
]
CC_ITEMS = [user("List and count."), dict(assistant("Running two."), thinking="Two calls."),
            call("Bash", {"command": "ls"}), call("Bash", {"command": "false"}),
            result("a.txt"), result("Exit code 1", True), assistant("Done."), user("Thanks.")]


class ClaudeCodeSide(unittest.TestCase):
    def test_conversation(self):
        self.assertEqual(from_anthropic(CC_MESSAGES), CC_ITEMS)

    def test_harness_texts_left_out(self):
        for text in (REMINDER, "<local-command-caveat>Caveat</local-command-caveat>",
                     "<command-name>/compact</command-name>\n  <command-message>compact</command-message>",
                     "<local-command-stdout>Compacted </local-command-stdout>\n",
                     "[Image: source: /tmp/x/pixel.png]"):
            self.assertIsNone(agents.cc_user_text(text), text)
        self.assertEqual(agents.cc_user_text("And this one?\n"), "And this one?")
        self.assertEqual(agents.cc_user_text("Look at <system-reminder> in my text"), "Look at <system-reminder> in my text")

    def test_task_notification_kept_without_its_wrapper(self):
        note = "<task-notification>\n<task-id>a1</task-id>\n<result>Linux.</result>\n</task-notification>"
        wrapped = f"<system-reminder>\n[SYSTEM NOTIFICATION - NOT USER INPUT]\nPreamble.\n\n{note}\n</system-reminder>"
        self.assertEqual(agents.cc_user_text(wrapped), note)

    def test_images(self):
        messages = [{"role": "user", "content": [
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
            {"type": "text", "text": "And this one?\n"}, {"type": "text", "text": "[Image: source: /tmp/p.png]"}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "Read", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": [
                {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": PNG}}]}]}]
        self.assertEqual(from_anthropic(messages), [
            {"kind": "image", "mediaType": "image/png"}, user("And this one?"), call("Read", {}),
            result(""), {"kind": "image", "mediaType": "image/jpeg"}])


class CodexSide(unittest.TestCase):
    def test_conversation(self):
        items = [
            {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "You are Codex."}]},
            {"type": "message", "role": "user", "content": [
                {"type": "input_text", "text": "<environment_context>\n  <cwd>/w</cwd>\n</environment_context>"}]},
            {"type": "message", "role": "user", "content": [
                {"type": "input_text", "text": "<image name=[Image #1] path=\"p.png\">"},
                {"type": "input_image", "image_url": "data:image/png;base64," + PNG},
                {"type": "input_text", "text": "</image>"}, {"type": "input_text", "text": "What is it?"}]},
            {"type": "reasoning", "summary": [{"type": "summary_text", "text": "Look."}], "encrypted_content": "x"},
            {"type": "function_call", "name": "wait_agent", "namespace": "collaboration",
             "arguments": "{\"timeout_ms\": 5}", "call_id": "call_1"},
            {"type": "function_call_output", "call_id": "call_1",
             "output": "Chunk ID: ab\nProcess exited with code 1\nOutput:\n"},
            {"type": "agent_message", "author": "/root/h", "recipient": "/root",
             "content": [{"type": "input_text", "text": "Payload:\nHi."}]},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "A pixel."}]},
        ]
        self.assertEqual(from_responses(items), [
            user("<image name=[Image #1] path=\"p.png\">"), {"kind": "image", "mediaType": "image/png"}, user("</image>"),
            user("What is it?"),
            dict(call("wait_agent", {"timeout_ms": 5}), thinking="Look."),
            result("Chunk ID: ab\nProcess exited with code 1\nOutput:", None), user("Payload:\nHi."), assistant("A pixel.")])

    def test_is_error_not_compared_on_responses(self):
        self.assertEqual(compare([result("exit 1", None)], [result("exit 1", True)]), [])
        self.assertNotEqual(compare([result("exit 1", None)], [result("exit 2", True)]), [])


class GeminiSide(unittest.TestCase):
    def test_conversation(self):
        contents = [
            {"role": "user", "parts": [{"text": "<session_context>\nThis is the Gemini CLI.\n</session_context>"},
                                       {"text": "What is @p.png?"}, {"inlineData": {"mimeType": "image/png", "data": PNG}}]},
            {"role": "model", "parts": [{"text": "**Looking** at it.", "thought": True}, {"text": "Reading."},
                                        {"functionCall": {"id": "run_1", "name": "run_shell_command", "args": {"command": "ls"}}}]},
            {"role": "user", "parts": [{"functionResponse": {"id": "run_1", "name": "run_shell_command",
                                                             "response": {"output": "Output: p.png\nExit Code: 1"}}}]},
            {"role": "model", "parts": [{"text": "A pixel."}]},
        ]
        self.assertEqual(agents.from_gemini(contents), [  # N19: the preamble left out
            user("What is @p.png?"), {"kind": "image", "mediaType": "image/png"},
            dict(assistant("Reading."), thinking="**Looking** at it."), call("run_shell_command", {"command": "ls"}),
            result("Output: p.png\nExit Code: 1", None), assistant("A pixel.")])

    def test_a_result_sent_twice_is_a_difference(self):
        # What Gemini CLI 0.61.0 sends on resume: one call, two responses; a converted session sends one.
        once = [{"role": "model", "parts": [{"functionCall": {"name": "ls", "args": {}}}]},
                {"role": "user", "parts": [{"functionResponse": {"name": "ls", "response": {"output": "a"}}}]}]
        twice = copy.deepcopy(once)
        twice[1]["parts"].append(copy.deepcopy(twice[1]["parts"][0]))
        self.assertNotEqual(compare(agents.from_gemini(twice), agents.from_gemini(once)), [])
        self.assertEqual(compare(agents.from_gemini(once), [call("ls", {}), result("a", False)]), [])  # N20


class StandinSide(unittest.TestCase):
    def test_reply_replayed_as_the_standin_picks_it(self):
        scenario = {"script": [
            {"text": "First.", "when": "one"},
            {"summary": "<analysis>x</analysis>\n<summary>Kiwi was written.</summary>", "purpose": "compact",
             "when": "summary"},
            {"thinking": "Hm.", "text": "Second.", "when": "two"}]}
        conversation = [
            {"seq": 1, "purpose": "main", "messages": [{"role": "user", "content": "one"}]},
            {"seq": 2, "purpose": "compact", "messages": [{"role": "user", "content": "write a summary"}]},
            {"seq": 3, "purpose": "main", "messages": [
                {"role": "user", "content": "Earlier."},
                {"role": "user", "content": "Continued. Summary:\nKiwi was written.\nGo on."},
                {"role": "user", "content": [{"type": "text", "text": REMINDER}, {"type": "text", "text": "two"}]}]}]
        items, why = agents.standin_side("claude-code", conversation, scenario)
        self.assertIsNone(why)
        self.assertEqual(items, [{"kind": "summary", "text": "Continued. Summary:\nKiwi was written.\nGo on."},
                                 user("two"), dict(assistant("Second."), thinking="Hm.")])

    def test_opencode_summary_is_the_assistant_after_its_question(self):
        """N25: OpenCode sends its compaction as a question and the summary as an assistant text; the
        question is left out and the summary is the scripted text, which pi's wrapper contains."""
        scenario = {"script": [{"text": "Hello there.", "when": "Say hello."},
                               {"summary": "They greeted.", "purpose": "compaction", "when": "summary"},
                               {"text": "Goodbye.", "when": "goodbye"}]}
        conversation = [
            {"seq": 1, "purpose": "main", "messages": [{"role": "user", "content": "Say hello."}]},
            {"seq": 2, "purpose": "compaction", "messages": [{"role": "user", "content": "write a summary"}]},
            {"seq": 3, "purpose": "main", "messages": [
                {"role": "user", "content": [{"type": "text", "text": "What did we do so far?"}]},
                {"role": "assistant", "content": [{"type": "text", "text": "They greeted."}]},
                {"role": "user", "content": [{"type": "text", "text": "Now say goodbye."}]}]}]
        items, why = agents.standin_side("opencode", conversation, scenario)
        self.assertIsNone(why)
        self.assertEqual(items, [{"kind": "summary", "text": "They greeted."}, user("Now say goodbye."),
                                 assistant("Goodbye.")])
        pi = [{"kind": "summary", "text": agents.PI_COMPACTION_PREFIX + "\n\n<summary>\nThey greeted.\n</summary>"},
              user("Now say goodbye."), assistant("Goodbye.")]
        self.assertEqual(compare(items, pi), [])
        # Claude Code's summaries are user texts: an assistant text holding it is not one.
        items, _ = agents.standin_side("claude-code", conversation, scenario)
        self.assertEqual(items[0], user("What did we do so far?"))


    def test_kilo_environment_details_are_left_out(self):
        """N29: the <environment_details> text Kilo sends with each user message and never stores is
        left out of the CLI's side; any other user text, and other agents' requests, keep it."""
        env = "\n\n<environment_details>\nMessage time: 2026-11-28T08:53:27Z\nWorking directory: /w\n</environment_details>"
        scenario = {"script": [{"text": "Hello there.", "when": "Say hello."}]}
        conversation = [{"seq": 1, "purpose": "main", "messages": [
            {"role": "user", "content": [{"type": "text", "text": "\"Say hello.\""}, {"type": "text", "text": env}]}]}]
        items, why = agents.standin_side("kilo-cli", conversation, scenario)
        self.assertIsNone(why)
        self.assertEqual(items, [user("\"Say hello.\""), assistant("Hello there.")])
        items, _ = agents.standin_side("opencode", conversation, scenario)
        self.assertEqual(items[1], user(env.strip()))


# What pi_load.mjs gives for a session, and the session's messages.
PI_LLM = [
    {"role": "user", "texts": ["List and count."], "toolCallIds": [], "toolResultId": None},
    {"role": "assistant", "texts": ["Running two."], "toolCallIds": ["toolu_1", "toolu_2"], "toolResultId": None},
    {"role": "toolResult", "texts": ["a.txt"], "toolCallIds": [], "toolResultId": "toolu_1"},
    {"role": "toolResult", "texts": ["Exit code 1"], "toolCallIds": [], "toolResultId": "toolu_2"},
    {"role": "assistant", "texts": ["Done."], "toolCallIds": [], "toolResultId": None},
    {"role": "user", "texts": ["Thanks."], "toolCallIds": [], "toolResultId": None},
]
PI_STORED = [
    {"role": "user", "content": [{"type": "text", "text": "List and count."}]},
    {"role": "assistant", "content": [{"type": "thinking", "thinking": "Two calls.", "thinkingSignature": "s"},
                                      {"type": "text", "text": "Running two."},
                                      {"type": "toolCall", "id": "toolu_1", "name": "Bash", "arguments": {"command": "ls"}},
                                      {"type": "toolCall", "id": "toolu_2", "name": "Bash", "arguments": {"command": "false"}}]},
    {"role": "toolResult", "toolCallId": "toolu_1", "content": [{"type": "text", "text": "a.txt"}], "isError": False},
    {"role": "toolResult", "toolCallId": "toolu_2", "content": [{"type": "text", "text": "Exit code 1"}], "isError": True},
    {"role": "assistant", "content": [{"type": "text", "text": "Done."}]},
    {"role": "user", "content": "Thanks."},
]


class PiSide(unittest.TestCase):
    def test_details_from_the_stored_messages(self):
        self.assertEqual(pi_side(PI_LLM, PI_STORED), CC_ITEMS)

    def test_result_pi_ai_made_up(self):
        llm = PI_LLM[:2] + [PI_LLM[2], {"role": "toolResult", "texts": ["No result provided"], "toolCallIds": [],
                                         "toolResultId": "toolu_2"}]
        stored = PI_STORED[:3]
        got = pi_side(llm, stored)
        self.assertEqual(got[-1]["text"], "No result provided")
        self.assertNotIn(got[-1]["isError"], (True, False))

    def test_compaction_summary_and_images(self):
        wrapped = agents.PI_COMPACTION_PREFIX + "\n\n<summary>\nContinued. Summary:\nKiwi.\n</summary>"
        llm = [{"role": "user", "texts": [wrapped], "toolCallIds": [], "toolResultId": None},
               {"role": "user", "texts": ["See"], "toolCallIds": [], "toolResultId": None}]
        stored = [{"role": "user", "content": [{"type": "text", "text": "See"},
                                               {"type": "image", "data": PNG, "mimeType": "image/png"}]}]
        self.assertEqual(pi_side(llm, stored), [{"kind": "summary", "text": wrapped}, user("See"),
                                                {"kind": "image", "mediaType": "image/png"}])
        self.assertEqual(compare([{"kind": "summary", "text": "Continued. Summary:\nKiwi."}], pi_side(llm, stored)[:1]), [])
        self.assertNotEqual(compare([{"kind": "summary", "text": "Continued. Summary:\nPear."}], pi_side(llm, stored)[:1]), [])

    def test_branch_messages_follow_the_leaf(self):
        entries = [{"type": "session", "id": "s"},
                   {"type": "message", "id": "a", "parentId": None, "message": {"role": "user", "content": "one"}},
                   {"type": "message", "id": "b", "parentId": "a", "message": {"role": "assistant", "content": []}},
                   {"type": "message", "id": "c", "parentId": "a", "message": {"role": "user", "content": "other"}}]
        self.assertEqual([m["content"] for m in agents.branch_messages(entries, "c")], ["one", "other"])


class Comparison(unittest.TestCase):
    def test_same(self):
        self.assertEqual(compare(CC_ITEMS, copy.deepcopy(CC_ITEMS)), [])

    def test_rejects_a_dropped_tool_result(self):
        got = [it for it in CC_ITEMS if it != result("a.txt")]
        problems = compare(CC_ITEMS, got)
        self.assertEqual(len(problems), 1)
        self.assertIn("item 4", problems[0])
        self.assertIn('"text": "a.txt"', problems[0])

    def test_rejects_a_reordered_message(self):
        got = copy.deepcopy(CC_ITEMS)
        got[3], got[4] = got[4], got[3]  # a call after a result
        self.assertNotEqual(compare(CC_ITEMS, got), [])
        got = copy.deepcopy(CC_ITEMS)
        got[6], got[7] = got[7], got[6]
        self.assertNotEqual(compare(CC_ITEMS, got), [])

    def test_results_of_parallel_calls_in_any_order(self):
        got = copy.deepcopy(CC_ITEMS)
        got[4], got[5] = got[5], got[4]  # N18
        self.assertEqual(compare(CC_ITEMS, got), [])

    def test_rejects_a_changed_text(self):
        for i in (0, 1, 4, 6):
            got = copy.deepcopy(CC_ITEMS)
            got[i]["text"] += "!"
            self.assertNotEqual(compare(CC_ITEMS, got), [], i)

    def test_rejects_a_wrong_is_error(self):
        got = copy.deepcopy(CC_ITEMS)
        got[5]["isError"] = False
        problems = compare(CC_ITEMS, got)
        self.assertEqual(len(problems), 1)
        self.assertIn('Exit code 1', problems[0])

    def test_rejects_changed_arguments_name_and_media_type(self):
        got = copy.deepcopy(CC_ITEMS)
        got[2]["arguments"] = {"command": "ls -a"}
        self.assertNotEqual(compare(CC_ITEMS, got), [])
        got = copy.deepcopy(CC_ITEMS)
        got[3]["name"] = "bash"
        self.assertNotEqual(compare(CC_ITEMS, got), [])
        image = [{"kind": "image", "mediaType": "image/png"}]
        self.assertNotEqual(compare(image, [{"kind": "image", "mediaType": "image/jpeg"}]), [])

    def test_rejects_an_extra_or_missing_item_at_the_end(self):
        self.assertNotEqual(compare(CC_ITEMS, CC_ITEMS + [assistant("More.")]), [])
        self.assertNotEqual(compare(CC_ITEMS, CC_ITEMS[:-1]), [])

    def test_thinking_compared_only_where_both_show_it(self):
        got = copy.deepcopy(CC_ITEMS)
        del got[1]["thinking"]
        self.assertEqual(compare(CC_ITEMS, got), [])
        got[1]["thinking"] = "Three calls."
        problems = compare(CC_ITEMS, got)
        self.assertEqual(len(problems), 1)
        self.assertIn("thinking", problems[0])

    def test_allowed_differences(self):
        got = [it for it in CC_ITEMS if it != result("a.txt")]
        allowed = [{"side": "standin", "item": result("a.txt"), "why": "a known loss"}]
        self.assertEqual(compare(CC_ITEMS, got, allowed), [])
        problems = compare(CC_ITEMS, copy.deepcopy(CC_ITEMS), allowed[:1] + [
            {"side": "pi", "item": user("Never sent."), "why": "stale"}])
        self.assertTrue(any("not seen any more" in p for p in problems))


class QwenCodeSide(unittest.TestCase):
    """Chat Completions as Qwen Code sends it (N21-N24)."""

    MESSAGES = [
        {"role": "system", "content": "You are Qwen Code."},
        {"role": "user", "content": [{"type": "text", "text": REMINDER}, {"type": "text", "text": "Look."}]},
        {"role": "assistant", "content": "Reading.", "reasoning_content": "Two calls.",
         "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": "{\"p\": 1}"}},
                        {"id": "call_2", "type": "function", "function": {"name": "run_shell_command", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "Image overview: 1x1"},
        {"role": "tool", "tool_call_id": "call_2", "content": [{"type": "text", "text": "Exit Code: 1"}]},
        {"role": "user", "content": [{"type": "text", "text": "(attached media from previous tool call)"},
                                     {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64," + PNG}}]},
        {"role": "assistant", "content": None, "tool_calls": []},
        {"role": "user", "content": "Thanks."},
    ]

    def test_conversation(self):
        self.assertEqual(agents.from_chat(self.MESSAGES), [
            user("Look."), dict(assistant("Reading."), thinking="Two calls."), call("read_file", {"p": 1}),
            call("run_shell_command", {}), result("Image overview: 1x1", None), result("Exit Code: 1", None),
            {"kind": "image", "mediaType": "image/jpeg"}, user("Thanks.")])

    def test_a_users_own_text_is_kept(self):
        messages = [{"role": "user", "content": [{"type": "text", "text": "Look at <system-reminder> in my text"}]}]
        self.assertEqual(agents.from_chat(messages), [user("Look at <system-reminder> in my text")])

    def test_state_snapshot_is_the_summary(self):
        self.assertEqual(agents.summary_core("<analysis>x</analysis>\n<state_snapshot>\nS.\n</state_snapshot>"), "S.")


if __name__ == "__main__":
    unittest.main()
