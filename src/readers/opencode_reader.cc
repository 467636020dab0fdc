// OpenCode session (its SQLite database, or `opencode export` JSON) -> pi v3
// session, by the rules of docs/opencode.md (O1-O12; the comments name them).
// Kilo CLI, a fork of OpenCode, is read by the same code under its own names
// (KL1-KL3): the reader is made once per OpencodeProduct.
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <deque>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <unordered_map>
#include <vector>

#include <rapidjson/error/en.h>

#include "core/json_spans.h"
#include "pihydrate/formats.h"
#include "readers/opencode_store.h"
#include "readers/readers.h"
#include "readers/thread_converter.h"
#include "readers/transcript_writer.h"

namespace pihydrate {
namespace {

constexpr std::string_view kSqliteMagic("SQLite format 3\0", 16);
constexpr unsigned kParseFlags = rapidjson::kParseIterativeFlag;  // no recursion: nesting cannot overflow the stack

// O4: what OpenCode sends for parts that carry no text of their own.
constexpr const char* kCompactionPrompt = "What did we do so far?";
constexpr const char* kSubtaskText = "The following tool was executed by the user";
// O6: what OpenCode sends for a result it cleared, and for a call that never finished.
constexpr const char* kClearedResult = "[Old tool result content cleared]";
constexpr const char* kInterrupted = "[Tool execution was interrupted]";

// O12: parts that mark OpenCode's own steps and files; none reaches the model.
bool is_bookkeeping_part(const std::string& type) {
  return type == "step-start" || type == "step-finish" || type == "snapshot" || type == "patch" || type == "agent" ||
         type == "retry";
}

// A message of the session as the mapping sees it, whichever store it came from.
struct Message {
  std::string id;
  const JsonValue* info = nullptr;
  std::vector<const JsonValue*> parts;
  std::vector<std::string> part_ids;
  std::int64_t created = 0;
};

std::string role_of(const Message& m) { return json_string(*m.info, "role"); }

const JsonValue* path_of(const JsonValue& v, std::initializer_list<const char*> keys) {
  const JsonValue* at = &v;
  for (const char* k : keys) {
    at = json_member(*at, k);
    if (at == nullptr) return nullptr;
  }
  return at;
}

std::int64_t int_of(const JsonValue* v) { return v != nullptr && v->IsInt64() ? v->GetInt64() : 0; }

// O7: the API pi names for the provider that answered.
std::string api_of(const Message& m) {
  const std::string provider = json_string(*m.info, "providerID");
  for (const JsonValue* part : m.parts) {
    const JsonValue* meta = json_member(*part, "metadata");
    if (meta == nullptr || !meta->IsObject()) continue;
    if (json_member(*meta, "anthropic")) return "anthropic-messages";
    if (json_member(*meta, "openai")) return "openai-responses";
    if (json_member(*meta, "google")) return "google-generative-ai";
  }
  if (provider.find("anthropic") != std::string::npos) return "anthropic-messages";
  if (provider.find("openai") != std::string::npos) return "openai-responses";
  if (provider.find("google") != std::string::npos) return "google-generative-ai";
  if (json_string(*m.info, "modelID").rfind("claude", 0) == 0) return "anthropic-messages";
  return "openai-completions";
}

// O7: OpenCode's finish reasons (the AI SDK's) as pi's stop reasons.
const char* stop_reason_of(const std::string& finish, bool has_calls) {
  if (finish == "tool-calls") return "toolUse";
  if (finish == "length") return "length";
  if (finish.empty() || finish == "unknown" || finish == "other") return has_calls ? "toolUse" : "stop";
  return "stop";
}

class OpencodeConverter {
 public:
  OpencodeConverter(const OpencodeProduct& product, const std::string& file, std::string& text, ReadSession& out)
      : product_(product), out_(out), write_(file, text, out) {}

  void run(const OpencodeSessionRow& session, std::vector<Message>& messages) {
    std::vector<const Message*> kept;
    drop_reverted(session, messages, kept);
    find_compactions(kept);
    for (const Message* m : kept) plan(*m);
    if (!out_.ok()) return;
    if (pending_.empty()) {
      write_.error(
          0, 0, "session " + session.id + " holds no conversation (no user or assistant message)",
          std::string(product_.a_product) + " session is rows of the tables message and part with its session_id");
      return;
    }
    // O2: the header: OpenCode's session id (pi's rule allows ses_...), its start and folder.
    const std::string id =
        is_valid_session_id(session.id)
            ? session.id
            : derived_session_id(std::string(product_.name) + ":" + session.id + std::to_string(session.created));
    write_.header(id, thread_converter::iso_from_ms(session.created),
                  session.directory.empty() ? "/" : session.directory, {0, 0, "session " + session.id});
    out_.session_id = id;
    for (const Pending& p : pending_) write(p);
    // O11: the title OpenCode gave the session.
    if (!session.title.empty()) {
      const Pending& last = pending_.back();
      write_.entry("session_info", entry_ids_.id_for("session_info"), last.id, last.timestamp, last.origin,
                   [&](JsonWriter& w) { write_key_string(w, "name", session.title); });
    }
  }

 private:
  struct Pending {
    enum class Kind { kUser, kAssistant, kToolResult, kCompaction };
    Kind kind = Kind::kUser;
    std::string id, parent, timestamp;
    std::int64_t millis = 0;
    TranscriptOrigin origin;
    const Message* message = nullptr;
    std::vector<const JsonValue*> parts;  // user: text and file parts; assistant: its blocks
    const JsonValue* tool = nullptr;      // tool result: the tool part
    std::vector<std::string> texts;       // user: texts OpenCode makes for a part (O4); compaction: the summary
    std::string first_kept;               // compaction: the message its kept window starts at
  };

  // O10: a session the user reverted (/undo) hides the messages from the
  // revert point on; OpenCode deletes them at the next prompt.
  void drop_reverted(const OpencodeSessionRow& session, std::vector<Message>& messages,
                     std::vector<const Message*>& kept) {
    std::string from;
    if (!session.revert.empty()) {
      rapidjson::Document revert;
      revert.Parse(session.revert.data(), session.revert.size());
      if (!revert.HasParseError() && revert.IsObject()) from = json_string(revert, "messageID");
    }
    bool hidden = false;
    for (const Message& m : messages) {
      if (!from.empty() && m.id == from) hidden = true;
      if (hidden) {
        write_.count(key("reverted-messages"));
        continue;
      }
      kept.push_back(&m);
    }
  }

  // O8: a compaction is a user message with a compaction part and the
  // summary the model wrote in reply (an assistant with "summary": true).
  void find_compactions(const std::vector<const Message*>& kept) {
    for (const Message* m : kept) {
      if (role_of(*m) != "assistant" || !json_true(*m->info, "summary")) continue;
      if (json_member(*m->info, "error") != nullptr || json_string(*m->info, "finish").empty()) continue;
      summary_of_[json_string(*m->info, "parentID")] = m;
    }
  }

  // A counter's name: the reader's name, then what it counts ("opencode-failed-commands").
  std::string key(const char* what) const { return std::string(product_.name) + "-" + what; }

  TranscriptOrigin origin(const Message& m, const std::string& what) const { return {0, 0, what + " " + m.id}; }

  void add(const Message& m, Pending&& p, const std::string& key) {
    p.id = entry_ids_.id_for(key);
    p.parent = pending_.empty() ? std::string() : pending_.back().id;
    p.millis = m.created > 0 ? m.created : last_millis_;
    last_millis_ = p.millis;
    p.timestamp = thread_converter::iso_from_ms(p.millis);
    p.message = &m;
    entry_of_.emplace(m.id, p.id);
    pending_.push_back(std::move(p));
  }

  void plan(const Message& m) {
    const std::string role = role_of(m);
    if (role == "user") {
      user(m);
    } else if (role == "assistant") {
      if (summaries_written_.count(&m) != 0) return;
      assistant(m);
    } else {
      write_.warn(0, 0,
                  "message " + m.id + ": role \"" + role + "\" is not one " + product_.product + " sends; left out",
                  key("unknown-messages"));
    }
  }

  // O4: a user message: its texts (the CLI's synthetic ones too: the model
  // reads them), its images; a compaction (O8) or subtask part as OpenCode sends it.
  void user(const Message& m) {
    Pending p;
    p.kind = Pending::Kind::kUser;
    p.origin = origin(m, "user message");
    bool compaction = false;
    for (const JsonValue* part : m.parts) {
      const std::string type = json_string(*part, "type");
      if (type == "text") {
        if (json_true(*part, "ignored") || json_string(*part, "text").empty()) {
          write_.count(key("ignored-texts"));
          continue;
        }
        p.parts.push_back(part);
      } else if (type == "file") {
        file(m, *part, p);
      } else if (type == "compaction") {
        compaction = true;
      } else if (type == "subtask") {
        p.texts.emplace_back(kSubtaskText);
        p.parts.push_back(part);
      } else {
        other_part(m, type);
      }
    }
    if (compaction) {
      auto summary = summary_of_.find(m.id);
      if (summary != summary_of_.end()) {
        compaction_entry(m, *part_with(m, "compaction"), *summary->second);
        return;
      }
      // A compaction whose summary failed: OpenCode sends its question, and no summary.
      p.texts.emplace_back(kCompactionPrompt);
      p.parts.push_back(part_with(m, "compaction"));
    }
    if (p.parts.empty()) {
      write_.count(key("empty-messages"));
      return;
    }
    add(m, std::move(p), m.id);
  }

  static const JsonValue* part_with(const Message& m, const char* type) {
    for (const JsonValue* part : m.parts)
      if (json_string(*part, "type") == type) return part;
    return nullptr;
  }

  // O4: an image the user attached travels as base64; a text file or folder
  // was read into synthetic text parts already; anything else pi cannot send.
  void file(const Message& m, const JsonValue& part, Pending& p) {
    const std::string mime = json_string(part, "mime");
    if (mime == "text/plain" || mime == "application/x-directory") {
      write_.count(key("file-parts-read-as-text"));
      return;
    }
    std::string media, data;
    if (mime.rfind("image/", 0) == 0 && split_data_url(json_string(part, "url"), media, data)) {
      p.parts.push_back(&part);
      return;
    }
    write_.warn(0, 0,
                "user message " + m.id + ": a file part (" + (mime.empty() ? "no type" : mime) +
                    ") that is not a base64 image cannot be sent by pi; left out",
                key("parts-dropped"));
  }

  void other_part(const Message& m, const std::string& type) {
    if (is_bookkeeping_part(type)) {
      write_.count(key("bookkeeping-parts"));
    } else if (unknown_parts_.insert(type).second) {
      write_.warn(0, 0,
                  "message " + m.id + ": a part of type \"" + type +
                      "\" is not one this reader knows; left out (and any later ones)",
                  key("unknown-parts"));
    } else {
      write_.count(key("unknown-parts"));
    }
  }

  // O5, O6: one provider call: the assistant message, then one result per tool part.
  void assistant(const Message& m) {
    const JsonValue* error = json_member(*m.info, "error");
    bool content = false;
    for (const JsonValue* part : m.parts) {
      const std::string type = json_string(*part, "type");
      if (type != "step-start" && type != "reasoning") content = true;
    }
    const bool aborted = error != nullptr && json_string(*error, "name") == "MessageAbortedError";
    Pending p;
    p.kind = Pending::Kind::kAssistant;
    p.origin = origin(m, "assistant message");
    std::vector<const JsonValue*> tools;
    for (const JsonValue* part : m.parts) {
      const std::string type = json_string(*part, "type");
      if (type == "text") {
        if (json_string(*part, "text").empty()) continue;
        p.parts.push_back(part);
      } else if (type == "reasoning") {
        p.parts.push_back(part);
      } else if (type == "tool") {
        p.parts.push_back(part);
        tools.push_back(part);
      } else {
        other_part(m, type);
      }
    }
    // O7: a failed call (not an abort that left content) is an error pi leaves out, as OpenCode does.
    if (error != nullptr && !(aborted && content)) {
      // Its calls never ran as far as the model knows: only what it said is kept with the error.
      p.parts.erase(std::remove_if(p.parts.begin(), p.parts.end(),
                                   [](const JsonValue* part) { return json_string(*part, "type") == "tool"; }),
                    p.parts.end());
      p.texts.push_back(error_text(*error));
      add(m, std::move(p), m.id);
      return;
    }
    if (p.parts.empty()) {
      write_.count(key("empty-messages"));
      return;
    }
    add(m, std::move(p), m.id);
    for (const JsonValue* tool : tools) {
      Pending r;
      r.kind = Pending::Kind::kToolResult;
      r.origin = origin(m, "tool part " + json_string(*tool, "callID") + " of");
      r.tool = tool;
      add(m, std::move(r), m.id + "#" + json_string(*tool, "callID"));
    }
  }

  static std::string error_text(const JsonValue& error) {
    const JsonValue* data = json_member(error, "data");
    std::string message = data ? json_string(*data, "message") : std::string();
    if (message.empty()) message = json_string(error, "name");
    return message.empty() ? "the request failed" : message;
  }

  // O8: the summary and the window OpenCode keeps after it.
  void compaction_entry(const Message& m, const JsonValue& part, const Message& summary) {
    Pending p;
    p.kind = Pending::Kind::kCompaction;
    p.origin = origin(m, "compaction of user message");
    std::string text;
    for (const JsonValue* s : summary.parts)
      if (json_string(*s, "type") == "text") text += (text.empty() ? "" : "\n") + json_string(*s, "text");
    p.texts.push_back(text);
    const std::string tail = json_string(part, "tail_start_id");
    auto kept = entry_of_.find(tail);
    if (kept != entry_of_.end()) p.first_kept = kept->second;
    summaries_written_.insert(&summary);
    add(m, std::move(p), m.id);
  }

  void write(const Pending& p) {
    switch (p.kind) {
      case Pending::Kind::kUser: write_user(p); break;
      case Pending::Kind::kAssistant: write_assistant(p); break;
      case Pending::Kind::kToolResult: write_tool_result(p); break;
      case Pending::Kind::kCompaction:
        write_.entry("compaction", p.id, p.parent, p.timestamp, p.origin, [&](JsonWriter& w) {
          write_key_string(w, "summary", p.texts.front());
          write_key_string(w, "firstKeptEntryId", p.first_kept.empty() ? p.id : p.first_kept);
          w.Key("tokensBefore");
          w.Uint64(tokens_before_);
        });
        break;
    }
  }

  void write_user(const Pending& p) {
    write_.entry("message", p.id, p.parent, p.timestamp, p.origin, [&](JsonWriter& w) {
      begin_message(w, "user");
      std::size_t made = 0;
      for (const JsonValue* part : p.parts) {
        const std::string type = json_string(*part, "type");
        if (type == "text") {
          write_text_block(w, json_string(*part, "text"));
        } else if (type == "file") {
          std::string mime, data;
          split_data_url(json_string(*part, "url"), mime, data);
          write_image_block(w, data, json_string(*part, "mime"));
        } else {  // subtask, compaction: the text OpenCode sends for it
          write_text_block(w, p.texts[made++]);
        }
      }
      w.EndArray();
      w.Key("timestamp");
      w.Int64(p.millis);
      w.EndObject();
    });
  }

  void write_assistant(const Pending& p) {
    const JsonValue& info = *p.message->info;
    bool has_calls = false;
    write_.entry("message", p.id, p.parent, p.timestamp, p.origin, [&](JsonWriter& w) {
      begin_message(w, "assistant");
      for (const JsonValue* part : p.parts) {
        const std::string type = json_string(*part, "type");
        w.StartObject();
        if (type == "text") {
          write_key_string(w, "type", "text");
          write_key_string(w, "text", json_string(*part, "text"));
        } else if (type == "reasoning") {
          // O5: the provider's signature stays: pi sends it back only to the model that wrote it.
          write_key_string(w, "type", "thinking");
          write_key_string(w, "thinking", json_string(*part, "text"));
          const JsonValue* anthropic = path_of(*part, {"metadata", "anthropic"});
          const std::string signature = anthropic ? json_string(*anthropic, "signature") : std::string();
          const std::string redacted = anthropic ? json_string(*anthropic, "redactedData") : std::string();
          if (!signature.empty()) write_key_string(w, "thinkingSignature", signature);
          if (!redacted.empty()) {
            write_key_string(w, "thinkingSignature", redacted);
            w.Key("redacted");
            w.Bool(true);
          }
        } else {  // tool
          has_calls = true;
          write_key_string(w, "type", "toolCall");
          write_key_string(w, "id", json_string(*part, "callID"));
          write_key_string(w, "name", json_string(*part, "tool"));
          w.Key("arguments");
          const JsonValue* state = json_member(*part, "state");
          write_object_or_empty(w, state ? json_member(*state, "input") : nullptr);
        }
        w.EndObject();
      }
      w.EndArray();
      write_key_string(w, "api", api_of(*p.message));
      write_key_string(w, "provider", json_string(info, "providerID"));
      write_key_string(w, "model", json_string(info, "modelID"));
      const JsonValue* tokens = json_member(info, "tokens");
      static const JsonValue none(rapidjson::kObjectType);
      const JsonValue& t = tokens && tokens->IsObject() ? *tokens : none;
      const JsonValue* cache = json_member(t, "cache");
      const JsonValue& c = cache && cache->IsObject() ? *cache : none;
      write_usage(w, json_count(t, "input"), json_count(t, "output"), json_count(c, "read"), json_count(c, "write"));
      tokens_before_ = json_count(t, "input") + json_count(c, "read") + json_count(c, "write");
      if (!p.texts.empty()) {
        write_key_string(w, "stopReason", "error");
        write_key_string(w, "errorMessage", p.texts.front());
      } else {
        write_key_string(w, "stopReason", stop_reason_of(json_string(info, "finish"), has_calls));
      }
      w.Key("timestamp");
      w.Int64(p.millis);
      w.EndObject();
    });
  }

  // O6: the result as OpenCode sends it: the output of a completed call (a
  // failed command is one, its exit code in the output), the error of a
  // failed one, a note for one that never finished.
  void write_tool_result(const Pending& p) {
    const JsonValue& tool = *p.tool;
    const JsonValue* state = json_member(tool, "state");
    static const JsonValue none(rapidjson::kObjectType);
    const JsonValue& s = state && state->IsObject() ? *state : none;
    const std::string status = json_string(s, "status");
    const JsonValue* metadata = json_member(s, "metadata");
    std::string text;
    bool is_error = false;
    std::vector<const JsonValue*> images;
    if (status == "completed") {
      const JsonValue* compacted = path_of(s, {"time", "compacted"});
      if (compacted != nullptr && !compacted->IsNull()) {
        text = kClearedResult;
      } else {
        text = json_string(s, "output");
        if (const JsonValue* attachments = json_member(s, "attachments"); attachments && attachments->IsArray())
          for (const JsonValue& a : attachments->GetArray()) {
            std::string mime, data;
            if (json_string(a, "mime").rfind("image/", 0) == 0 && split_data_url(json_string(a, "url"), mime, data))
              images.push_back(&a);
            else
              write_.warn(0, 0, p.origin.record + ": an attachment that is not a base64 image is left out",
                          key("parts-dropped"));
          }
      }
      if (metadata != nullptr && json_member(*metadata, "exit") && int_of(json_member(*metadata, "exit")) != 0)
        write_.count(key("failed-commands"));
    } else if (status == "error") {
      const JsonValue* output = metadata ? json_member(*metadata, "output") : nullptr;
      if (metadata != nullptr && json_true(*metadata, "interrupted") && output && output->IsString()) {
        text = output->GetString();
      } else {
        text = json_string(s, "error");
        is_error = true;
      }
    } else {
      text = kInterrupted;
      is_error = true;
    }
    write_.entry("message", p.id, p.parent, p.timestamp, p.origin, [&](JsonWriter& w) {
      begin_tool_result(w, json_string(tool, "callID"), json_string(tool, "tool"));
      write_text_block(w, text);
      for (const JsonValue* a : images) {
        std::string mime, data;
        split_data_url(json_string(*a, "url"), mime, data);
        write_image_block(w, data, json_string(*a, "mime"));
      }
      w.EndArray();
      w.Key("isError");
      w.Bool(is_error);
      w.Key("timestamp");
      w.Int64(p.millis);
      w.EndObject();
    });
  }

  const OpencodeProduct& product_;
  ReadSession& out_;
  TranscriptWriter write_;
  std::vector<Pending> pending_;
  std::unordered_map<std::string, const Message*> summary_of_;  // compaction's user message id -> its summary
  std::set<const Message*> summaries_written_;
  std::unordered_map<std::string, std::string> entry_of_;  // message id -> its first pi entry
  EntryIds entry_ids_;
  std::set<std::string> unknown_parts_;
  std::uint64_t tokens_before_ = 0;
  std::int64_t last_millis_ = 0;
};

// The parsed rows of one session, kept alive while the mapping points into them.
struct ParsedSession {
  std::deque<rapidjson::Document> docs;
  std::vector<Message> messages;
};

// Parses a row's JSON; false (with PH605) when it is not an object.
const JsonValue* parse_row(const OpencodeProduct& product, std::string& data, const std::string& what,
                           ParsedSession& parsed, TranscriptWriter& report) {
  neutralize_lone_surrogates(data.data(), data.size());
  rapidjson::Document& doc = parsed.docs.emplace_back();
  doc.Parse<kParseFlags>(data.data(), data.size());
  if (doc.HasParseError() || !doc.IsObject()) {
    report.error(0, 0,
                 what + ": its data is not a JSON object" +
                     (doc.HasParseError() ? std::string(" (") + rapidjson::GetParseError_En(doc.GetParseError()) +
                                                " at byte " + std::to_string(doc.GetErrorOffset()) + ")"
                                          : std::string()),
                 std::string(product.product) +
                     " stores each message's and part's fields as one JSON object in the column data");
    return nullptr;
  }
  return &doc;
}

void from_rows(const OpencodeProduct& product, OpencodeSession& session, ParsedSession& parsed,
               TranscriptWriter& report, ReadSession& out) {
  for (OpencodeMessageRow& row : session.messages) {
    Message m;
    m.id = row.id;
    m.created = row.created;
    m.info = parse_row(product, row.data, "message " + row.id, parsed, report);
    if (m.info == nullptr) return;
    ++out.records_read;
    for (OpencodePartRow& part : row.parts) {
      const JsonValue* p = parse_row(product, part.data, "part " + part.id + " of message " + row.id, parsed, report);
      if (p == nullptr) return;
      ++out.records_read;
      m.parts.push_back(p);
      m.part_ids.push_back(part.id);
    }
    parsed.messages.push_back(std::move(m));
  }
}

// O1: the session taken from a database: the one --leaf names, else the
// newest top-level one; the others are listed in a warning.
bool choose_session(const OpencodeProduct& product, const std::vector<OpencodeSessionRow>& sessions,
                    const std::optional<std::string>& leaf, const std::string& file, OpencodeSessionRow& chosen,
                    ReadSession& out, TranscriptWriter& report) {
  std::string listing;
  for (const OpencodeSessionRow& s : sessions)
    listing += "\n      " + s.id + "  " + thread_converter::iso_from_ms(s.updated) + "  " + std::to_string(s.messages) +
               " messages  " + (s.parent_id.empty() ? "" : "(subagent of " + s.parent_id + ") ") + "\"" + s.title +
               "\"";
  const OpencodeSessionRow* found = nullptr;
  if (leaf) {
    for (const OpencodeSessionRow& s : sessions)
      if (s.id == *leaf) found = &s;
    if (found == nullptr) {
      out.diagnostics.push_back(Diagnostic{Code::kBranchNotFound, Severity::kError,
                                           code_info(Code::kBranchNotFound).level, file, 0, 0,
                                           "--leaf " + *leaf + ": the database holds no session with this id",
                                           "--leaf takes one of its sessions, the newest first:" + listing});
      return false;
    }
  } else {
    for (const OpencodeSessionRow& s : sessions)
      if (s.parent_id.empty() && found == nullptr) found = &s;
    if (found == nullptr && !sessions.empty()) found = &sessions.front();
    if (found == nullptr) {
      report.error(0, 0, "the database holds no session",
                   std::string(product.product) + " writes a session when `" + product.command +
                       " run` or its TUI is given a prompt");
      return false;
    }
  }
  chosen = *found;
  if (sessions.size() > 1) {
    std::uint64_t children = 0;
    for (const OpencodeSessionRow& s : sessions) children += s.parent_id == chosen.id ? 1 : 0;
    out.repairs[std::string(product.name) + "-other-sessions"] += sessions.size() - 1;
    out.diagnostics.push_back(Diagnostic{
        Code::kTranscriptRecordDropped, Severity::kWarning, code_info(Code::kTranscriptRecordDropped).level, file, 0, 0,
        "the database holds " + std::to_string(sessions.size()) + " sessions; converted " + chosen.id + " (" +
            (leaf ? "named by --leaf" : "the newest") + ", \"" + chosen.title + "\")" +
            (children ? ", whose " + std::to_string(children) + " subagent session(s) are not part of it" : ""),
        "--leaf SESSION_ID converts another; the sessions, the newest first:" + listing});
  }
  return true;
}

// KL1: whether `head` (a SQLite file's first bytes) shows a CREATE statement of the tables only
// `product`'s database has (`kilo_board`, `kilo_board_message`): the schema's b-tree starts on the
// first page, which keeps the statements it held before it grew past one page.
bool shows_table(std::string_view head, const OpencodeProduct& product) {
  if (*product.marker_table == '\0') return false;
  return head.find(std::string("CREATE TABLE `") + product.marker_table) != std::string_view::npos;
}

// The products read by this code: OpenCode and its forks (KL1).
const OpencodeProduct* const kProducts[] = {&opencode_product(), &kilo_cli_product()};

// KL1: the product whose database `db` is: a fork's when it holds the fork's table, else `chosen`.
const OpencodeProduct& product_of(const OpencodeDatabase& db, const OpencodeProduct& chosen) {
  if (*chosen.marker_table != '\0') return chosen;
  for (const OpencodeProduct* fork : kProducts)
    if (*fork->marker_table != '\0' && db.has_table(fork->marker_table)) return *fork;
  return chosen;
}

class OpencodeFormat final : public Reader {
 public:
  explicit OpencodeFormat(const OpencodeProduct& product)
      : product_(product),
        title_(std::string(product.product) + " session"),
        records_(std::string(product.product) + " messages and parts"),
        recognised_by_(
            *product.marker_table == '\0'
                ? std::string("a SQLite database, or JSON {\"info\": {\"id\": \"ses_...\"}, \"messages\": [...]}")
                : std::string("a SQLite database with a table ") + product.marker_table),
        info_{product.name,     title_.c_str(),   recognised_by_.c_str(),
              records_.c_str(), product.database, "docs/opencode.md"} {}

  const ReaderInfo& info() const override { return info_; }

  int bid(const InputHead& head) const override {
    if (head.text.substr(0, kSqliteMagic.size()) == kSqliteMagic) {
      // KL1: a fork's database is OpenCode's plus tables of its own; OpenCode's own has none.
      if (*product_.marker_table != '\0') return shows_table(head.text, product_) ? kBidMarker : kBidNone;
      for (const OpencodeProduct* fork : kProducts)
        if (shows_table(head.text, *fork)) return kBidShape;
      return kBidMarker;
    }
    // KL2: an export is the same JSON whichever CLI printed it; OpenCode's reader takes it, --from a fork's.
    if (*product_.marker_table != '\0') return kBidNone;
    // `opencode export`: {"info": {"id": "ses_...", ...}, "messages": [...]}, pretty-printed.
    std::string_view t = head.text;
    auto skip = [&t] {
      while (!t.empty() && (t.front() == ' ' || t.front() == '\n' || t.front() == '\r' || t.front() == '\t'))
        t.remove_prefix(1);
    };
    for (std::string_view token : {"{", "\"info\"", ":", "{", "\"id\"", ":", "\"ses_"}) {
      skip();
      if (t.substr(0, token.size()) != token) return kBidNone;
      t.remove_prefix(token.size());
    }
    return kBidMarker;
  }

  ReadSession read(const ReaderInput& input, const ReadOptions& options) const override {
    ReadSession out;
    std::string text;
    TranscriptWriter report(input.name(), text, out);
    OpencodeSession session;
    ParsedSession parsed;
    std::unique_ptr<rapidjson::Document> exported;
    const OpencodeProduct* product = &product_;  // KL1: a fork's when the database holds its tables
    std::string head(16, '\0');
    const std::string bytes_for_export = starts_as_sqlite(input, head) ? std::string() : input.read_all();
    if (head == kSqliteMagic) {
      if (!read_database(product, input, options, session, out, report)) return out;
      from_rows(*product, session, parsed, report, out);
    } else {
      exported = std::make_unique<rapidjson::Document>();
      if (!read_export(*product, bytes_for_export, *exported, session, parsed, out, report)) return out;
      if (options.leaf && *options.leaf != session.info.id) {
        out.diagnostics.push_back(
            Diagnostic{Code::kBranchNotFound, Severity::kError, code_info(Code::kBranchNotFound).level, input.name(), 0,
                       0, "--leaf " + *options.leaf + ": this export holds session " + session.info.id + " only",
                       "an export holds one session; --leaf names a session of a database"});
        return out;
      }
    }
    if (!out.ok()) return out;
    out.leaf_taken = options.leaf.has_value();
    OpencodeConverter(*product, input.name(), text, out).run(session.info, parsed.messages);
    if (out.ok()) take_session_text(std::move(text), input.name(), options.index, out);
    return out;
  }

 private:
  const OpencodeProduct& product_;
  const std::string title_, records_, recognised_by_;
  const ReaderInfo info_;

  static bool starts_as_sqlite(const ReaderInput& input, std::string& head) {
    if (input.fd() < 0) {
      const std::string all = input.read_all();
      head = all.substr(0, 16);
      return head == kSqliteMagic;
    }
    const ssize_t n = ::pread(input.fd(), head.data(), head.size(), 0);
    head.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
    return head == kSqliteMagic;
  }

  // `product`: this reader's, made a fork's when the database is the fork's (KL1).
  static bool read_database(const OpencodeProduct*& product, const ReaderInput& input, const ReadOptions& options,
                            OpencodeSession& session, ReadSession& out, TranscriptWriter& report) {
    try {
      const std::string bytes = input.fd() < 0 ? input.read_all() : std::string();
      const OpencodeDatabase db(*product, input.fd(), input.name() == "<stdin>" ? std::string() : input.name(), bytes);
      product = &product_of(db, *product);
      const std::vector<OpencodeSessionRow> sessions = db.sessions();
      if (!choose_session(*product, sessions, options.leaf, input.name(), session.info, out, report)) return false;
      for (const OpencodeSessionRow& s : sessions)
        if (s.parent_id == session.info.id) out.repairs[std::string(product->name) + "-subagent-sessions"] += 1;
      db.load(session.info.id, session);
    } catch (const OpencodeStoreError& e) {
      report.error(0, 0, e.message, e.hint);
      return false;
    }
    return true;
  }

  static std::string export_hint(const OpencodeProduct& product) {
    return std::string("`") + product.command + " export SESSION_ID` prints one JSON object";
  }

  // `opencode export ID`: {info, messages: [{info, parts}]}, one session.
  static bool read_export(const OpencodeProduct& product, std::string bytes, rapidjson::Document& doc,
                          OpencodeSession& session, ParsedSession& parsed, ReadSession& out, TranscriptWriter& report) {
    neutralize_lone_surrogates(bytes.data(), bytes.size());
    doc.Parse<kParseFlags>(bytes.data(), bytes.size());
    if (doc.HasParseError()) {
      const std::size_t at = doc.GetErrorOffset();
      std::uint64_t line = 1, column = 1;
      for (std::size_t i = 0; i < at && i < bytes.size(); ++i) {
        if (bytes[i] == '\n') {
          ++line;
          column = 1;
        } else {
          ++column;
        }
      }
      report.error(line, column, std::string("not JSON: ") + rapidjson::GetParseError_En(doc.GetParseError()),
                   export_hint(product));
      return false;
    }
    const JsonValue* info = doc.IsObject() ? json_member(doc, "info") : nullptr;
    const JsonValue* messages = doc.IsObject() ? json_member(doc, "messages") : nullptr;
    if (info == nullptr || !info->IsObject() || messages == nullptr || !messages->IsArray()) {
      report.error(
          0, 0, std::string(product.a_product) + " export is {\"info\": {...}, \"messages\": [...]}; this one is not",
          export_hint(product));
      return false;
    }
    OpencodeSessionRow& s = session.info;
    s.id = json_string(*info, "id");
    s.parent_id = json_string(*info, "parentID");
    s.directory = json_string(*info, "directory");
    s.title = json_string(*info, "title");
    s.created = int_of(path_of(*info, {"time", "created"}));
    s.updated = int_of(path_of(*info, {"time", "updated"}));
    if (const JsonValue* revert = json_member(*info, "revert"); revert && revert->IsObject()) {
      rapidjson::StringBuffer buffer;
      rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
      revert->Accept(w);
      s.revert = buffer.GetString();
    }
    std::size_t index = 0;
    for (const JsonValue& entry : messages->GetArray()) {
      const JsonValue* minfo = entry.IsObject() ? json_member(entry, "info") : nullptr;
      const JsonValue* parts = entry.IsObject() ? json_member(entry, "parts") : nullptr;
      if (minfo == nullptr || !minfo->IsObject() || parts == nullptr || !parts->IsArray()) {
        report.error(0, 0, "messages[" + std::to_string(index) + "]: a message is {\"info\": {...}, \"parts\": [...]}",
                     export_hint(product));
        return false;
      }
      Message m;
      m.id = json_string(*minfo, "id");
      m.info = minfo;
      m.created = int_of(path_of(*minfo, {"time", "created"}));
      ++out.records_read;
      for (const JsonValue& part : parts->GetArray()) {
        if (!part.IsObject()) {
          report.error(0, 0, "messages[" + std::to_string(index) + "]: a part is a JSON object");
          return false;
        }
        m.parts.push_back(&part);
        m.part_ids.push_back(json_string(part, "id"));
        ++out.records_read;
      }
      parsed.messages.push_back(std::move(m));
      ++index;
    }
    return true;
  }
};

}  // namespace

const Reader& opencode_reader() {
  static const OpencodeFormat reader(opencode_product());
  return reader;
}

const Reader& kilo_cli_reader() {
  static const OpencodeFormat reader(kilo_cli_product());
  return reader;
}

}  // namespace pihydrate
