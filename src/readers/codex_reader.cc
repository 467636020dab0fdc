// Codex rollout -> pi v3 session, by the rules of docs/codex.md (K1-K11;
// the comments name them).
#include <cstdint>
#include <deque>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

#include <rapidjson/stringbuffer.h>

#include "pihydrate/formats.h"
#include "readers/head_record.h"
#include "readers/readers.h"
#include "readers/transcript_writer.h"

namespace pihydrate {
namespace {

// K4: what Codex puts before the user's prompt in the user role: its
// harness context, which it writes afresh for each session (pi has its own).
bool is_harness_context(std::string_view text) {
  for (const char* tag :
       {"<environment_context>", "<permissions instructions>", "<skills_instructions>", "<user_instructions>",
        "# AGENTS.md instructions", "<apps_instructions>", "<collaboration_mode>", "<personality_spec>"})
    if (text.rfind(tag, 0) == 0) return true;
  return false;
}

// K8: the exit code in exec_command's output header ("Process exited with code N"); 0 when none.
long exit_code_of(std::string_view output) {
  const std::string_view marker = "Process exited with code ";
  const std::size_t at = output.substr(0, output.find("\nOutput:")).find(marker);  // the header's, not the output's
  if (at == std::string_view::npos) return 0;
  return std::strtol(std::string(output.substr(at + marker.size(), 12)).c_str(), nullptr, 10);
}

class CodexReader {
 public:
  CodexReader(const std::string& file, std::string& text, ReadSession& out, SessionSpool* spool = nullptr)
      : out_(out), write_(file, text, out, spool) {}

  void run(const LogSource& rollout, const std::string& file) {
    read_transcript(rollout, file, out_, [this](TranscriptRecord&& r) { read(std::move(r)); });
    if (!out_.ok()) return;
    close_reply();
    if (!wrote_conversation_) {
      write_.error(0, 0, "the rollout holds no conversation (no user or assistant response_item)",
                   "a Codex rollout is ~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl");
      return;
    }
  }

 private:
  // An assistant-side item waiting for its reply to end (K5).
  struct ReplyItem {
    const JsonValue* item;
    std::uint64_t line, column;
    std::string model, timestamp;  // K7: the turn's model and the item's time, as they were when it was read
  };

  void read(TranscriptRecord&& r) {
    records_.push_back(std::move(r.doc));
    const std::size_t open_items = reply_.size();
    const JsonValue* open_usage = reply_usage_;
    convert_record(records_.back(), r);
    // Only the records an open reply points into are kept: once no reply is
    // open, none (the rollout is never held whole).
    if (reply_.empty())
      records_.clear();
    else if (reply_.size() <= open_items && reply_usage_ == open_usage)
      records_.pop_back();
  }

  void convert_record(const JsonValue& record, const TranscriptRecord& r) {
    const std::string type = json_string(record, "type");
    const JsonValue* payload = json_member(record, "payload");
    const std::string timestamp = json_string(record, "timestamp");
    if (!timestamp.empty()) timestamp_ = timestamp;
    if (payload == nullptr || !payload->IsObject()) {
      write_.error(r.line, r.column,
                   "a rollout line is {\"timestamp\", \"type\", \"payload\": {...}}; this one has no "
                   "payload object");
      return;
    }
    if (type == "session_meta") {
      session_meta(*payload, r);
    } else if (type == "turn_context") {
      // K7: the model of the turn's replies.
      const std::string model = json_string(*payload, "model");
      if (!model.empty()) model_ = model;
    } else if (type == "response_item") {
      response_item(*payload, r);
    } else if (type == "compacted") {
      compacted(*payload, r);
    } else if (type == "event_msg") {
      // K3: what the CLI showed; the conversation is in the response items.
      write_.count("codex-event-records");
    } else {
      // K5: a response's token counts follow its items, while its reply is still open.
      if (type == "token_usage_record" && !reply_.empty()) {
        reply_usage_ = json_member(*payload, "usage");
        reply_response_id_ = json_string(*payload, "response_id");
      }
      // K3: the CLI's own state (world_state, token_usage_record, ...).
      write_.count("codex-bookkeeping-records");
    }
  }

  // K1, K2: the header is the first session_meta; the entries are one chain,
  // ids made from their place, times from their lines.
  void session_meta(const JsonValue& payload, const TranscriptRecord& r) {
    // K1: a resumed session writes its meta again; the first one is the session.
    if (!header_written_) {
      header_written_ = true;
      std::string timestamp = json_string(payload, "timestamp");
      if (timestamp.empty()) timestamp = timestamp_;
      const std::string cwd = json_string(payload, "cwd");
      std::string id = json_string(payload, "id");
      // Without an id, one of its own from the rollout's start (not one shared by every such file).
      if (id.empty()) id = derived_session_id("codex:" + timestamp + json_string(payload, "cwd"));
      write_.header(id, timestamp, cwd.empty() ? "/" : cwd, {r.line, r.column, "session_meta"});
    }
  }

  void response_item(const JsonValue& item, const TranscriptRecord& r) {
    const std::string type = json_string(item, "type");
    if (!header_written_) {
      write_.error(r.line, r.column, "response_item before session_meta",
                   "a Codex rollout starts with its session_meta line");
      return;
    }
    if (type == "message") {
      const std::string role = json_string(item, "role");
      if (role == "assistant") {
        reply_.push_back({&item, r.line, r.column, model_, timestamp_});
      } else if (role == "user") {
        user_message(item, r);
      } else {
        // K4: developer and system messages are Codex's instructions, built afresh each turn.
        write_.count("codex-instructions-dropped");
      }
    } else if (type == "reasoning" || type == "function_call" || type == "custom_tool_call" ||
               type == "local_shell_call") {
      reply_.push_back({&item, r.line, r.column, model_, timestamp_});
    } else if (type == "agent_message") {
      // K11: another agent's message (a subagent's answer) is input the model reads, as a user's is.
      user_message(item, r);
    } else if (type == "function_call_output" || type == "custom_tool_call_output") {
      tool_output(item, r);
    } else {
      // K10: items only the provider can use again (web_search_call, compaction, ghost_snapshot, ...).
      write_.warn(r.line, r.column,
                  "response_item " + (type.empty() ? std::string("(no type)") : "\"" + type + "\"") +
                      " has no pi equivalent; left out",
                  "codex-items-dropped");
    }
  }

  void user_message(const JsonValue& item, const TranscriptRecord& r) {
    const JsonValue* content = json_member(item, "content");
    if (content == nullptr || !content->IsArray()) {
      write_.error(r.line, r.column, "response_item message: content is not a list");
      return;
    }
    std::vector<const JsonValue*> parts;
    bool harness = false;
    for (const JsonValue& part : content->GetArray()) {
      const std::string type = json_string(part, "type");
      if (type == "input_text") {
        if (is_harness_context(json_string(part, "text"))) {
          harness = true;
          write_.count("codex-harness-context-dropped");
        } else {
          parts.push_back(&part);
        }
      } else if (type == "input_image") {
        std::string mime, data;
        if (split_data_url(json_string(part, "image_url"), mime, data))
          parts.push_back(&part);
        else
          write_.warn(r.line, r.column, "an image that is not a base64 data URL cannot be sent by pi; left out",
                      "codex-items-dropped");
      } else {
        write_.warn(r.line, r.column, "a user message's \"" + type + "\" part has no pi equivalent; left out",
                    "codex-items-dropped");
      }
    }
    if (parts.empty()) {
      if (!harness) write_.count("codex-empty-user-messages");
      return;
    }
    close_reply();
    entry("message", {r.line, r.column, "response_item " + json_string(item, "type")}, [&](JsonWriter& w) {
      begin_message(w, "user");
      for (const JsonValue* part : parts) {
        if (json_string(*part, "type") == "input_text") {
          write_text_block(w, json_string(*part, "text"));
        } else {
          std::string mime, data;
          split_data_url(json_string(*part, "image_url"), mime, data);
          write_image_block(w, data, mime);
        }
      }
      w.EndArray();
      w.Key("timestamp");
      w.Int64(millis());
      w.EndObject();
    });
  }

  void tool_output(const JsonValue& item, const TranscriptRecord& r) {
    close_reply();
    const std::string call_id = json_string(item, "call_id");
    auto name = tool_names_.find(call_id);
    const JsonValue* output = json_member(item, "output");
    entry("message", {r.line, r.column, "response_item " + json_string(item, "type")}, [&](JsonWriter& w) {
      begin_tool_result(w, call_id, name == tool_names_.end() ? "" : name->second);
      bool failed = false;
      if (output && output->IsString()) {
        const std::string_view text(output->GetString(), output->GetStringLength());
        write_text_block(w, text);
        failed = exit_code_of(text) != 0;
      } else if (output && output->IsArray()) {
        for (const JsonValue& part : output->GetArray()) {
          const std::string type = json_string(part, "type");
          std::string mime, data;
          if (type == "input_text" || type == "output_text") {
            write_text_block(w, json_string(part, "text"));
          } else if (type == "input_image" && split_data_url(json_string(part, "image_url"), mime, data)) {
            write_image_block(w, data, mime);
          } else {
            write_.warn(r.line, r.column, "a tool output's \"" + type + "\" part has no pi equivalent; left out",
                        "codex-items-dropped");
          }
        }
      } else if (output && output->IsObject()) {
        // Older rollouts: {"content": "...", "success": bool}.
        write_text_block(w, json_string(*output, "content"));
        const JsonValue* success = json_member(*output, "success");
        failed = success && success->IsBool() && !success->GetBool();
      }
      w.EndArray();
      w.Key("isError");
      w.Bool(failed);
      w.Key("timestamp");
      w.Int64(millis());
      w.EndObject();
    });
  }

  void compacted(const JsonValue& payload, const TranscriptRecord& r) {
    const std::string summary = json_string(payload, "message");
    // K9: the reply that wrote the summary is the compaction's, not a turn of the conversation.
    const std::string reply = reply_.empty() ? std::string() : message_text(*reply_.back().item);
    if (!reply.empty() && summary.size() >= reply.size() &&
        summary.compare(summary.size() - reply.size(), reply.size(), reply) == 0) {
      reply_.pop_back();
      while (!reply_.empty() && json_string(*reply_.back().item, "type") == "reasoning") reply_.pop_back();
      reply_usage_ = nullptr;  // the summary request's counts
      reply_response_id_.clear();
      write_.count("codex-summary-reply");
    }
    close_reply();
    // K9: Codex keeps the user's recent prompts beside the summary, before
    // it; a pi compaction keeps a window of entries after it, so they are
    // not carried over: said, never silent.
    std::uint64_t retained = 0;
    if (const JsonValue* history = json_member(payload, "replacement_history"); history && history->IsArray())
      for (const JsonValue& item : history->GetArray())
        if (json_string(item, "type") == "message" && json_string(item, "role") == "user" &&
            !user_texts(item).empty() && user_texts(item) != summary)
          ++retained;
    if (retained != 0)
      write_.warn(r.line, r.column,
                  "compacted: Codex kept " + std::to_string(retained) +
                      " user message(s) beside the summary; pi keeps the summary only",
                  "codex-retained-messages-dropped");
    const std::string id = next_id();
    entry_with_id("compaction", id, {r.line, r.column, "compacted"}, [&](JsonWriter& w) {
      write_key_string(w, "summary", summary);
      write_key_string(w, "firstKeptEntryId", id);  // itself: nothing before it is kept
      w.Key("tokensBefore");
      w.Uint64(0);
    });
  }

  // A user message's texts, without Codex's harness context.
  static std::string user_texts(const JsonValue& item) {
    std::string text;
    if (const JsonValue* content = json_member(item, "content"); content && content->IsArray())
      for (const JsonValue& part : content->GetArray())
        if (json_string(part, "type") == "input_text" && !is_harness_context(json_string(part, "text")))
          text += json_string(part, "text");
    return text;
  }

  // An assistant message item's text ("" for the other items).
  static std::string message_text(const JsonValue& item) {
    std::string text;
    if (json_string(item, "type") != "message") return text;
    if (const JsonValue* content = json_member(item, "content"); content && content->IsArray())
      for (const JsonValue& part : content->GetArray()) text += json_string(part, "text");
    return text;
  }

  // K5: the assistant-side items between two user messages or tool outputs are one pi assistant message.
  void close_reply() {
    if (reply_.empty()) return;
    std::vector<ReplyItem> items;
    items.swap(reply_);
    bool has_calls = false;
    const ReplyItem& first = items.front();
    const JsonValue* usage = std::exchange(reply_usage_, nullptr);
    const std::string response_id = std::exchange(reply_response_id_, std::string());
    // The reply's time is its first item's, not that of the line that ended it.
    const std::string closing_time = std::exchange(timestamp_, first.timestamp);
    entry("message", {first.line, first.column, "response_item " + json_string(*first.item, "type")},
          [&](JsonWriter& w) {
            begin_message(w, "assistant");
            for (const ReplyItem& ri : items) has_calls = write_reply_item(w, *ri.item) || has_calls;
            w.EndArray();
            write_key_string(w, "api", "openai-responses");
            write_key_string(w, "provider", "openai");
            write_key_string(w, "model", first.model);
            // OpenAI counts cached input inside input_tokens; pi counts it apart.
            static const JsonValue no_usage(rapidjson::kObjectType);
            const JsonValue& u = usage != nullptr && usage->IsObject() ? *usage : no_usage;
            const std::uint64_t cached = json_count(u, "cached_input_tokens");
            const std::uint64_t input = json_count(u, "input_tokens");
            write_usage(w, input > cached ? input - cached : 0, json_count(u, "output_tokens"), cached,
                        json_count(u, "cache_write_input_tokens"));
            write_key_string(w, "stopReason", has_calls ? "toolUse" : "stop");
            w.Key("timestamp");
            w.Int64(millis());
            if (!response_id.empty()) write_key_string(w, "responseId", response_id);
            w.EndObject();
          });
    timestamp_ = closing_time;
  }

  // Writes one item's blocks; true for a tool call.
  bool write_reply_item(JsonWriter& w, const JsonValue& item) {
    const std::string type = json_string(item, "type");
    if (type == "message") {
      const JsonValue* content = json_member(item, "content");
      if (content && content->IsArray())
        for (const JsonValue& part : content->GetArray())
          if (json_string(part, "type") == "output_text") write_text_block(w, json_string(part, "text"));
      return false;
    }
    if (type == "reasoning") {
      // K6: the summary is what can be read; the whole item, encrypted content
      // included, is the signature, as pi keeps an OpenAI reasoning item.
      std::string text;
      if (const JsonValue* summary = json_member(item, "summary"); summary && summary->IsArray())
        for (const JsonValue& part : summary->GetArray())
          text += (text.empty() ? "" : "\n\n") + json_string(part, "text");
      // Only the fields the Responses API takes back (Codex sends no others).
      rapidjson::StringBuffer signature;
      JsonWriter sw(signature);
      sw.StartObject();
      for (const char* key : {"type", "id", "summary", "content", "encrypted_content"})
        if (const JsonValue* v = json_member(item, key)) {
          sw.Key(key);
          v->Accept(sw);
        }
      sw.EndObject();
      w.StartObject();
      write_key_string(w, "type", "thinking");
      write_key_string(w, "thinking", text);
      write_key_string(w, "thinkingSignature", std::string_view(signature.GetString(), signature.GetSize()));
      w.EndObject();
      return false;
    }
    // K7: calls keep Codex's id and name; arguments become an object.
    const std::string call_id = json_string(item, "call_id");
    std::string name = json_string(item, "name");
    if (type == "local_shell_call") name = "local_shell";
    tool_names_[call_id] = name;
    w.StartObject();
    write_key_string(w, "type", "toolCall");
    write_key_string(w, "id", call_id);
    write_key_string(w, "name", name);
    w.Key("arguments");
    if (type == "function_call") {
      const std::string arguments = json_string(item, "arguments");
      rapidjson::Document parsed;
      parsed.Parse(arguments.data(), arguments.size());
      if (!parsed.HasParseError() && parsed.IsObject()) {
        parsed.Accept(w);
      } else {
        w.StartObject();
        write_key_string(w, "input", arguments);
        w.EndObject();
      }
    } else if (type == "custom_tool_call") {
      w.StartObject();
      write_key_string(w, "input", json_string(item, "input"));
      w.EndObject();
    } else {  // local_shell_call
      write_object_or_empty(w, json_member(item, "action"));
    }
    w.EndObject();
    return true;
  }

  std::string next_id() { return entry_ids_.id_for("codex:" + std::to_string(++entries_)); }

  void entry(const char* type, const TranscriptOrigin& origin, const std::function<void(JsonWriter&)>& members) {
    entry_with_id(type, next_id(), origin, members);
  }

  void entry_with_id(const char* type, const std::string& id, const TranscriptOrigin& origin,
                     const std::function<void(JsonWriter&)>& members) {
    write_.entry(type, id, last_id_, timestamp_, origin, members);
    last_id_ = id;
    wrote_conversation_ = true;
  }

  std::int64_t millis() {
    last_millis_ = millis_of(timestamp_, last_millis_);
    return last_millis_;
  }

  ReadSession& out_;
  TranscriptWriter write_;
  std::deque<rapidjson::Document> records_;  // those the open reply points into
  std::vector<ReplyItem> reply_;
  const JsonValue* reply_usage_ = nullptr;  // the open reply's token counts (token_usage_record), if any
  std::string reply_response_id_;
  std::unordered_map<std::string, std::string> tool_names_;
  EntryIds entry_ids_;
  std::string model_, timestamp_, last_id_;
  std::int64_t last_millis_ = 0;
  std::uint64_t entries_ = 0;
  bool header_written_ = false, wrote_conversation_ = false;
};

}  // namespace

std::string convert_codex(std::string rollout, const std::string& file, ReadSession& out) {
  std::string text;
  CodexReader(file, text, out).run(BytesSource(std::move(rollout)), file);
  if (!out.ok()) text.clear();
  return text;
}

namespace {

class CodexFormat final : public Reader {
 public:
  const ReaderInfo& info() const override {
    static const ReaderInfo info{"codex",
                                 "Codex rollout",
                                 "lines of {\"timestamp\",\"type\",\"payload\"}",
                                 "Codex rollout lines",
                                 "~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl",
                                 "docs/codex.md"};
    return info;
  }
  int bid(const InputHead& head) const override {
    rapidjson::Document doc;
    if (head.lines.empty() || !parse_head_record(head.lines[0], doc)) return kBidNone;
    const JsonValue* payload = json_member(doc, "payload");
    return payload != nullptr && payload->IsObject() && !json_string(doc, "type").empty() &&
                   json_member(doc, "timestamp") != nullptr
               ? kBidMarker
               : kBidNone;
  }
  // A rollout has no tree: --leaf names an entry of the session written, as for pi's files.
  ReadSession read(const ReaderInput& input, const ReadOptions& options) const override {
    const std::string& file = input.name();
    return read_transcript(input, options,
                           [&](const LogSource& source, std::string& text, SessionSpool* spool, ReadSession& out) {
                             CodexReader(file, text, out, spool).run(source, file);
                           });
  }
};

}  // namespace

const Reader& codex_reader() {
  static const CodexFormat reader;
  return reader;
}

}  // namespace pihydrate
