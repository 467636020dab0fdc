#!/usr/bin/env python3
"""Tests of the stand-in itself: each rule rejects a request that breaks it and lets a good one
through, over HTTP the errors come in each API's own body, and the comparison of what pi sent with
what it loaded can fail. Run: python3 tests/e2e/standin_test.py"""
import base64
import copy
import http.client
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sent  # noqa: E402
import standin as standin_module  # noqa: E402
from standin import DEFAULT_REPLY, StandIn, Violation, check_anthropic, check_chat, check_responses  # noqa: E402
from standin_script import ScriptError, parse_script  # noqa: E402

PNG_1PX = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="

GOOD_ANTHROPIC = {"model": "m", "stream": True, "messages": [
    {"role": "user", "content": [{"type": "text", "text": "List the files."},
                                 {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG_1PX}}]},
    {"role": "assistant", "content": [{"type": "thinking", "thinking": "ls will do", "signature": "sig"},
                                      {"type": "tool_use", "id": "toolu_01A", "name": "bash", "input": {}},
                                      {"type": "tool_use", "id": "toolu_01B", "name": "bash", "input": {}}]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01A", "content": "a.txt"},
                                 {"type": "tool_result", "tool_use_id": "toolu_01B", "content": [{"type": "text", "text": "b.txt"}]}]},
    {"role": "assistant", "content": [{"type": "text", "text": "Two files."}]},
    {"role": "user", "content": "Go on."},
    {"role": "assistant", "content": []},
]}

GOOD_CHAT = {"model": "m", "stream": True, "messages": [
    {"role": "system", "content": "You are pi."},
    {"role": "user", "content": [{"type": "text", "text": "List the files."},
                                 {"type": "image_url", "image_url": {"url": "data:image/png;base64," + PNG_1PX}}]},
    {"role": "assistant", "content": None, "tool_calls": [{"id": "call_a", "type": "function", "function": {"name": "bash", "arguments": "{}"}},
                                                          {"id": "call_b", "type": "function", "function": {"name": "bash", "arguments": "{}"}}]},
    {"role": "tool", "tool_call_id": "call_a", "content": "a.txt"},
    {"role": "tool", "tool_call_id": "call_b", "content": "b.txt"},
    {"role": "assistant", "content": "Two files."},
    {"role": "user", "content": "Go on."},
]}

GOOD_RESPONSES = {"model": "m", "stream": True, "input": [
    {"role": "developer", "content": "You are pi."},
    {"role": "user", "content": [{"type": "input_text", "text": "List the files."},
                                 {"type": "input_image", "image_url": "data:image/png;base64," + PNG_1PX}]},
    {"type": "function_call", "call_id": "call_a", "name": "bash", "arguments": "{}"},
    {"type": "function_call_output", "call_id": "call_a", "output": "a.txt"},
    {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "One file."}]},
    {"role": "user", "content": [{"type": "input_text", "text": "Go on."}]},
]}


def broken(good, edit):
    body = copy.deepcopy(good)
    edit(body)
    return body


class RuleTest(unittest.TestCase):
    def assertBreaks(self, check, body, rule):
        with self.assertRaises(Violation) as caught:
            check(body)
        self.assertEqual(caught.exception.rule, rule, caught.exception.message)

    def test_good_requests_pass(self):
        check_anthropic(GOOD_ANTHROPIC)
        check_chat(GOOD_CHAT)
        check_responses(GOOD_RESPONSES)

    # Anthropic Messages
    def test_anthropic_tool_use_needs_a_result_in_the_next_message(self):
        self.assertBreaks(check_anthropic, broken(GOOD_ANTHROPIC, lambda b: b["messages"][2]["content"].pop()), "tool-use-without-result")
        self.assertBreaks(check_anthropic, broken(GOOD_ANTHROPIC, lambda b: b["messages"].__setitem__(slice(2, 3), [])), "tool-use-without-result")

    def test_anthropic_tool_result_must_name_a_call_of_the_message_before(self):
        def orphan(b):
            b["messages"][2]["content"].append({"type": "tool_result", "tool_use_id": "toolu_01Gone", "content": "x"})
        self.assertBreaks(check_anthropic, broken(GOOD_ANTHROPIC, orphan), "orphan-tool-result")

    def test_anthropic_result_two_messages_later_is_an_orphan(self):
        def later(b):
            b["messages"].insert(2, {"role": "user", "content": "wait"})
            b["messages"].insert(2, {"role": "assistant", "content": "ok"})
        body = broken(GOOD_ANTHROPIC, later)
        self.assertBreaks(check_anthropic, body, "tool-use-without-result")
        body["messages"][1]["content"] = [{"type": "text", "text": "no calls"}]
        self.assertBreaks(check_anthropic, body, "orphan-tool-result")

    def test_anthropic_duplicate_tool_result(self):
        self.assertBreaks(check_anthropic, broken(GOOD_ANTHROPIC, lambda b: b["messages"][2]["content"].append(
            {"type": "tool_result", "tool_use_id": "toolu_01A", "content": "again"})), "duplicate-tool-result")

    def test_anthropic_tool_use_id_pattern(self):
        def bad_id(b):
            b["messages"][1]["content"][1]["id"] = "functions.bash:0"
            b["messages"][2]["content"][0]["tool_use_id"] = "functions.bash:0"
        self.assertBreaks(check_anthropic, broken(GOOD_ANTHROPIC, bad_id), "tool-use-id")

    def test_anthropic_tool_use_ids_are_unique_in_the_request(self):
        def repeat(b):
            b["messages"][4:5] = [
                {"role": "user", "content": "Once more."},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_01A", "name": "bash", "input": {}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01A", "content": "a.txt"}]}]
        self.assertBreaks(check_anthropic, broken(GOOD_ANTHROPIC, repeat), "tool-use-id-unique")

    def test_anthropic_empty_text_block(self):
        self.assertBreaks(check_anthropic, broken(GOOD_ANTHROPIC, lambda b: b["messages"][3]["content"][0].update(text="")), "empty-text")
        self.assertBreaks(check_anthropic, broken(GOOD_ANTHROPIC, lambda b: b["messages"][3]["content"][0].update(text=" \n")), "empty-text")
        self.assertBreaks(check_anthropic, broken(GOOD_ANTHROPIC, lambda b: b["messages"][2]["content"][1].update(
            content=[{"type": "text", "text": ""}])), "empty-text")

    def test_anthropic_empty_message_only_as_final_assistant(self):
        self.assertBreaks(check_anthropic, broken(GOOD_ANTHROPIC, lambda b: b["messages"][4].update(content=[])), "empty-message")
        self.assertBreaks(check_anthropic, broken(GOOD_ANTHROPIC, lambda b: b["messages"][3].update(content=[])), "empty-message")
        check_anthropic(GOOD_ANTHROPIC)  # the last message: an empty assistant (a prefill) is allowed

    def test_anthropic_first_message_is_user(self):
        self.assertBreaks(check_anthropic, broken(GOOD_ANTHROPIC, lambda b: b["messages"].pop(0)), "first-message-user")

    def test_anthropic_thinking_needs_its_signature(self):
        self.assertBreaks(check_anthropic, broken(GOOD_ANTHROPIC, lambda b: b["messages"][1]["content"][0].pop("signature")), "thinking-signature")

    def test_anthropic_images(self):
        source = lambda b: b["messages"][0]["content"][1]["source"]  # noqa: E731
        self.assertBreaks(check_anthropic, broken(GOOD_ANTHROPIC, lambda b: source(b).update(media_type="image/bmp")), "image-media-type")
        self.assertBreaks(check_anthropic, broken(GOOD_ANTHROPIC, lambda b: source(b).update(data="not base64!")), "image-base64")
        self.assertBreaks(check_anthropic, broken(GOOD_ANTHROPIC, lambda b: source(b).update(data="")), "image-base64")

    # OpenAI Chat Completions
    def test_chat_tool_message_answers_the_closest_tool_calls(self):
        self.assertBreaks(check_chat, broken(GOOD_CHAT, lambda b: b["messages"][4].update(tool_call_id="call_z")), "tool-without-call")
        self.assertBreaks(check_chat, broken(GOOD_CHAT, lambda b: b["messages"].insert(6, {"role": "tool", "tool_call_id": "call_a", "content": "x"})), "tool-without-call")

    def test_chat_every_tool_call_answered_before_the_next_message(self):
        self.assertBreaks(check_chat, broken(GOOD_CHAT, lambda b: b["messages"].pop(4)), "call-without-result")
        self.assertBreaks(check_chat, broken(GOOD_CHAT, lambda b: b["messages"].__setitem__(slice(3, 6), [])), "call-without-result")

    def test_chat_images(self):
        part = lambda b: b["messages"][1]["content"][1]["image_url"]  # noqa: E731
        self.assertBreaks(check_chat, broken(GOOD_CHAT, lambda b: part(b).update(url="data:image/tiff;base64," + PNG_1PX)), "image-media-type")
        self.assertBreaks(check_chat, broken(GOOD_CHAT, lambda b: part(b).update(url="data:image/png;base64,%%%")), "image-base64")

    # OpenAI Responses
    def test_responses_output_needs_its_call(self):
        self.assertBreaks(check_responses, broken(GOOD_RESPONSES, lambda b: b["input"][3].update(call_id="call_z")), "output-without-call")
        self.assertBreaks(check_responses, broken(GOOD_RESPONSES, lambda b: b["input"].pop(2)), "output-without-call")

    def test_responses_call_needs_its_output(self):
        self.assertBreaks(check_responses, broken(GOOD_RESPONSES, lambda b: b["input"].pop(3)), "call-without-output")

    def test_responses_images(self):
        self.assertBreaks(check_responses, broken(GOOD_RESPONSES, lambda b: b["input"][1]["content"][1].update(
            image_url="data:image/png;base64,")), "image-base64")


class ServerTest(unittest.TestCase):
    def post(self, port, path, body):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
        response = conn.getresponse()
        data = response.read().decode()
        conn.close()
        return response.status, response.getheader("Content-Type"), data

    def test_each_api_streams_a_good_request_and_rejects_a_bad_one_in_its_own_words(self):
        bad_anthropic = broken(GOOD_ANTHROPIC, lambda b: b["messages"].pop(0))
        bad_chat = broken(GOOD_CHAT, lambda b: b["messages"].pop(4))
        bad_responses = broken(GOOD_RESPONSES, lambda b: b["input"].pop(3))
        with StandIn() as standin:
            status, kind, data = self.post(standin.port, "/v1/messages", GOOD_ANTHROPIC)
            self.assertEqual((status, kind), (200, "text/event-stream"))
            self.assertIn("event: message_start", data)
            self.assertIn('"stop_reason": "end_turn"', data)
            status, kind, data = self.post(standin.port, "/v1/messages", bad_anthropic)
            self.assertEqual(status, 400)
            self.assertEqual(json.loads(data)["error"]["type"], "invalid_request_error")

            status, _, data = self.post(standin.port, "/v1/chat/completions", GOOD_CHAT)
            self.assertEqual(status, 200)
            self.assertTrue(data.rstrip().endswith("data: [DONE]"))
            status, _, data = self.post(standin.port, "/v1/chat/completions", bad_chat)
            self.assertEqual(status, 400)
            self.assertIn("did not have response messages: call_b", json.loads(data)["error"]["message"])

            status, _, data = self.post(standin.port, "/v1/responses", GOOD_RESPONSES)
            self.assertEqual(status, 200)
            self.assertIn("event: response.completed", data)
            status, _, data = self.post(standin.port, "/v1/responses", bad_responses)
            self.assertEqual(status, 400)
            self.assertIn("No tool output found for function call call_a", json.loads(data)["error"]["message"])

            self.assertEqual(self.post(standin.port, "/v1/unknown", {})[0], 404)
            verdicts = [(r["api"], r["status"], r["rule"]) for r in standin.requests()]
        self.assertEqual(verdicts[:6], [
            ("anthropic-messages", 200, None), ("anthropic-messages", 400, "first-message-user"),
            ("openai-completions", 200, None), ("openai-completions", 400, "call-without-result"),
            ("openai-responses", 200, None), ("openai-responses", 400, "call-without-output")])


def sse_events(data):
    """(event, parsed data) for each event of an SSE body."""
    out = []
    for block in data.split("\n\n"):
        lines = block.strip().splitlines()
        if not lines:
            continue
        event = next((l[len("event: "):] for l in lines if l.startswith("event: ")), None)
        payload = next((l[len("data: "):] for l in lines if l.startswith("data: ")), None)
        out.append((event, json.loads(payload) if payload else None))
    return out


def streamed(events):
    """What a streamed message says: its blocks (type and text, thinking or call), its stop reason,
    and whether it ended with message_stop."""
    blocks, stop = {}, None
    for event, data in events:
        if event == "content_block_start":
            blocks[data["index"]] = dict(data["content_block"])
            blocks[data["index"]].setdefault("json", "")
        elif event == "content_block_delta":
            block, delta = blocks[data["index"]], data["delta"]
            if delta["type"] == "text_delta":
                block["text"] += delta["text"]
            elif delta["type"] == "thinking_delta":
                block["thinking"] += delta["thinking"]
            elif delta["type"] == "signature_delta":
                block["signature"] += delta["signature"]
            elif delta["type"] == "input_json_delta":
                block["json"] += delta["partial_json"]
        elif event == "message_delta":
            stop = data["delta"]["stop_reason"]
    return [blocks[i] for i in sorted(blocks)], stop, bool(events) and events[-1][0] == "message_stop"


class ScriptTest(unittest.TestCase):
    """Each kind of scripted reply comes out as the Messages API would send it, in the script's order."""

    SCRIPT = [
        "Plain text.",
        {"thinking": "Let me think.", "text": "Thought about it."},
        {"text": "Two calls.", "tool_calls": [{"name": "bash", "arguments": {"command": "ls"}},
                                               {"name": "read", "arguments": {"path": "a.txt"}}]},
        {"text": "This stream breaks in the middle of it.", "fail": "close"},
        {"text": "This one gets an error event half-way.", "fail": "error_event", "error": "Overloaded"},
        {"status": 529, "error": "Overloaded"},
        {"status": 500},
        {"status": 400, "error": "prompt is too long"},
        {"text": "A slow answer.", "delay": 0.25},
        {"summary": "## Goal\nThe summary."},
        {"text": "one two three four five six seven", "deltas": 3},
    ]

    def post(self, port, body=GOOD_ANTHROPIC):
        return ServerTest.post(self, port, "/v1/messages", body)

    def test_each_kind_in_order_then_the_default(self):
        slept = []
        real_sleep = standin_module.time.sleep
        standin_module.time.sleep = slept.append  # the slow reply's pauses are counted, not waited for
        try:
            with StandIn(script=self.SCRIPT) as server:
                answers = [self.post(server.port) for _ in range(len(self.SCRIPT) + 1)]
                log = server.requests()
        finally:
            standin_module.time.sleep = real_sleep
        ok = [(streamed(sse_events(data)) if status == 200 else (status, json.loads(data))) for status, _, data in answers]

        self.assertEqual(ok[0], ([{"type": "text", "text": "Plain text.", "json": ""}], "end_turn", True))
        blocks, stop, complete = ok[1]
        self.assertEqual([b["type"] for b in blocks], ["thinking", "text"])
        self.assertEqual(blocks[0]["thinking"], "Let me think.")
        self.assertTrue(blocks[0]["signature"])
        self.assertEqual(blocks[1]["text"], "Thought about it.")
        blocks, stop, complete = ok[2]
        self.assertEqual([b["type"] for b in blocks], ["text", "tool_use", "tool_use"])
        self.assertEqual([(b["name"], json.loads(b["json"])) for b in blocks[1:]],
                         [("bash", {"command": "ls"}), ("read", {"path": "a.txt"})])
        self.assertEqual(len({b["id"] for b in blocks[1:]}), 2)
        self.assertEqual((stop, complete), ("tool_use", True))
        blocks, stop, complete = ok[3]
        self.assertFalse(complete)
        self.assertIsNone(stop)
        self.assertTrue("This stream breaks in the middle of it.".startswith(blocks[0]["text"]))
        self.assertNotEqual(blocks[0]["text"], "This stream breaks in the middle of it.")
        events = sse_events(answers[4][2])
        self.assertEqual(events[-1][0], "error")
        self.assertEqual(events[-1][1]["error"], {"type": "overloaded_error", "message": "Overloaded"})
        self.assertEqual(ok[5], (529, {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}))
        self.assertEqual((ok[6][0], ok[6][1]["error"]["type"]), (500, "api_error"))
        self.assertEqual((ok[7][0], ok[7][1]["error"]["type"]), (400, "invalid_request_error"))
        self.assertEqual(ok[8][0][0]["text"], "A slow answer.")
        self.assertEqual(slept, [0.25] * (len(sse_events(answers[8][2])) - 1))
        self.assertEqual(ok[9][0][0]["text"], "## Goal\nThe summary.")
        self.assertEqual(ok[10][0][0]["text"], "one two three four five six seven")
        self.assertEqual(sum(1 for e, d in sse_events(answers[10][2]) if e == "content_block_delta"), 3)
        self.assertEqual(ok[11][0][0]["text"], DEFAULT_REPLY)
        self.assertEqual([r["status"] for r in log], [200, 200, 200, 200, 200, 529, 500, 400, 200, 200, 200, 200])
        self.assertEqual([r["reply"] for r in log], list(range(1, 12)) + [None])

    def test_a_request_that_breaks_a_rule_consumes_no_reply(self):
        with StandIn(script=["first", "second"]) as server:
            bad = broken(GOOD_ANTHROPIC, lambda b: b["messages"].pop(0))
            self.assertEqual(self.post(server.port, bad)[0], 400)
            first = streamed(sse_events(self.post(server.port)[2]))[0][0]["text"]
            self.assertEqual(self.post(server.port, bad)[0], 400)
            second = streamed(sse_events(self.post(server.port)[2]))[0][0]["text"]
        self.assertEqual((first, second), ("first", "second"))

    def test_a_reply_with_when_waits_for_a_request_that_holds_its_text(self):
        def asking(text):
            return {"model": "m", "stream": True, "messages": [{"role": "user", "content": text}]}
        script = [{"text": "prefix summary", "when": "# Conversation"}, {"text": "history summary", "when": "<conversation>"}, "plain"]
        with StandIn(script=script) as server:
            got = [streamed(sse_events(self.post(server.port, asking(t))[2]))[0][0]["text"]
                   for t in ("<conversation>\nold", "# Conversation\nnew", "anything", "anything")]
        self.assertEqual(got, ["history summary", "prefix summary", "plain", DEFAULT_REPLY])

    def test_a_when_sees_the_text_of_tool_results(self):
        def answering(content):
            return {"model": "m", "stream": True, "messages": [
                {"role": "user", "content": "go"},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": content}]}]}
        script = [{"text": "saw blocks", "when": "91: 7 13"}, {"text": "saw a string", "when": "Exit code 1"}]
        with StandIn(script=script) as server:
            got = [streamed(sse_events(self.post(server.port, answering(c))[2]))[0][0]["text"]
                   for c in ("Exit code 1\ncat: x", [{"type": "text", "text": "91: 7 13"}], "other")]
        self.assertEqual(got, ["saw a string", "saw blocks", DEFAULT_REPLY])

    def test_the_record_names_the_script_reply_used(self):
        with StandIn(script=[{"text": "late", "when": "second"}, "early"]) as server:
            for text in ("first", "second", "third"):
                self.post(server.port, {"model": "m", "stream": True, "messages": [{"role": "user", "content": text}]})
            self.assertEqual(server.unused_replies(), [])
            log = server.requests()
        self.assertEqual([r["script_index"] for r in log], [1, 0, None])

    def test_tool_call_ids_differ_between_replies(self):
        call = {"tool_calls": [{"name": "ls", "arguments": {}}]}
        with StandIn(script=[call, call]) as server:
            ids = [streamed(sse_events(self.post(server.port)[2]))[0][0]["id"] for _ in range(2)]
        self.assertNotEqual(ids[0], ids[1])
        for i in ids:
            self.assertRegex(i, r"^[a-zA-Z0-9_-]+$")

    def test_other_apis_keep_the_default_text_and_leave_the_script(self):
        with StandIn(script=["scripted"]) as server:
            data = ServerTest.post(self, server.port, "/v1/chat/completions", GOOD_CHAT)[2]
            self.assertIn("\"stand-in \"", data)
            self.assertNotIn("scripted", data)
            self.assertIn("scripted", streamed(sse_events(self.post(server.port)[2]))[0][0]["text"])

    def test_a_bad_script_is_refused_with_the_reply_and_the_reason(self):
        for script, words in ((["ok", {"txt": "typo"}], "script[1]: unknown field(s) txt"),
                              ([{"text": "one", "fail": "close"}], "script[0].fail: a reply that fails half-way"),
                              ([{"fail": "later", "text": "a b"}], "script[0].fail: 'later' is not one of"),
                              ([{"status": 200}], "script[0].status"),
                              ([{"tool_calls": [{"arguments": {}}]}], "script[0].tool_calls[0]"),
                              ([{}], "script[0]: the reply says nothing"),
                              ([{"text": "a b", "deltas": 0}], "script[0].deltas"),
                              ({"text": "x"}, "a script is a list")):
            with self.assertRaises(ScriptError) as caught:
                parse_script(script)
            self.assertIn(words, str(caught.exception))


def responses_streamed(events):
    """What a streamed Responses reply says: the output items as output_item.done gave them, each with
    the text its deltas added up to ("streamed"), the response.completed event's response, and the
    sequence numbers. Checks as it goes that every delta names an item that was added and not done."""
    items, done, completed, numbers, open_items = {}, [], None, [], {}
    for event, data in events:
        numbers.append(data.get("sequence_number"))
        if event == "response.output_item.added":
            open_items[data["item"]["id"]] = data["output_index"]
            items[data["item"]["id"]] = ""
        elif event.endswith(".delta"):
            assert open_items.get(data["item_id"]) == data["output_index"], (event, data)
            items[data["item_id"]] += data["delta"]
        elif event == "response.output_item.done":
            del open_items[data["item"]["id"]]
            done.append(dict(data["item"], streamed=items[data["item"]["id"]]))
        elif event == "response.completed":
            completed = data["response"]
    return done, completed, numbers


class ResponsesScriptTest(unittest.TestCase):
    """Each kind of scripted reply comes out as the Responses API would stream it."""

    SCRIPT = [
        "Plain text.",
        {"thinking": "Let me think.", "text": "Thought about it."},
        {"thinking": "Two at once.", "tool_calls": [{"name": "exec_command", "arguments": {"cmd": "ls"}},
                                                    {"name": "exec_command", "arguments": {"cmd": "false"}}]},
        {"status": 500},
        {"status": 429, "error": "Rate limit reached"},
        {"status": 400, "error": "Your input exceeds the context window of this model."},
        {"summary": "## Goal\nThe summary."},
        {"text": "This stream breaks in the middle of it.", "fail": "error_event", "error": "boom"},
    ]

    def post(self, port, body=GOOD_RESPONSES):
        return ServerTest.post(self, port, "/v1/responses", body)

    def test_each_kind_in_order_then_the_default(self):
        with StandIn(script=self.SCRIPT) as server:
            answers = [self.post(server.port) for _ in range(len(self.SCRIPT) + 1)]
            log = server.requests()
        events = [sse_events(data) if status == 200 else None for status, _, data in answers]
        for status, kind, _ in answers:
            if status == 200:
                self.assertEqual(kind, "text/event-stream")

        # Every stream opens with response.created and in_progress, numbers its events from 0, and
        # (but for the broken one) ends with response.completed holding the items streamed before.
        for n in (0, 1, 2, 6, 8):
            names = [e for e, _ in events[n]]
            self.assertEqual(names[:2], ["response.created", "response.in_progress"])
            self.assertEqual(names[-1], "response.completed")
            for event, data in events[n]:
                self.assertEqual(data["type"], event)
            done, completed, numbers = responses_streamed(events[n])
            self.assertEqual(numbers, list(range(len(numbers))))
            self.assertEqual(completed["status"], "completed")
            self.assertEqual(completed["output"], [{k: v for k, v in d.items() if k != "streamed"} for d in done])
            usage = completed["usage"]
            self.assertEqual(usage["total_tokens"], usage["input_tokens"] + usage["output_tokens"])
        self.assertEqual(len({responses_streamed(events[n])[1]["id"] for n in (0, 1, 2, 6)}), 4)

        done = responses_streamed(events[0])[0]
        self.assertEqual([(d["type"], d["role"], d["content"], d["streamed"]) for d in done],
                         [("message", "assistant", [{"type": "output_text", "text": "Plain text.", "annotations": []}], "Plain text.")])
        self.assertEqual([e for e, _ in events[0]][2:-1], [
            "response.output_item.added", "response.content_part.added", "response.output_text.delta",
            "response.output_text.delta", "response.output_text.done", "response.content_part.done",
            "response.output_item.done"])

        reasoning, message = responses_streamed(events[1])[0]
        self.assertEqual(reasoning["type"], "reasoning")
        self.assertEqual(reasoning["summary"], [{"type": "summary_text", "text": "Let me think."}])
        self.assertEqual(reasoning["streamed"], "Let me think.")
        self.assertTrue(reasoning["encrypted_content"])
        base64.b64decode(reasoning["encrypted_content"], validate=True)
        self.assertEqual(message["content"][0]["text"], "Thought about it.")
        self.assertIn("response.reasoning_summary_text.delta", [e for e, _ in events[1]])
        self.assertGreater(responses_streamed(events[1])[1]["usage"]["output_tokens_details"]["reasoning_tokens"], 0)

        reasoning, first, second = responses_streamed(events[2])[0]
        self.assertEqual(reasoning["type"], "reasoning")
        self.assertEqual([(c["type"], c["name"], json.loads(c["arguments"]), json.loads(c["streamed"])) for c in (first, second)],
                         [("function_call", "exec_command", {"cmd": "ls"}, {"cmd": "ls"}),
                          ("function_call", "exec_command", {"cmd": "false"}, {"cmd": "false"})])
        self.assertNotEqual(first["call_id"], second["call_id"])
        self.assertNotEqual(first["id"], second["id"])
        self.assertIn("response.function_call_arguments.done", [e for e, _ in events[2]])

        # HTTP errors come in OpenAI's error body, with the type the API names for the status.
        errors = [(answers[n][0], json.loads(answers[n][2])["error"]) for n in (3, 4, 5)]
        self.assertEqual([(status, e["type"]) for status, e in errors], [(500, "server_error"), (429, "requests"), (400, "invalid_request_error")])
        self.assertEqual(errors[1][1]["code"], "rate_limit_exceeded")
        self.assertEqual(errors[2][1]["message"], "Your input exceeds the context window of this model.")

        self.assertEqual(responses_streamed(events[6])[0][0]["content"][0]["text"], "## Goal\nThe summary.")
        names = [e for e, _ in events[7]]
        self.assertEqual(names[-1], "error")
        self.assertNotIn("response.completed", names)
        self.assertEqual(events[7][-1][1]["message"], "boom")
        self.assertEqual(responses_streamed(events[8])[0][0]["content"][0]["text"], DEFAULT_REPLY)
        self.assertEqual([r["status"] for r in log], [200, 200, 200, 500, 429, 400, 200, 200, 200])
        self.assertEqual([r["reply"] for r in log], list(range(1, 9)) + [None])

    def test_call_ids_are_unique_and_the_same_in_every_run(self):
        call = {"tool_calls": [{"name": "exec_command", "arguments": {"cmd": "ls"}}]}
        runs = []
        for _ in range(2):
            with StandIn(script=[call, call]) as server:
                runs.append([responses_streamed(sse_events(self.post(server.port)[2]))[0][0]["call_id"] for _ in range(2)])
        self.assertEqual(runs[0], runs[1])
        self.assertNotEqual(runs[0][0], runs[0][1])

    def test_a_call_of_a_namespace_tool_names_its_namespace(self):
        call = {"tool_calls": [{"name": "spawn_agent", "namespace": "collaboration", "arguments": {"task_name": "t"}},
                               {"name": "exec_command", "arguments": {}}]}
        with StandIn(script=[call]) as server:
            first, second = responses_streamed(sse_events(self.post(server.port)[2]))[0]
        self.assertEqual((first["name"], first["namespace"]), ("spawn_agent", "collaboration"))
        self.assertNotIn("namespace", second)
        with self.assertRaises(ScriptError):
            parse_script([{"tool_calls": [{"name": "x", "namespace": 3}]}])

    def test_when_looks_at_the_last_input_item(self):
        user = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}
        call = {"type": "function_call", "call_id": "c", "name": "exec_command", "arguments": "{}"}
        after_tool = [user, call, {"type": "function_call_output", "call_id": "c", "output": "Process exited with code 1"}]
        checkpoint = [user, {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "CONTEXT CHECKPOINT now"}]}]
        script = [{"text": "summary", "when": "CONTEXT CHECKPOINT"}, {"text": "after the tool", "when": "exited with code 1"}]
        with StandIn(script=script) as server:
            got = [responses_streamed(sse_events(self.post(server.port, {"model": "m", "stream": True, "input": items})[2]))[0][0]["content"][0]["text"]
                   for items in (after_tool, checkpoint)]
        self.assertEqual(got, ["after the tool", "summary"])


class SentTest(unittest.TestCase):
    LOADED = [
        {"role": "user", "texts": ["List the files."], "toolCallIds": [], "toolResultId": None},
        {"role": "assistant", "texts": [], "toolCallIds": ["call_a"], "toolResultId": None},
        {"role": "toolResult", "texts": ["a.txt"], "toolCallIds": [], "toolResultId": "call_a"},
        {"role": "assistant", "texts": ["One file."], "toolCallIds": [], "toolResultId": None},
        {"role": "user", "texts": ["Go on."], "toolCallIds": [], "toolResultId": None},
    ]

    def test_each_api_reads_back_as_the_loaded_context(self):
        api = "openai-responses"
        self.assertEqual(sent.comparable(api, sent.conversation(api, GOOD_RESPONSES)), sent.comparable(api, self.LOADED))
        anthropic = sent.conversation("anthropic-messages", GOOD_ANTHROPIC)
        self.assertEqual([m["role"] for m in anthropic], ["user", "assistant", "toolResult", "toolResult", "assistant", "user", "assistant"])
        self.assertEqual(anthropic[1]["toolCallIds"], ["toolu_01A", "toolu_01B"])
        self.assertEqual(anthropic[3], {"role": "toolResult", "texts": ["b.txt"], "toolCallIds": [], "toolResultId": "toolu_01B"})

    def test_a_difference_is_seen(self):
        api = "openai-responses"
        got = sent.comparable(api, sent.conversation(api, GOOD_RESPONSES))
        changed = copy.deepcopy(self.LOADED)
        changed[3]["texts"] = ["Two files."]
        self.assertNotEqual(got, sent.comparable(api, changed))
        self.assertNotEqual(got, sent.comparable(api, self.LOADED[:2] + self.LOADED[3:]))

    def test_image_placeholders_are_not_a_difference_but_other_texts_are(self):
        body = {"messages": [
            {"role": "user", "content": "Show it."},
            {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "read", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "(see attached image)"},
            {"role": "user", "content": [{"type": "text", "text": "Attached image(s) from tool result:"}, {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]},
            {"role": "assistant", "content": "A pixel."}]}
        loaded = [{"role": "user", "texts": ["Show it."], "toolCallIds": [], "toolResultId": None},
                  {"role": "assistant", "texts": [], "toolCallIds": ["c1"], "toolResultId": None},
                  {"role": "toolResult", "texts": [], "toolCallIds": [], "toolResultId": "c1"},
                  {"role": "assistant", "texts": ["A pixel."], "toolCallIds": [], "toolResultId": None}]
        api = "openai-completions"
        got = sent.conversation(api, body)
        self.assertEqual(sent.comparable(api, got), sent.comparable(api, loaded))
        got[2]["texts"] = ["(see the attached image)"]
        self.assertNotEqual(sent.comparable(api, got), sent.comparable(api, loaded))

    def test_ids_compare_by_the_call_a_result_answers(self):
        api = "openai-completions"
        loaded = copy.deepcopy(self.LOADED)
        renamed = copy.deepcopy(self.LOADED)
        renamed[1]["toolCallIds"] = ["call_a_1n2ek491"]
        renamed[2]["toolResultId"] = "call_a_1n2ek491"
        self.assertEqual(sent.comparable(api, renamed), sent.comparable(api, loaded))
        renamed[2]["toolResultId"] = "call_b"
        self.assertNotEqual(sent.comparable(api, renamed), sent.comparable(api, loaded))

    def test_thinking_sent_as_text_is_not_a_difference_but_other_text_is(self):
        body = {"messages": [{"role": "user", "content": "hi"},
                             {"role": "assistant", "content": [{"type": "text", "text": "pondering"}, {"type": "text", "text": "Hello."}]}]}
        loaded = [{"role": "user", "texts": ["hi"], "toolCallIds": [], "toolResultId": None},
                  {"role": "assistant", "texts": ["Hello."], "toolCallIds": [], "toolResultId": None}]
        got = sent.conversation("anthropic-messages", body)
        self.assertEqual(sent.without_thinking_sent_as_text(loaded, got, {"pondering"}), loaded)
        self.assertNotEqual(sent.without_thinking_sent_as_text(loaded, got, set()), loaded)
        # A thinking block with the answer's words: the answer is still compared.
        same = [dict(m) for m in loaded]
        same[1] = dict(same[1], texts=["Hello.", "Hello."])
        self.assertEqual(sent.without_thinking_sent_as_text(loaded, same, {"Hello."}), loaded)
        same[1] = dict(same[1], texts=[])
        self.assertNotEqual(sent.without_thinking_sent_as_text(loaded, same, {"Hello."}), loaded)


GOOD_GEMINI = {"contents": [
    {"role": "user", "parts": [{"text": "List the files."}, {"inlineData": {"mimeType": "image/png", "data": PNG_1PX}}]},
    {"role": "model", "parts": [{"text": "Listing.", "thought": True}, {"functionCall": {"name": "ls", "args": {}}},
                                {"functionCall": {"name": "ls", "args": {"path": "b"}}}]},
    {"role": "user", "parts": [{"functionResponse": {"name": "ls", "response": {"output": "a.txt"}}},
                               {"functionResponse": {"name": "ls", "response": {"output": "b.txt"}}}]},
    {"role": "model", "parts": [{"text": "Two files."}]},
    {"role": "user", "parts": [{"text": "Go on."}]},
]}
GEMINI_PATH = "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse"


class GeminiTest(unittest.TestCase):
    """The Gemini route: generateContent streamed as server-sent events, with the API's pairing rule."""

    def test_a_good_request_passes_and_each_rule_can_fail(self):
        standin_module.check_gemini(GOOD_GEMINI)
        cases = [
            (lambda b: b["contents"][2]["parts"].append(copy.deepcopy(b["contents"][2]["parts"][0])), "response-count"),
            (lambda b: b["contents"][2]["parts"].pop(), "response-count"),
            (lambda b: b["contents"].pop(0), "call-turn-order"),
            (lambda b: b["contents"][0].update(role="assistant"), "role"),
            (lambda b: b["contents"][4].update(parts=[]), "parts-present"),
            (lambda b: b["contents"][0]["parts"][1]["inlineData"].update(data="not base64!"), "image-base64"),
            (lambda b: b.update(contents=[]), "contents-present"),
        ]
        for edit, rule in cases:
            with self.assertRaises(Violation) as caught:
                standin_module.check_gemini(broken(GOOD_GEMINI, edit))
            self.assertEqual(caught.exception.rule, rule)

    def test_the_route_streams_a_good_request_and_refuses_a_result_too_many(self):
        # Gemini CLI 0.61.0's resume: the first call's result sent twice.
        twice = broken(GOOD_GEMINI, lambda b: b["contents"][2]["parts"].append(copy.deepcopy(b["contents"][2]["parts"][0])))
        script = [{"thinking": "Thinking it over.", "text": "Done here.", "tool_calls": [{"name": "ls", "arguments": {"path": "."}}]}]
        with StandIn(script=script) as standin:
            status, kind, data = ServerTest.post(None, standin.port, GEMINI_PATH, GOOD_GEMINI)
            self.assertEqual((status, kind), (200, "text/event-stream"))
            chunks = [json.loads(block[len("data: "):]) for block in data.split("\r\n\r\n") if block.strip()]
            parts = [p for c in chunks for p in c["candidates"][0]["content"]["parts"]]
            self.assertEqual(parts[0], {"text": "Thinking it over.", "thought": True})
            self.assertEqual("".join(p.get("text", "") for p in parts if not p.get("thought")), "Done here.")
            self.assertEqual(parts[-1], {"functionCall": {"name": "ls", "args": {"path": "."}}})
            self.assertEqual(chunks[-1]["candidates"][0]["finishReason"], "STOP")
            status, _, data = ServerTest.post(None, standin.port, GEMINI_PATH, twice)
            self.assertEqual(status, 400)
            self.assertEqual(json.loads(data)["error"], {
                "code": 400, "status": "INVALID_ARGUMENT",
                "message": "Please ensure that the number of function response parts is equal to the number of "
                           "function call parts of the function call turn."})
            verdicts = [(r["api"], r["status"], r["rule"]) for r in standin.requests()]
        self.assertEqual(verdicts, [("gemini", 200, None), ("gemini", 400, "response-count")])


if __name__ == "__main__":
    unittest.main(verbosity=1)
