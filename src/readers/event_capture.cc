// Event capture -> thread export (docs/events.md, rules E1-E12). Two passes
// over the capture, a line at a time (log_source.h): the first parses each
// line (RapidJSON) and decides what it gives, keeping a few facts per entry
// (where its span is, its token estimate); the second writes the thread
// text, its header first (the title, model and thinking level are known only
// at the end), reading each entry's span again. Messages are copied byte for
// byte; the text is handed over a MiB at a time, so neither the capture nor
// the thread is held.
#include "readers/event_capture.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <optional>
#include <set>
#include <string_view>
#include <unordered_map>

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include "core/json_spans.h"
#include "core/json_value.h"
#include "pihydrate/findings.h"
#include "pihydrate/formats.h"
#include "readers/jsonl_lines.h"
#include "readers/log_source.h"

namespace pihydrate {

bool EventCapture::ok() const {
  return std::none_of(diagnostics.begin(), diagnostics.end(),
                      [](const Diagnostic& d) { return d.severity == Severity::kError; });
}

void EventCapture::map_back(Diagnostic& d) const {
  if (d.line == 0 || d.line > origins.size()) return;
  const std::string_view event = origins.name_of(origins.at(d.line - 1));
  const std::string message = d.message;
  d.message.clear();
  origins.map_back(d);  // the position, and "EVENT: " in front
  d.message = renamed(message, event);
}

std::string EventCapture::renamed(const std::string& m, std::string_view event) {
  // The thread's own syntax errors (PH601) are the capture's JSON, seen again.
  const std::string not_a_thread = "not a thread export: ";
  if (m.rfind(not_a_thread, 0) == 0) return std::string(event) + ": " + m.substr(not_a_thread.size());
  // "entries[3] (id "L12"): ..." or "entries[3].data.message: ...": the
  // thread's path means nothing to the capture's reader; the event's type does.
  if (m.rfind("entries[", 0) != 0) return m;
  std::size_t at = m.find(']');
  if (at == std::string::npos) return m;
  ++at;
  if (m.compare(at, 5, ".data") == 0) at += 5;
  if (m.compare(at, 6, " (id \"") == 0) {
    const std::size_t close = m.find("\")", at + 6);
    if (close != std::string::npos) at = close + 2;
  }
  return std::string(event) + m.substr(at);
}

namespace {

// What pi prints that adds nothing to the conversation (docs/events.md, E11),
// and the RPC commands an integration may log beside pi's output.
const std::set<std::string_view>& ignored_types() {
  static const std::set<std::string_view> types = {
      // run and turn bookkeeping; turn_end and agent_end repeat message_end's messages
      "agent_start", "agent_end", "agent_settled", "turn_start", "turn_end",
      // the tools' live view; their results come as toolResult messages
      "tool_execution_start", "tool_execution_update", "tool_execution_end",
      // queues, retries, progress and errors of pi itself
      "queue_update", "compaction_start", "auto_retry_start", "auto_retry_end", "summarization_retry_scheduled",
      "summarization_retry_attempt_start", "summarization_retry_finished", "bash_execution_update", "extension_error",
      "extension_ui_request", "extension_ui_response", "session_start", "session_compact_failed", "mcp_servers_change",
      // RPC commands (stdin), when an integration logs both directions
      "prompt", "steer", "follow_up", "abort", "clear_queue", "new_session", "get_state", "get_messages", "set_model",
      "cycle_model", "get_available_models", "set_thinking_level", "cycle_thinking_level",
      "get_available_thinking_levels", "set_steering_mode", "set_follow_up_mode", "compact", "set_auto_compaction",
      "set_auto_retry", "abort_retry", "abort_bash", "get_session_stats", "export_html", "switch_session", "fork",
      "clone", "get_fork_messages", "get_entries", "get_tree", "get_last_assistant_text", "set_session_name",
      "get_commands"};
  return types;
}

// The events a capture's lines become something (E2-E10).
const std::set<std::string_view>& mapped_types() {
  static const std::set<std::string_view> types = {"session",
                                                   "message_start",
                                                   "message_update",
                                                   "message_end",
                                                   "compaction_end",
                                                   "session_info_changed",
                                                   "thinking_level_changed",
                                                   "entry_appended",
                                                   "response",
                                                   "bash"};
  return types;
}

using Value = rapidjson::Value;

// The text pi sends for a user shell command (pi's bashExecutionToText).
// The capture may not hold the command (E6): the output is what the model
// saw, and the text says the command is not known.
constexpr const char* kCommandNotRecorded = "a shell command the capture did not record";

std::string bash_execution_text(const std::optional<std::string>& command, const Value& result) {
  std::string text = command ? "Ran `" + *command + "`\n" : std::string("Ran ") + kCommandNotRecorded + "\n";
  const std::string output = json_string_member(result, "output").value_or("");
  if (!output.empty())
    text += "```\n" + output + "\n```";
  else
    text += "(no output)";
  const Value* exit_code = json_member(result, "exitCode");
  if (json_true(result, "cancelled"))
    text += "\n\n(command cancelled)";
  else if (exit_code != nullptr && exit_code->IsInt64() && exit_code->GetInt64() != 0)
    text += "\n\nCommand exited with code " + std::to_string(exit_code->GetInt64());
  const auto full_output = json_string_member(result, "fullOutputPath");
  if (json_true(result, "truncated") && full_output)
    text += "\n\n[Output truncated. Full output: " + *full_output + "]";
  return text;
}

std::string hex64(std::uint64_t v) {
  static const char* digits = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, v >>= 4) s[static_cast<std::size_t>(i)] = digits[v & 15];
  return s;
}

// One thread entry to write, in capture order: what the second pass needs
// to write it, in a few words (a capture may hold a million of them).
struct Action {
  enum class Form {
    kMessage,          // data.message: the span
    kChunk,            // data.streamKey, data.event: the span
    kCompaction,       // data: the span (a compaction_end event)
    kCompactionEntry,  // data.result: the span (a compaction entry)
    kUserText,         // a user message with `text`
    kUserContent,      // a user message whose content is the span
  };
  static constexpr std::uint32_t kNoNote = UINT32_MAX;
  Form form = Form::kMessage;
  // Whether pi may start a compaction's kept window at it (E8).
  bool cut_point = false;
  std::uint32_t note = kNoNote;  // its Note, when it has one
  const char* kind = "";
  const char* event = "";
  std::uint64_t line = 0, column = 0;  // the event object's
  // The span, offsets in the capture (begin == end: none). kUserText: the
  // object bash_execution_text reads (none: an empty object).
  std::uint64_t begin = 0, end = 0;
  std::uint64_t span_column = 0;  // its column in the capture line
  std::uint64_t tokens = 0;       // a message's size as pi's compaction estimates it (E8)
};

// What few entries carry besides: the chunks of one stream share one.
struct Note {
  std::string text;  // kChunk: the stream key as written ("": none); kCompaction: the kept window's
                     // entry (firstKeptRef, "": none); kUser*: the message's timestamp as written ("": none)
  std::optional<std::string> command;  // kUserText: the shell command, when known
};

// pi 1.5's token estimate (compaction.js estimateTokens): characters / 4,
// rounded up, counted in UTF-16 code units as JavaScript's length does.
std::uint64_t utf16_length(std::string_view utf8) {
  std::uint64_t n = 0;
  for (unsigned char c : utf8) n += ((c & 0xC0) != 0x80) + (c >= 0xF0);
  return n;
}
std::uint64_t utf16_length(const Value& s) {
  return s.IsString() ? utf16_length(std::string_view(s.GetString(), s.GetStringLength())) : 0;
}
std::uint64_t tokens_of(std::uint64_t chars) { return (chars + 3) / 4; }
constexpr std::uint64_t kEstimatedImageChars = 4800;  // pi's ESTIMATED_IMAGE_CHARS

std::uint64_t content_chars(const Value* content) {
  if (content == nullptr) return 0;
  if (content->IsString()) return utf16_length(*content);
  std::uint64_t chars = 0;
  if (!content->IsArray()) return 0;
  for (const Value& block : content->GetArray()) {
    const auto type = json_string_member(block, "type");
    if (type == std::string("text")) {
      if (const Value* text = json_member(block, "text")) chars += utf16_length(*text);
    } else if (type == std::string("image")) {
      chars += kEstimatedImageChars;
    }
  }
  return chars;
}

struct Model {
  std::string provider, id, api;
};

class CaptureReader {
 public:
  CaptureReader(const LogSource& capture, const std::string& file) : source_(capture), file_(file), out_{} {}

  EventCapture run(const std::function<void(std::string& text)>& write) {
    // Lone surrogate escapes are rewritten in each line as it is read (E1).
    for_each_log_line(source_, [this](const JsonlLine& line) {  // E1
      read_line(line);
      return true;
    });
    end_stream(true);
    listed_.close();
    if (!out_.ok()) return std::move(out_);
    if (!has_conversation_) {
      error(0, 0,  // the whole capture
            "no conversation in the capture: no message_end of a user, assistant or tool result, no compaction and "
            "no interrupted assistant message (is it pi's stdout in --mode json or --mode rpc?)");
      return std::move(out_);
    }
    write_thread(write);
    listed_.close();
    return std::move(out_);
  }

 private:
  void add(Severity severity, Code code, std::uint64_t line, std::uint64_t column, std::string message) {
    Diagnostic d;
    d.code = code;
    d.severity = severity;
    d.level = code_info(code).level;
    d.file = file_;
    d.line = line;
    d.column = column;
    d.message = std::move(message);
    listed_.add(std::move(d));
  }
  void error(std::uint64_t line, std::uint64_t column, std::string message) {
    add(Severity::kError, Code::kEventCaptureInvalid, line, column, std::move(message));
  }
  void warn(std::uint64_t line, std::uint64_t column, std::string message) {
    add(Severity::kWarning, Code::kEventSkipped, line, column, std::move(message));
  }
  // Offsets below are into the line being read (bytes_), until an Action
  // takes them as the capture's (at).
  std::uint64_t column_of(std::size_t offset) const { return text_column_ + offset; }
  std::uint64_t at(std::size_t offset) const { return line_begin_ + offset; }

  void read_line(const JsonlLine& jsonl) {
    line_ = jsonl.number;
    bytes_ = jsonl.text;
    line_begin_ = jsonl.begin;
    text_column_ = jsonl.begin - jsonl.start + 1;
    const std::uint64_t line = jsonl.number;
    const std::string_view text = jsonl.text;
    const std::size_t first = skip_json_ws(text, 0);
    if (first >= text.size()) return;  // blank (E1)
    rapidjson::Document doc;
    doc.Parse<rapidjson::kParseIterativeFlag>(text.data(), text.size());
    if (doc.HasParseError()) {
      warn(line, column_of(doc.GetErrorOffset()),
           std::string("not a JSON event, skipped (") + rapidjson::GetParseError_En(doc.GetParseError()) +
               "): stderr mixed in, or a line cut short?");
      return;
    }
    if (!doc.IsObject()) {
      warn(line, column_of(first), "not an event (a JSON object), skipped");
      return;
    }
    std::size_t object = first;
    const Value* event = &doc;
    if (!json_string_member(doc, "type")) {
      // A wrapper an integration added around the event (E1).
      const std::vector<MemberSpan> members = object_members(bytes_, object);
      for (const char* key : {"event", "data"}) {
        const Value* inner = json_member(doc, key);
        const MemberSpan* span = find_member(members, key);
        if (inner != nullptr && inner->IsObject() && json_string_member(*inner, "type") && span != nullptr) {
          event = inner;
          object = span->value_begin;
          break;
        }
      }
      if (event == &doc) {
        warn(line, column_of(object), "a JSON object without a \"type\", skipped");
        return;
      }
    }
    ++out_.events;
    on_event(*event, object);
  }

  // The value of member `key` of the object at `object`, as a span of the capture.
  std::pair<std::size_t, std::size_t> span_of(std::size_t object, const char* key) const {
    const std::vector<MemberSpan> members = object_members(bytes_, object);
    const MemberSpan* m = find_member(members, key);
    return m == nullptr ? std::pair<std::size_t, std::size_t>{0, 0} : std::pair{m->value_begin, m->value_end};
  }

  Action action_at(std::size_t object, Action::Form form, const char* kind, const char* event) const {
    Action a;
    a.form = form;
    a.kind = kind;
    a.event = event;
    a.line = line_;
    a.column = column_of(object);
    return a;
  }
  void set_span(Action& a, std::pair<std::size_t, std::size_t> span) const {
    if (span.second > span.first) {
      a.begin = at(span.first);
      a.end = at(span.second);
    }
    a.span_column = column_of(span.first);
  }
  std::uint32_t note(Note n) {
    notes_.push_back(std::move(n));
    return static_cast<std::uint32_t>(notes_.size() - 1);
  }
  void push(Action a, std::pair<std::size_t, std::size_t> span) {
    set_span(a, span);
    actions_.push_back(std::move(a));
    has_conversation_ = true;
  }

  void on_event(const Value& event, std::size_t object) {
    const std::string type = *json_string_member(event, "type");
    if (type == "session") {
      end_stream(true);  // a new run: what the last one streamed was cut off
      on_session_id(json_string_member(event, "id"), object, "the session header");
      if (!created_at_) created_at_ = json_string_member(event, "timestamp");
      if (!cwd_) cwd_ = json_string_member(event, "cwd");
    } else if (type == "message_start") {
      const Value* message = json_member(event, "message");
      if (message != nullptr && json_string_member(*message, "role") == std::string("assistant")) {
        end_stream(true);
        open_stream(object, timestamp_text(span_of(object, "message").first));
      }
    } else if (type == "message_update") {
      const auto span = span_of(object, "assistantMessageEvent");
      if (span.second != 0) {
        if (!stream_) open_stream(object, "");  // the capture began inside the stream
        Action a = action_at(object, Action::Form::kChunk, "pi.chunk", "message_update");
        set_span(a, span);
        stream_chunks_.push_back(std::move(a));
      }
    } else if (type == "message_end") {
      on_message_end(event, object);
    } else if (type == "compaction_end") {
      const Value* result = json_member(event, "result");
      // Without a result pi wrote nothing: aborted, failed or nothing to compact (E8).
      if (result != nullptr && json_string_member(*result, "summary")) {
        Action a = action_at(object, Action::Form::kCompaction, "pi.compaction", "compaction_end");
        if (std::string ref = kept_window(*result); !ref.empty()) a.note = note({std::move(ref), std::nullopt});
        push(std::move(a), {object, json_value_end(bytes_, object)});
      }
    } else if (type == "session_info_changed") {
      title_ = json_string_member(event, "name");  // absent: the name was cleared
    } else if (type == "thinking_level_changed") {
      if (auto level = json_string_member(event, "level")) thinking_ = level;
    } else if (type == "entry_appended") {
      on_entry_appended(event, object);
    } else if (type == "response") {
      on_response(event, object);
    } else if (type == "bash") {
      // The RPC command itself, when the integration logs stdin too: its
      // response then gives the shell command pi stored (E6).
      if (auto id = json_string_member(event, "id"); id && json_string_member(event, "command"))
        bash_commands_[*id] = {*json_string_member(event, "command"), json_true(event, "excludeFromContext")};
    } else if (ignored_types().count(type) == 0 && unknown_types_.insert(type).second) {
      warn(line_, column_of(object), "an event type pi-hydrate does not know, \"" + type + "\", skipped");
    }
  }

  void on_session_id(const std::optional<std::string>& id, std::size_t object, const char* where) {
    if (!id || id->empty()) return;
    if (!session_id_) {
      session_id_ = id;
      session_line_ = line_;
      return;
    }
    if (*session_id_ != *id)
      error(line_, column_of(object),
            std::string(where) + " names session " + quote_for_message(*id) + ", but the capture is of session " +
                quote_for_message(*session_id_) + " (line " + std::to_string(session_line_) +
                "): one capture, one conversation; split it into one file per session");
  }

  void on_message_end(const Value& event, std::size_t object) {
    const Value* message = json_member(event, "message");
    const auto role = message != nullptr ? json_string_member(*message, "role") : std::nullopt;
    if (!role) {
      warn(line_, column_of(object), "message_end without a message that has a role, skipped");
      return;
    }
    const auto span = span_of(object, "message");
    if (*role == "assistant") {
      end_stream(false);  // the final message is authoritative: its stream is not needed
      Action a = action_at(object, Action::Form::kMessage, "pi.assistant", "message_end");
      a.tokens = assistant_tokens(*message, span.first);
      a.cut_point = true;
      push(std::move(a), span);
    } else if (*role == "user") {
      Action a = action_at(object, Action::Form::kMessage, "pi.user", "message_end");
      a.tokens = tokens_of(content_chars(json_member(*message, "content")));
      a.cut_point = true;
      push(std::move(a), span);
    } else if (*role == "toolResult") {
      Action a = action_at(object, Action::Form::kMessage, "pi.tool_result", "message_end");
      a.tokens = tokens_of(content_chars(json_member(*message, "content")));
      push(std::move(a), span);
    } else if (*role == "system") {
      ++out_.repairs["dropped-system-prompt"];  // pi builds it afresh on every request (E4)
      system_tokens_ = system_tokens(*message, span.first);
    } else if (*role == "custom") {
      Action a = action_at(object, Action::Form::kUserContent, "pi.user", "message_end");
      a.note = note({timestamp_text(span.first), std::nullopt});
      a.tokens = tokens_of(content_chars(json_member(*message, "content")));
      a.cut_point = true;
      push(std::move(a), span_of(span.first, "content"));
      ++out_.repairs["custom-as-user"];
    } else if (*role == "bashExecution") {
      if (json_true(*message, "excludeFromContext")) {
        ++out_.repairs["bash-execution-excluded"];
        return;
      }
      Action a = action_at(object, Action::Form::kUserText, "pi.user", "message_end");
      a.note = note({timestamp_text(span.first), json_string_member(*message, "command").value_or("")});
      a.tokens = tokens_of(command_output_chars(*message));
      a.cut_point = true;
      push(std::move(a), span);  // its text is written from the message

      ++out_.repairs["bash-execution-as-user"];
    } else {
      warn(line_, column_of(span.first),
           "a " + quote_for_message(*role) + " message, which a thread export cannot carry, skipped");
    }
  }

  // message.timestamp as written, when it is a number.
  std::string timestamp_text(std::size_t message) const {
    const auto span = span_of(message, "timestamp");
    if (span.second == 0) return "";
    const std::string_view v(bytes_.data() + span.first, span.second - span.first);
    return v.find_first_not_of("-0123456789.eE+") == std::string_view::npos ? std::string(v) : "";
  }

  // pi 1.5's estimate of an assistant message: its texts, thinking, and
  // each tool call's name and JSON.stringify(arguments), which is the
  // arguments' own bytes in the capture (pi printed them with JSON.stringify).
  std::uint64_t assistant_tokens(const Value& message, std::size_t message_at) const {
    const Value* content = json_member(message, "content");
    if (content == nullptr || !content->IsArray()) return 0;
    const auto content_span = span_of(message_at, "content");
    const std::vector<ElementSpan> blocks = array_elements(bytes_, content_span.first);
    std::uint64_t chars = 0;
    std::size_t i = 0;
    for (const Value& block : content->GetArray()) {
      const auto type = json_string_member(block, "type");
      if (type == std::string("text")) {
        if (const Value* text = json_member(block, "text")) chars += utf16_length(*text);
      } else if (type == std::string("thinking")) {
        if (const Value* thinking = json_member(block, "thinking")) chars += utf16_length(*thinking);
      } else if (type == std::string("toolCall") && i < blocks.size()) {
        if (const Value* name = json_member(block, "name")) chars += utf16_length(*name);
        const auto arguments = span_of(blocks[i].begin, "arguments");
        chars += utf16_length(std::string_view(bytes_.data() + arguments.first, arguments.second - arguments.first));
      }
      ++i;
    }
    return tokens_of(chars);
  }

  std::uint64_t system_tokens(const Value& message, std::size_t message_at) const {
    std::uint64_t chars = content_chars(json_member(message, "content"));
    if (const Value* sections = json_member(message, "sections"); sections != nullptr && sections->IsObject())
      for (const auto& section : sections->GetObject()) chars += utf16_length(section.value);
    const auto tools = span_of(message_at, "toolsAdded");
    chars += utf16_length(std::string_view(bytes_.data() + tools.first, tools.second - tools.first));
    return tokens_of(chars);
  }

  static std::uint64_t command_output_chars(const Value& message) {
    const Value* command = json_member(message, "command");
    const Value* output = json_member(message, "output");
    return (command != nullptr ? utf16_length(*command) : 0) + (output != nullptr ? utf16_length(*output) : 0);
  }

  // The message pi kept a compaction's window from (E8). Message events
  // carry no entry ids, but pi 1.5 reports estimatedTokensAfter, its
  // estimate of what the context holds after the compaction: the system
  // prompt, the summary and the kept messages. The window is the one
  // suffix of the messages so far, starting where pi may cut, that makes
  // the sum exact; anything else (no estimate, no match, several, a stream
  // or message the estimate cannot see) leaves it to R9. Returns the
  // entry id to anchor on, or "".
  std::string kept_window(const Value& result) const {
    const Value* after = json_member(result, "estimatedTokensAfter");
    if (after == nullptr || !after->IsUint64()) return "";
    // The latest system prompt the capture showed (none: a capture that
    // began after it, and the sum will not match).
    const std::uint64_t fixed = tokens_of(utf16_length(*json_member(result, "summary"))) + system_tokens_;
    if (after->GetUint64() < fixed) return "";
    const std::uint64_t kept = after->GetUint64() - fixed;
    std::uint64_t suffix = 0;
    std::optional<std::size_t> found;
    for (std::size_t i = actions_.size(); i-- > 0;) {
      const Action& a = actions_[i];
      if (a.form == Action::Form::kChunk || a.form == Action::Form::kCompaction ||
          a.form == Action::Form::kCompactionEntry)
        break;  // what pi's estimate held there is not known
      suffix += a.tokens;
      if (suffix > kept) break;
      if (suffix == kept && a.cut_point) {
        if (found) return "";  // two windows fit: ambiguous
        found = i;
      }
    }
    return found ? "L" + std::to_string(actions_[*found].line) : "";
  }

  void on_entry_appended(const Value& event, std::size_t object) {
    const Value* entry = json_member(event, "entry");
    const auto type = entry != nullptr ? json_string_member(*entry, "type") : std::nullopt;
    const auto span = span_of(object, "entry");
    if (type == std::string("custom_message")) {
      Action a = action_at(object, Action::Form::kUserContent, "pi.user", "entry_appended");
      a.tokens = tokens_of(content_chars(json_member(*entry, "content")));
      a.cut_point = true;
      push(std::move(a), span_of(span.first, "content"));
      ++out_.repairs["custom-as-user"];
    } else if (type == std::string("compaction") && json_string_member(*entry, "summary")) {
      push(action_at(object, Action::Form::kCompactionEntry, "pi.compaction", "entry_appended"), span);
    } else {
      // context_edit, custom, ...: they name entries by pi's ids, which message
      // events never carry, or add nothing to the context (E10).
      ++out_.repairs["ignored-entry-appended"];
    }
  }

  void on_response(const Value& event, std::size_t object) {
    const auto command = json_string_member(event, "command");
    const Value* data = json_member(event, "data");
    if (!command || !json_true(event, "success")) return;
    const Value empty(rapidjson::kObjectType);
    const Value& d = data != nullptr && data->IsObject() ? *data : empty;
    if (*command == "get_state") {
      on_session_id(json_string_member(d, "sessionId"), object, "get_state");
      if (const Value* model = json_member(d, "model")) take_model(*model);
      if (auto level = json_string_member(d, "thinkingLevel")) thinking_ = level;
      if (auto name = json_string_member(d, "sessionName")) title_ = name;
    } else if (*command == "set_model") {
      take_model(d);
    } else if (*command == "cycle_model") {
      if (const Value* model = json_member(d, "model")) take_model(*model);
      if (auto level = json_string_member(d, "thinkingLevel")) thinking_ = level;
    } else if (*command == "cycle_thinking_level") {
      if (auto level = json_string_member(d, "level")) thinking_ = level;
    } else if (*command == "bash") {
      on_bash_response(event, d, object);
    } else if (*command == "new_session" || *command == "switch_session" || *command == "fork" || *command == "clone") {
      if (!json_true(d, "cancelled"))
        error(line_, column_of(object),
              "the capture goes on in another session here (" + *command +
                  "): one capture, one conversation; split it where the session changes");
    }
  }

  void on_bash_response(const Value& event, const Value& result, std::size_t object) {
    const auto id = json_string_member(event, "id");
    const auto it = id ? bash_commands_.find(*id) : bash_commands_.end();
    std::optional<std::string> command;
    if (it == bash_commands_.end()) {
      // The model saw the output, and a later prompt may ask about it: the
      // output is kept, with the command marked as not recorded.
      warn(line_, column_of(object),
           "a user shell command (RPC bash) ran here, but the capture has no command text: its output is kept, "
           "the command written as not recorded");
      ++out_.repairs["bash-execution-without-command"];
    } else if (it->second.exclude_from_context) {
      ++out_.repairs["bash-execution-excluded"];
      return;
    } else {
      command = it->second.command;
      ++out_.repairs["bash-execution-as-user"];
    }
    Action a = action_at(object, Action::Form::kUserText, "pi.user", "response");
    const Value* output = json_member(result, "output");
    a.tokens = tokens_of((command ? utf16_length(*command) : 0) + (output != nullptr ? utf16_length(*output) : 0));
    a.note = note({"", std::move(command)});
    a.cut_point = true;
    const Value* data = json_member(event, "data");
    // Its text is written from `data` (none: an empty object).
    push(std::move(a),
         data != nullptr && data->IsObject() ? span_of(object, "data") : std::pair<std::size_t, std::size_t>{0, 0});
  }

  void take_model(const Value& model) {
    auto provider = json_string_member(model, "provider");
    auto id = json_string_member(model, "id");
    if (!provider || !id) return;
    model_ = Model{*provider, *id, json_string_member(model, "api").value_or("")};
  }

  // `key`: the message's timestamp, which R6 gives the message it rebuilds;
  // without one the chunks are a run (R6).
  void open_stream(std::size_t object, std::string key) {
    stream_ = true;
    stream_key_ = std::move(key);
    stream_line_ = line_;
    stream_column_ = column_of(object);
    stream_chunks_.clear();
  }
  // Ends the open assistant stream: `interrupted`, its deltas become pi.chunk
  // entries (R6 and --partial then decide, E7); else they are dropped.
  void end_stream(bool interrupted) {
    if (!stream_) return;
    stream_ = false;
    if (!interrupted) {
      stream_chunks_.clear();
      return;
    }
    if (stream_chunks_.empty())
      warn(stream_line_, stream_column_, "an assistant message started here and never ended, with nothing streamed");
    const std::uint32_t key = stream_chunks_.empty() ? Action::kNoNote : note({stream_key_, std::nullopt});
    for (Action& a : stream_chunks_) {
      a.note = key;
      actions_.push_back(std::move(a));
      has_conversation_ = true;
    }
    stream_chunks_.clear();
  }

  // FNV-1a of the capture's bytes, lone surrogate escapes rewritten as
  // the lines were (a line at a time, which rewrites what the whole would).
  std::uint64_t capture_hash() const {
    std::uint64_t hash = stable_hash("");
    std::string line;
    std::vector<char> block(1 << 16);
    const auto add_line = [&] {
      neutralize_lone_surrogates(line.data(), line.size());
      hash = stable_hash(line, hash);
      line.clear();
    };
    std::uint64_t offset = 0;
    for (std::size_t got; (got = source_.read_at(offset, block.data(), block.size())) != 0; offset += got) {
      for (std::size_t from = 0; from < got;) {
        const char* nl = static_cast<const char*>(std::memchr(block.data() + from, '\n', got - from));
        const std::size_t to = nl == nullptr ? got : static_cast<std::size_t>(nl - block.data()) + 1;
        line.append(block.data() + from, to - from);
        if (nl != nullptr) add_line();
        from = to;
      }
    }
    add_line();
    return hash;
  }

  void write_thread(const std::function<void(std::string& text)>& write) {
    std::string thread_id = session_id_ ? *session_id_ : "";
    if (thread_id.empty()) {
      // No header and no get_state: an id from the bytes, so the same capture
      // gives the same session (E2). FNV-1a, 64 bits.
      thread_id = "capture-" + hex64(capture_hash());
    }
    std::string& t = text_;
    t = R"({"format":"thread-export","version":1,"thread":{"id":)" + json_quote(thread_id);
    if (created_at_) t += ",\"createdAt\":" + json_quote(*created_at_);
    if (cwd_) t += ",\"cwd\":" + json_quote(*cwd_);
    if (title_ && !title_->empty()) t += ",\"title\":" + json_quote(*title_);
    if (model_) {
      t += ",\"model\":{\"provider\":" + json_quote(model_->provider) + ",\"modelId\":" + json_quote(model_->id);
      if (!model_->api.empty()) t += ",\"api\":" + json_quote(model_->api);
      t += "}";
    }
    if (thinking_) t += ",\"thinkingLevel\":" + json_quote(*thinking_);
    t += "}}\n";
    out_.origins.add(session_id_ ? session_line_ : 1, 1, "session");
    for (const Action& a : actions_) {
      write_entry(a);
      if (t.size() >= kWriteBlockBytes) write(t);
    }
    actions_.clear();
    notes_.clear();
    write(t);
  }

  void write_entry(const Action& a) {
    std::string& t = text_;
    const std::size_t line_begin = t.size();
    t += "{\"id\":\"L" + std::to_string(a.line) + "\",\"kind\":\"" + a.kind + "\",\"data\":";
    // The span, read again (its lone surrogate escapes rewritten as the line's were).
    const std::string bytes = read_record(source_, a.begin, static_cast<std::size_t>(a.end - a.begin));
    const std::string_view span = a.form == Action::Form::kUserText ? std::string_view() : bytes;
    const Note none;
    const Note& note = a.note == Action::kNoNote ? none : notes_[a.note];
    const std::string& text = note.text;
    std::size_t copied_at = 0;
    std::size_t copied_offset = 0;  // bytes of the span not copied at copied_at
    auto copy_span = [&] {
      copied_at = t.size();
      t += span;
    };
    switch (a.form) {
      case Action::Form::kMessage: t += "{\"message\":", copy_span(), t += "}"; break;
      case Action::Form::kChunk:
        t += text.empty() ? "{\"event\":" : "{\"streamKey\":" + text + ",\"event\":";
        copy_span();
        t += "}";
        break;
      case Action::Form::kCompaction:
        if (text.empty()) {
          copy_span();
        } else {
          // The event verbatim, with the kept window's entry first (R9's firstKeptRef).
          t += "{\"firstKeptRef\":" + json_quote(text) + ",";
          copied_at = t.size();
          t += span.substr(1);
          copied_offset = 1;
        }
        break;
      case Action::Form::kCompactionEntry: t += "{\"result\":", copy_span(), t += "}"; break;
      case Action::Form::kUserText:
      case Action::Form::kUserContent:
        t += "{\"message\":{\"role\":\"user\",\"content\":";
        if (a.form == Action::Form::kUserText)
          t += "[{\"type\":\"text\",\"text\":" + json_quote(user_text(note.command, bytes)) + "}]";
        else
          copy_span();
        if (!text.empty()) t += ",\"timestamp\":" + text;
        t += "}}";
        break;
    }
    t += "}\n";
    SourceMap::Origin o;
    o.line = a.line;
    o.column = a.column;
    if (!span.empty() && a.form != Action::Form::kUserText) {
      o.copied_column = copied_at - line_begin + 1;
      o.copied_size = span.size() - copied_offset;
      o.input_copied_column = a.span_column + copied_offset;
    }
    out_.origins.add(o, a.event);
  }

  // A user shell command's text, from the object the action points at (E6).
  static std::string user_text(const std::optional<std::string>& command, const std::string& object) {
    rapidjson::Document result;
    if (!object.empty()) result.Parse<rapidjson::kParseIterativeFlag>(object.data(), object.size());
    if (object.empty() || result.HasParseError() || !result.IsObject()) result.SetObject();
    return bash_execution_text(command, result);
  }

  struct BashCommand {
    std::string command;
    bool exclude_from_context = false;
  };

  static constexpr std::size_t kWriteBlockBytes = 1 << 20;  // the thread is handed over in blocks of about this

  const LogSource& source_;
  const std::string& file_;
  EventCapture out_;
  FindingsList listed_{out_.diagnostics};  // a capture of a million stderr lines lists a hundred
  std::string_view bytes_;                 // the line being read
  std::size_t line_begin_ = 0;             // its offset in the capture
  std::uint64_t text_column_ = 0;          // its column in the capture line
  std::uint64_t line_ = 0;
  std::string text_;  // the thread text not yet written
  // A deque: no copy of them all, and no spare half, as it grows.
  std::deque<Action> actions_;
  std::deque<Note> notes_;
  bool has_conversation_ = false;
  // The assistant message streaming now, and its deltas.
  bool stream_ = false;
  std::string stream_key_;
  std::uint64_t stream_line_ = 0, stream_column_ = 0;
  std::deque<Action> stream_chunks_;
  std::optional<std::string> session_id_, created_at_, cwd_, title_, thinking_;
  std::uint64_t session_line_ = 0;
  std::optional<Model> model_;
  std::uint64_t system_tokens_ = 0;  // the latest system prompt's estimate (E8)
  std::unordered_map<std::string, BashCommand> bash_commands_;
  std::set<std::string> unknown_types_;
};

}  // namespace

bool is_pi_event_type(std::string_view type) {
  return type != "session" && (mapped_types().count(type) > 0 || ignored_types().count(type) > 0);
}

EventCapture convert_event_capture(const LogSource& capture, const std::string& file,
                                   const std::function<void(std::string& text)>& write) {
  return CaptureReader(capture, file).run(write);
}

EventCapture convert_event_capture(std::string capture, const std::string& file) {
  const BytesSource source(std::move(capture));
  std::string thread;
  EventCapture out = convert_event_capture(source, file, [&thread](std::string& text) {
    thread += text;
    text.clear();
  });
  out.thread = std::move(thread);
  return out;
}

}  // namespace pihydrate
