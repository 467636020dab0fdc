// Claude Code transcript -> pi v3 session, by the rules of
// docs/claude-code.md (C1-C11; the comments name them).
#include <cstdint>
#include <deque>
#include <set>
#include <unordered_map>
#include <vector>

#include "pihydrate/formats.h"
#include "readers/head_record.h"
#include "readers/readers.h"
#include "readers/transcript_writer.h"

namespace pihydrate {
namespace {

// C3: records that keep the CLI's own state; nothing in them reaches the model.
const std::set<std::string>& bookkeeping_types() {
  static const std::set<std::string> types = {"queue-operation",
                                              "attachment",
                                              "file-history-snapshot",
                                              "atis-latch",
                                              "api-request-shape",
                                              "api-request-blob",
                                              "api-request",
                                              "tools-used",
                                              "last-prompt",
                                              "mode",
                                              "cost-state",
                                              "progress",
                                              "pr-link",
                                              "permission-mode",
                                              "agent-name",
                                              "custom-title",
                                              "ai-title",
                                              "summary",
                                              "tag"};
  return types;
}

// C9: the user records Claude Code writes around a local command (/compact,
// /model, ...): its caveat, its name and its output, for the terminal.
bool is_local_command_text(std::string_view text) {
  for (const char* tag : {"<local-command-caveat>", "<command-name>", "<command-message>", "<local-command-stdout>",
                          "<local-command-stderr>"})
    if (text.rfind(tag, 0) == 0) return true;
  return false;
}

// C7: Anthropic's stop reasons as pi names them.
const char* pi_stop_reason(const std::string& stop_reason, bool has_calls) {
  if (stop_reason == "tool_use") return "toolUse";
  if (stop_reason == "max_tokens" || stop_reason == "model_context_window_exceeded") return "length";
  if (stop_reason.empty()) return has_calls ? "toolUse" : "stop";
  return "stop";  // end_turn, stop_sequence, pause_turn, refusal
}

// One pi entry to write, in transcript order; messages are written once all
// the lines of a reply are read (C5).
struct Pending {
  enum class Kind { kAssistant, kUser, kToolResult, kCompaction };
  Kind kind = Kind::kUser;
  std::string id, parent, timestamp;
  std::int64_t millis = 0;
  TranscriptOrigin origin;
  std::vector<const JsonValue*> blocks;  // assistant: content blocks; user: text and image blocks
  const JsonValue* message = nullptr;    // assistant: the last line's message (model, stop_reason, usage)
  std::string message_id;                // assistant: message.id, shared by a reply's lines
  bool api_error = false;                // assistant: a reply Claude Code made up for an API error
  const JsonValue* result = nullptr;     // tool result: the tool_result block
  std::string text;                      // user: a string content; compaction: the summary
  std::uint64_t tokens_before = 0;       // compaction
  std::string first_kept;                // compaction: the entry its kept window starts at; "": itself
};

class ClaudeCodeReader {
 public:
  ClaudeCodeReader(const std::string& file, std::string& text, ReadSession& out, SessionSpool* spool = nullptr)
      : file_(file), out_(out), write_(file, text, out, spool) {}

  void run(const LogSource& transcript, const std::string& file, const std::string& leaf) {
    source_ = &transcript;
    read_transcript(transcript, file, out_, [this](TranscriptRecord&& r) { keep(std::move(r)); });
    if (!out_.ok()) return;
    count_left_out();
    const std::vector<std::size_t> branch = walk_branch(leaf);
    if (!out_.ok()) return;
    write_header();
    for (std::size_t index : branch) {
      convert(index);
      loaded_.clear();  // each entry is written as it is made: what it was made from goes
    }
    if (!out_.ok()) return;
    if (written_ == 0) {
      write_.error(0, 0, "the transcript holds no conversation (no user or assistant record outside sidechains)",
                   "a Claude Code transcript is ~/.claude/projects/<encoded cwd>/<session id>.jsonl");
      return;
    }
    write_session();
  }

 private:
  // What is kept of each record while the branch is found: its ids, and
  // where its text is, read again if the branch takes it.
  struct Record {
    std::uint64_t line, column;
    std::uint64_t offset;
    std::size_t size;
    std::string type, uuid, parent;
    bool sidechain = false;
    bool used = false;  // converted already (a reply's other lines, results gathered by their call)
  };

  void keep(TranscriptRecord&& r) {
    const rapidjson::Document& parsed = r.doc;
    Record rec{r.line, r.column, r.offset, r.size, {}, {}, {}};
    rec.type = json_string(parsed, "type");
    rec.uuid = json_string(parsed, "uuid");
    rec.parent = json_string(parsed, "parentUuid");
    // C10: a compaction starts a new chain; its logical parent carries the branch over it.
    if (rec.parent.empty()) rec.parent = json_string(parsed, "logicalParentUuid");
    rec.sidechain = json_true(parsed, "isSidechain");
    if (session_id_.empty()) session_id_ = json_string(parsed, "sessionId");
    if (first_uuid_.empty()) first_uuid_ = rec.uuid;
    if (cwd_.empty()) cwd_ = json_string(parsed, "cwd");
    if (first_timestamp_.empty()) first_timestamp_ = json_string(parsed, "timestamp");
    // C11: the names the CLI gives a session; a name the user set wins.
    if (rec.type == "custom-title") title_ = json_string(parsed, "customTitle");
    if (rec.type == "ai-title") ai_title_ = json_string(parsed, "aiTitle");
    const std::size_t index = records_.size();
    if (!rec.uuid.empty()) by_uuid_[rec.uuid] = index;
    if (!rec.sidechain && rec.type == "assistant") {
      const JsonValue* message = json_member(parsed, "message");
      if (message != nullptr) {
        const std::string message_id = json_string(*message, "id");
        if (!message_id.empty()) reply_lines_[message_id].push_back(index);
      }
      if (const JsonValue* content = message_content(parsed); content && content->IsArray())
        for (const JsonValue& block : content->GetArray())
          if (json_string(block, "type") == "tool_use")
            tool_names_[json_string(block, "id")] = json_string(block, "name");
    }
    if (!rec.sidechain && rec.type == "user")
      if (const JsonValue* content = message_content(parsed); content && content->IsArray())
        for (const JsonValue& block : content->GetArray())
          if (json_string(block, "type") == "tool_result")
            result_lines_[json_string(block, "tool_use_id")].push_back(index);
    records_.push_back(std::move(rec));
  }

  // A record parsed again from the transcript, kept while the record the
  // branch is at is converted.
  const JsonValue& doc(const Record& r) {
    auto [it, inserted] = loaded_.try_emplace(r.offset);
    if (inserted) {
      const std::string text = read_record(*source_, r.offset, r.size);
      it->second.Parse(text.data(), text.size());
      if (it->second.HasParseError() || !it->second.IsObject()) it->second.SetObject();  // it changed under the reader
    }
    return it->second;
  }

  static const JsonValue* message_content(const JsonValue& record) {
    const JsonValue* message = json_member(record, "message");
    return message ? json_member(*message, "content") : nullptr;
  }

  TranscriptOrigin origin(const Record& r, std::string what) const { return {r.line, r.column, std::move(what)}; }

  static Pending pending(Pending::Kind kind, TranscriptOrigin from) {
    Pending p;
    p.kind = kind;
    p.origin = std::move(from);
    return p;
  }

  // C3, C4: what never reaches the model is counted (one warning per record type this reader does not know).
  void count_left_out() {
    for (const Record& r : records_) {
      if (r.type == "user" || r.type == "assistant") {
        if (r.sidechain) write_.count("claude-sidechain-records");
      } else if (r.type == "system") {
        write_.count("claude-system-records");
      } else if (bookkeeping_types().count(r.type) != 0) {
        write_.count("claude-bookkeeping-records");
      } else if (unknown_types_.insert(r.type).second) {
        write_.warn(r.line, r.column,
                    "a record of type " + std::string(r.type.empty() ? "(none)" : "\"" + r.type + "\"") +
                        " is not part of the conversation Claude Code sends; left out (and any later ones)",
                    "claude-unknown-records");
      } else {
        write_.count("claude-unknown-records");
      }
    }
  }

  // C2: the branch Claude Code resumes: from the leaf (the last user or
  // assistant record outside sidechains, or --leaf) up its parentUuid chain.
  std::vector<std::size_t> walk_branch(const std::string& leaf) {
    std::size_t at = SIZE_MAX;
    if (!leaf.empty()) {
      auto found = by_uuid_.find(leaf);
      if (found == by_uuid_.end()) {
        out_.diagnostics.push_back(Diagnostic{Code::kBranchNotFound, Severity::kError,
                                              code_info(Code::kBranchNotFound).level, file_, 0, 0,
                                              "--leaf " + leaf + ": no record of the transcript has this uuid",
                                              "a Claude Code transcript's records are named by their \"uuid\""});
        return {};
      }
      at = found->second;
    } else {
      for (std::size_t i = records_.size(); i-- > 0;)
        if ((records_[i].type == "user" || records_[i].type == "assistant") && !records_[i].sidechain) {
          at = i;
          break;
        }
    }
    std::vector<std::size_t> branch;
    std::set<std::size_t> seen;
    while (at != SIZE_MAX && seen.insert(at).second) {
      branch.push_back(at);
      const Record& r = records_[at];
      auto parent = by_uuid_.find(r.parent);
      at = parent == by_uuid_.end() ? SIZE_MAX : parent->second;
      // A parent the file does not hold (a transcript cut at its start, or edited): the branch starts here.
      if (at == SIZE_MAX && !r.parent.empty())
        write_.warn(r.line, r.column,
                    "parentUuid " + r.parent + " names no record of the transcript: the conversation starts here",
                    "claude-branch-cut");
    }
    return {branch.rbegin(), branch.rend()};
  }

  void convert(std::size_t index) {
    Record& r = records_[index];
    if (r.used || r.sidechain || (r.type != "user" && r.type != "assistant")) return;
    const JsonValue* message = json_member(doc(r), "message");
    if (message == nullptr || !message->IsObject()) {
      write_.error(r.line, r.column, r.type + " record: no \"message\" object",
                   "Claude Code writes each user and assistant turn as {\"type\", \"uuid\", \"message\": {...}}");
      return;
    }
    if (r.type == "assistant")
      assistant(index, *message);
    else
      user(r, *message, {});
  }

  void assistant(std::size_t index, const JsonValue& message) {
    Record& first = records_[index];
    Pending p = pending(Pending::Kind::kAssistant, origin(first, "assistant record"));
    p.message_id = json_string(message, "id");
    p.api_error = json_true(doc(first), "isApiErrorMessage");
    // C5: one API reply is spread over lines that share message.id, some of
    // them off the branch (each parallel call's result hangs from its own
    // call's line): they are one pi message.
    std::vector<std::size_t> lines{index};
    if (!p.message_id.empty()) lines = reply_lines_[p.message_id];
    std::vector<std::string> calls;
    for (std::size_t line : lines) {
      Record& r = records_[line];
      r.used = true;
      const JsonValue* m = json_member(doc(r), "message");
      if (m == nullptr) continue;
      p.message = m;  // C7: the last line's model, stop reason and usage
      add_assistant_blocks(r, *m, p, calls);
    }
    if (p.blocks.empty()) {
      write_.count("claude-empty-replies");
      return;
    }
    add(first, std::move(p));
    // C8: the results of its calls follow it, in call order, wherever they are.
    std::vector<std::size_t> result_records;
    for (const std::string& call : calls)
      for (std::size_t line : result_lines_[call])
        if (!records_[line].used) {
          records_[line].used = true;
          result_records.push_back(line);
        }
    for (const std::string& call : calls)
      for (std::size_t line : result_records) user(records_[line], *json_member(doc(records_[line]), "message"), call);
    // The rest of those records (text beside the results) follows the results.
    for (std::size_t line : result_records) user(records_[line], *json_member(doc(records_[line]), "message"), "#rest");
  }

  void add_assistant_blocks(const Record& r, const JsonValue& message, Pending& p, std::vector<std::string>& calls) {
    const JsonValue* content = json_member(message, "content");
    if (content && content->IsString()) {
      p.blocks.push_back(content);
      return;
    }
    if (content == nullptr || !content->IsArray()) return;
    for (const JsonValue& block : content->GetArray()) {
      const std::string type = json_string(block, "type");
      if (type == "text" || type == "thinking" || type == "redacted_thinking" || type == "tool_use") {
        p.blocks.push_back(&block);
        if (type == "tool_use") calls.push_back(json_string(block, "id"));
      } else {
        // C6: server tools (web search, code execution) ran at the provider; pi cannot send them back.
        write_.warn(r.line, r.column, "assistant record: a \"" + type + "\" block has no pi equivalent; left out",
                    "claude-blocks-dropped");
      }
    }
  }

  // A user record. `part`: empty for the whole record; a tool_use id for
  // that call's results only; "#rest" for all but its results.
  void user(Record& r, const JsonValue& message, const std::string& part) {
    r.used = true;
    const JsonValue* content = json_member(message, "content");
    if (part.empty() && json_true(doc(r), "isCompactSummary")) {
      compaction(r, content);
      return;
    }
    // C9: meta records (a command's caveat, notes the CLI adds) and local commands are the CLI's own.
    if (json_true(doc(r), "isMeta") ||
        (content && content->IsString() && is_local_command_text(content->GetString())) ||
        (content && content->IsArray() && all_local_command_text(*content))) {
      write_.count("claude-command-records");
      return;
    }
    if (content && content->IsString()) {
      if (!part.empty()) return;
      Pending p = pending(Pending::Kind::kUser, origin(r, "user record"));
      p.text.assign(content->GetString(), content->GetStringLength());
      add(r, std::move(p));
      return;
    }
    if (content == nullptr || !content->IsArray()) {
      write_.error(r.line, r.column, "user record: message.content is neither a string nor a list of blocks");
      return;
    }
    // C8: each tool_result block is a pi tool result; the rest of the record follows them as one user message.
    Pending rest = pending(Pending::Kind::kUser, origin(r, "user record"));
    for (const JsonValue& block : content->GetArray()) {
      const std::string type = json_string(block, "type");
      if (type == "tool_result") {
        const std::string call = json_string(block, "tool_use_id");
        if (part == "#rest" || (!part.empty() && call != part)) continue;
        Pending p = pending(Pending::Kind::kToolResult, origin(r, "tool_result of user record"));
        p.result = &block;
        add(r, std::move(p), r.uuid + "#" + call);
      } else if (part.empty() || part == "#rest") {
        if (type == "text" || type == "image") {
          if (type == "image" && !image_source(r, block)) continue;
          rest.blocks.push_back(&block);
        } else {
          write_.warn(r.line, r.column, "user record: a \"" + type + "\" block has no pi equivalent; left out",
                      "claude-blocks-dropped");
        }
      }
    }
    if (!rest.blocks.empty()) add(r, std::move(rest), r.uuid + "#text");
  }

  // C10: the summary Claude Code continues from: a compaction that keeps
  // the messages Claude Code preserved (compactMetadata.preservedSegment), or nothing.
  void compaction(const Record& r, const JsonValue* content) {
    Pending p = pending(Pending::Kind::kCompaction, origin(r, "compact summary record"));
    p.text = content && content->IsString() ? std::string(content->GetString(), content->GetStringLength())
                                            : joined_text(content);
    auto boundary = by_uuid_.find(r.parent);
    if (boundary != by_uuid_.end()) {
      const JsonValue* meta = json_member(doc(records_[boundary->second]), "compactMetadata");
      if (meta != nullptr) {
        p.tokens_before = json_count(*meta, "preTokens");
        const JsonValue* kept = json_member(*meta, "preservedSegment");
        const std::string head = kept ? json_string(*kept, "headUuid") : std::string();
        auto written = entry_of_.find(head);
        if (written != entry_of_.end()) p.first_kept = written->second;
      }
    }
    add(r, std::move(p));
  }

  static bool all_local_command_text(const JsonValue& content) {
    bool any = false;
    for (const JsonValue& block : content.GetArray()) {
      if (json_string(block, "type") != "text" || !is_local_command_text(json_string(block, "text"))) return false;
      any = true;
    }
    return any;
  }

  static std::string joined_text(const JsonValue* content) {
    std::string text;
    if (content == nullptr || !content->IsArray()) return text;
    for (const JsonValue& block : content->GetArray())
      if (json_string(block, "type") == "text") text += (text.empty() ? "" : "\n") + json_string(block, "text");
    return text;
  }

  // C8: images travel as base64; a URL or file reference does not.
  bool image_source(const Record& r, const JsonValue& block) {
    const JsonValue* source = json_member(block, "source");
    if (source && json_string(*source, "type") == "base64" && !json_string(*source, "data").empty()) return true;
    write_.warn(r.line, r.column, "an image that is not base64 data cannot be sent by pi; left out",
                "claude-blocks-dropped");
    return false;
  }

  // C1: appends an entry after the last one (the session is the branch,
  // linear); its id is made from the record's uuid, its time is the record's.
  void add(const Record& r, Pending&& p, const std::string& key = {}) {
    const std::string& id_key = key.empty() ? r.uuid : key;
    p.id = entry_ids_.id_for(id_key.empty() ? "line:" + std::to_string(r.line) : id_key);
    p.parent = last_.id;
    p.timestamp = json_string(doc(r), "timestamp");
    if (p.timestamp.empty()) p.timestamp = last_timestamp_;
    last_timestamp_ = p.timestamp;
    p.millis = millis_of(p.timestamp, last_millis_);
    last_millis_ = p.millis;
    if (!r.uuid.empty()) entry_of_.emplace(r.uuid, p.id);
    // Written now: nothing later changes an entry made.
    switch (p.kind) {
      case Pending::Kind::kAssistant: write_assistant(p); break;
      case Pending::Kind::kUser: write_user(p); break;
      case Pending::Kind::kToolResult: write_tool_result(p); break;
      case Pending::Kind::kCompaction: write_compaction(p); break;
    }
    last_.id = p.id;
    last_.timestamp = p.timestamp;
    last_.origin = std::move(p.origin);
    ++written_;
  }

  void write_header() {
    // C1: the session id, first time and cwd of the transcript's records.
    // Without a sessionId, an id of its own from the first uuid (not one shared by every such file).
    if (session_id_.empty()) session_id_ = derived_session_id("claude-code:" + first_uuid_ + first_timestamp_);
    write_.header(session_id_, first_timestamp_, cwd_.empty() ? "/" : cwd_, origin(records_.front(), "first record"));
  }

  void write_session() {
    // What writing found goes after what reading found, as when the whole branch was read first.
    for (Deferred& d : deferred_) write_.warn(d.line, d.column, std::move(d.message), d.repair);
    const std::string& name = title_.empty() ? ai_title_ : title_;
    if (!name.empty())
      write_.entry("session_info", entry_ids_.id_for("session_info"), last_.id, last_.timestamp, last_.origin,
                   [&](JsonWriter& w) { write_key_string(w, "name", name); });
  }

  void write_assistant(const Pending& p) {
    const JsonValue& message = *p.message;
    bool has_calls = false;
    write_.entry("message", p.id, p.parent, p.timestamp, p.origin, [&](JsonWriter& w) {
      begin_message(w, "assistant");
      for (const JsonValue* block : p.blocks) {
        if (block->IsString()) {
          write_text_block(w, std::string_view(block->GetString(), block->GetStringLength()));
          continue;
        }
        const std::string type = json_string(*block, "type");
        w.StartObject();
        if (type == "text") {
          write_key_string(w, "type", "text");
          write_key_string(w, "text", json_string(*block, "text"));
        } else if (type == "thinking") {
          // C6: the signature stays: pi sends it back only to the model that wrote it.
          write_key_string(w, "type", "thinking");
          write_key_string(w, "thinking", json_string(*block, "thinking"));
          const std::string signature = json_string(*block, "signature");
          if (!signature.empty()) write_key_string(w, "thinkingSignature", signature);
        } else if (type == "redacted_thinking") {
          write_key_string(w, "type", "thinking");
          write_key_string(w, "thinking", "");
          write_key_string(w, "thinkingSignature", json_string(*block, "data"));
          w.Key("redacted");
          w.Bool(true);
        } else {  // tool_use
          has_calls = true;
          write_key_string(w, "type", "toolCall");
          write_key_string(w, "id", json_string(*block, "id"));
          write_key_string(w, "name", json_string(*block, "name"));
          w.Key("arguments");
          write_object_or_empty(w, json_member(*block, "input"));
        }
        w.EndObject();
      }
      w.EndArray();
      // C7: what pi needs to know of the model that answered.
      write_key_string(w, "api", "anthropic-messages");
      write_key_string(w, "provider", "anthropic");
      write_key_string(w, "model", json_string(message, "model"));
      const JsonValue* usage = json_member(message, "usage");
      static const JsonValue no_usage(rapidjson::kObjectType);
      const JsonValue& u = usage && usage->IsObject() ? *usage : no_usage;
      write_usage(w, json_count(u, "input_tokens"), json_count(u, "output_tokens"),
                  json_count(u, "cache_read_input_tokens"), json_count(u, "cache_creation_input_tokens"));
      if (p.api_error) {
        // C7: Claude Code's stand-in reply for a failed request: an error pi leaves out of the context.
        write_key_string(w, "stopReason", "error");
        write_key_string(w, "errorMessage", joined_text(json_member(message, "content")));
      } else {
        write_key_string(w, "stopReason", pi_stop_reason(json_string(message, "stop_reason"), has_calls));
      }
      w.Key("timestamp");
      w.Int64(p.millis);
      const std::string response_id = json_string(message, "id");
      if (!response_id.empty()) write_key_string(w, "responseId", response_id);
      w.EndObject();
    });
  }

  void write_content_blocks(JsonWriter& w, const std::vector<const JsonValue*>& blocks) {
    for (const JsonValue* block : blocks) {
      const std::string type = json_string(*block, "type");
      if (type == "image") {
        const JsonValue& source = *json_member(*block, "source");
        write_image_block(w, json_string(source, "data"), json_string(source, "media_type"));
      } else {
        write_text_block(w, json_string(*block, "text"));
      }
    }
  }

  void write_user(const Pending& p) {
    write_.entry("message", p.id, p.parent, p.timestamp, p.origin, [&](JsonWriter& w) {
      begin_message(w, "user");
      if (p.blocks.empty())
        write_text_block(w, p.text);
      else
        write_content_blocks(w, p.blocks);
      w.EndArray();
      w.Key("timestamp");
      w.Int64(p.millis);
      w.EndObject();
    });
  }

  void write_tool_result(const Pending& p) {
    const JsonValue& result = *p.result;
    const std::string call_id = json_string(result, "tool_use_id");
    auto name = tool_names_.find(call_id);
    write_.entry("message", p.id, p.parent, p.timestamp, p.origin, [&](JsonWriter& w) {
      begin_tool_result(w, call_id, name == tool_names_.end() ? "" : name->second);
      const JsonValue* content = json_member(result, "content");
      if (content && content->IsString()) {
        write_text_block(w, std::string_view(content->GetString(), content->GetStringLength()));
      } else if (content && content->IsArray()) {
        std::vector<const JsonValue*> blocks;
        for (const JsonValue& block : content->GetArray()) {
          const std::string type = json_string(block, "type");
          if (type == "text" || (type == "image" && json_member(block, "source") &&
                                 json_string(*json_member(block, "source"), "type") == "base64"))
            blocks.push_back(&block);
          else
            deferred_.push_back({p.origin.line, p.origin.column,
                                 "a tool result's \"" + type + "\" block has no pi equivalent; left out",
                                 "claude-blocks-dropped"});
        }
        write_content_blocks(w, blocks);
      }
      w.EndArray();
      w.Key("isError");
      w.Bool(json_true(result, "is_error"));
      w.Key("timestamp");
      w.Int64(p.millis);
      w.EndObject();
    });
  }

  void write_compaction(const Pending& p) {
    write_.entry("compaction", p.id, p.parent, p.timestamp, p.origin, [&](JsonWriter& w) {
      write_key_string(w, "summary", p.text);
      write_key_string(w, "firstKeptEntryId", p.first_kept.empty() ? p.id : p.first_kept);
      w.Key("tokensBefore");
      w.Uint64(p.tokens_before);
    });
  }

  const std::string& file_;
  ReadSession& out_;
  TranscriptWriter write_;
  const LogSource* source_ = nullptr;
  std::deque<Record> records_;
  std::unordered_map<std::uint64_t, rapidjson::Document> loaded_;  // by offset: doc()
  // The last entry written: the next one's parent, and where a title goes.
  struct Last {
    std::string id, timestamp;
    TranscriptOrigin origin;
  } last_;
  std::uint64_t written_ = 0;
  // A warning found while writing, reported once the branch is converted.
  struct Deferred {
    std::uint64_t line, column;
    std::string message, repair;
  };
  std::vector<Deferred> deferred_;
  std::unordered_map<std::string, std::size_t> by_uuid_;                    // uuid -> record
  std::unordered_map<std::string, std::vector<std::size_t>> reply_lines_;   // message.id -> its lines
  std::unordered_map<std::string, std::vector<std::size_t>> result_lines_;  // tool_use id -> records with its result
  std::unordered_map<std::string, std::string> entry_of_;                   // uuid -> the first pi entry it wrote
  std::unordered_map<std::string, std::string> tool_names_;                 // tool_use id -> tool name
  EntryIds entry_ids_;
  std::set<std::string> unknown_types_;
  std::string session_id_, first_uuid_, cwd_, first_timestamp_, title_, ai_title_, last_timestamp_;
  std::int64_t last_millis_ = 0;
};

}  // namespace

std::string convert_claude_code(std::string transcript, const std::string& file, const std::string& leaf,
                                ReadSession& out) {
  std::string text;
  ClaudeCodeReader(file, text, out).run(BytesSource(std::move(transcript)), file, leaf);
  if (!out.ok()) text.clear();
  return text;
}

namespace {

class ClaudeCodeFormat final : public Reader {
 public:
  const ReaderInfo& info() const override {
    static const ReaderInfo info{"claude-code",
                                 "Claude Code transcript",
                                 "records with \"uuid\" and \"sessionId\"",
                                 "Claude Code records",
                                 "~/.claude/projects/<encoded cwd>/<session id>.jsonl",
                                 "docs/claude-code.md"};
    return info;
  }
  int bid(const InputHead& head) const override {
    rapidjson::Document doc;
    if (head.lines.empty() || !parse_head_record(head.lines[0], doc)) return kBidNone;
    if (json_member(doc, "sessionId") && json_member(doc, "uuid")) return kBidMarker;
    // The CLI's own records (a queue operation, a summary) may come first.
    if (!json_string(doc, "type").empty() && (json_member(doc, "sessionId") || json_member(doc, "leafUuid")))
      return kBidShape;
    return kBidNone;
  }
  // C2: --leaf is one of the transcript's uuids, and the branch ending there is written.
  ReadSession read(const ReaderInput& input, const ReadOptions& options) const override {
    const std::string& file = input.name();
    const std::string leaf = options.leaf.value_or("");
    ReadSession out = read_transcript(
        input, options, [&](const LogSource& source, std::string& text, SessionSpool* spool, ReadSession& into) {
          ClaudeCodeReader(file, text, into, spool).run(source, file, leaf);
        });
    out.leaf_taken = options.leaf.has_value();
    return out;
  }
};

}  // namespace

const Reader& claude_code_reader() {
  static const ClaudeCodeFormat reader;
  return reader;
}

}  // namespace pihydrate
