// Qwen Code chat file -> pi v3 session, by the rules of docs/qwen-code.md
// (Q1-Q12; the comments name them).
#include <cstdint>
#include <deque>
#include <memory>
#include <set>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/fast_sax.h"
#include "pihydrate/formats.h"
#include "readers/head_record.h"
#include "readers/readers.h"
#include "readers/transcript_writer.h"

namespace pihydrate {
namespace {

// Q2: records Qwen Code keeps beside the conversation, never on its chain (its
// transcript preparation leaves them out when it looks for the leaf).
bool off_chain_subtype(const std::string& subtype) {
  static const std::set<std::string> subtypes = {"session_artifact_event",   "session_artifact_snapshot",
                                                 "session_sources_snapshot", "managed_session_header_v1",
                                                 "managed_session_event_v1", "managed_session_commit_v1"};
  return subtypes.count(subtype) != 0;
}

bool is_image_mime(std::string_view mime) {
  return mime == "image/png" || mime == "image/jpeg" || mime == "image/gif" || mime == "image/webp";
}

// What the first pass reads of a record: top-level strings ("" when a key
// is missing or not a string; the last of a repeated key, as json_string).
struct RecordFields {
  enum { kType, kSubtype, kUuid, kParent, kSession, kTimestamp, kCwd, kCount };
  static constexpr const char* kKeys[kCount] = {"type",      "subtype",   "uuid", "parentUuid",
                                                "sessionId", "timestamp", "cwd"};
  std::string values[kCount];
};

// A FastSaxReader handler that reads RecordFields from a record's line and
// steps over everything else (a record's message, tool output, payloads),
// checking its syntax: one pass at a fraction of a parse into a Document.
class RecordSkim {
 public:
  explicit RecordSkim(RecordFields& fields) : fields_(fields) {
    for (std::string& v : fields_.values) v.clear();
  }
  bool StartObject() { return open(); }
  bool StartArray() { return depth_ > 0 && open(); }  // a top-level array is no record: RapidJSON says why
  bool EndObject(unsigned) { return close(); }
  bool EndArray(unsigned) { return close(); }
  bool skips_current() const { return depth_ > 1; }
  bool wants_text() const { return depth_ == 1 && target_ != nullptr; }
  bool Key(const char* s, unsigned n, bool) {
    target_ = nullptr;
    const std::string_view key(s, n);
    for (std::size_t i = 0; i < RecordFields::kCount; ++i)
      if (key == RecordFields::kKeys[i]) target_ = &fields_.values[i];
    return true;
  }
  bool String(const char* s, unsigned n, bool) {
    if (depth_ == 0) return false;
    if (depth_ == 1 && target_ != nullptr) target_->assign(s, n);
    return true;
  }
  bool Null() { return scalar(); }
  bool Bool(bool) { return scalar(); }
  bool RawNumber(const char*, unsigned, bool) { return scalar(); }

 private:
  bool open() {
    if (depth_ == 1 && target_ != nullptr) target_->clear();  // not a string: json_string's ""
    ++depth_;
    return true;
  }
  bool close() {
    --depth_;
    return true;
  }
  bool scalar() {
    if (depth_ == 0) return false;
    if (depth_ == 1 && target_ != nullptr) target_->clear();
    return true;
  }
  RecordFields& fields_;
  std::string* target_ = nullptr;
  int depth_ = 0;
};

// True when `text` is certainly a JSON object; then `fields` holds what the first pass reads of it.
bool skim_record(std::string_view text, RecordFields& fields) {
  RecordSkim skim(fields);
  FastSaxReader<RecordSkim> reader;
  return reader.parse(text.data(), text.data() + text.size(), skim,
                      SIZE_MAX);  // deeper than FastSaxReader goes: RapidJSON
}

// A record's fragments (Q2), parsed again from the chat file when the
// record is converted; the entries made from them point into them.
// A record's fragments (Q2), parsed into one pool sized to their bytes (a Document's own pool takes 64 KiB at once,
// made and freed for each record: a tenth of the reader).
struct Fragments {
  explicit Fragments(std::size_t bytes) : pool(bytes) {}
  rapidjson::MemoryPoolAllocator<> pool;
  std::deque<rapidjson::Document> docs;
};

// One pi entry to write, in chain order (Q9 may take back a user message).
struct Pending {
  enum class Kind { kAssistant, kUser, kToolResult, kCompaction };
  Kind kind = Kind::kUser;
  std::string key;  // what the entry's id is made from
  std::string timestamp;
  TranscriptOrigin origin;
  std::vector<const JsonValue*> parts;         // assistant, user: the Content parts written
  std::string model;                           // assistant: the model that wrote it
  const JsonValue* usage = nullptr;            // assistant: usageMetadata
  const JsonValue* response = nullptr;         // tool result: the functionResponse
  std::string call_id, tool_name;              // tool result
  bool is_error = false;                       // tool result
  std::string text;                            // compaction: the summary; user: the raw text (Q9)
  std::uint64_t tokens_before = 0;             // compaction
  std::string uuid;                            // the record it came from
  std::shared_ptr<const Fragments> fragments;  // what the pointers above point into
};

class QwenCodeReader {
 public:
  QwenCodeReader(const std::string& file, std::string& text, ReadSession& out, SessionSpool* spool = nullptr)
      : file_(file), out_(out), write_(file, text, out, spool) {}

  void run(const LogSource& chat, const std::string& leaf) {
    source_ = &chat;
    RecordFields skimmed;
    read_transcript(
        chat, file_, out_, [this](TranscriptRecord&& r) { keep(r, fields_of(r.doc)); },
        [&](std::string_view text, const TranscriptRecord& place) {
          if (!skim_record(text, skimmed)) return false;
          keep(place, std::move(skimmed));
          return true;
        });
    if (!out_.ok()) return;
    if (records_.empty()) {
      write_.error(0, 0, "the chat file holds no record",
                   "a Qwen Code chat file is ~/.qwen/projects/<cwd>/chats/<session id>.jsonl");
      return;
    }
    const std::vector<std::size_t> chain = walk_chain(leaf);
    if (!out_.ok()) return;
    write_header();
    for (std::size_t index : chain) {
      convert(index);
      if (!out_.ok()) return;
      write_settled();
    }
    if (pending_.empty() && written_ == 0) {
      write_.error(0, 0, "the chat file holds no conversation (no user, assistant or tool_result record on its chain)",
                   "a Qwen Code chat file is ~/.qwen/projects/<cwd>/chats/<session id>.jsonl");
      return;
    }
    write_session();
  }

 private:
  // What is kept of each record while the chain is found: its ids, and
  // where its text is, read again if the chain takes it.
  struct Record {
    std::uint64_t line = 0, column = 0;
    std::uint64_t offset = 0;
    std::size_t size = 0;
    std::string type, subtype, uuid, parent;
    std::size_t next_fragment = SIZE_MAX;  // the next record with its uuid (Q2), in records_
  };

  // The fields of a record the first pass reads, from its parsed object.
  static RecordFields fields_of(const JsonValue& doc) {
    RecordFields f;
    for (std::size_t i = 0; i < RecordFields::kCount; ++i) f.values[i] = json_string(doc, RecordFields::kKeys[i]);
    return f;
  }

  void keep(const TranscriptRecord& r, RecordFields&& f) {
    Record rec;
    rec.line = r.line;
    rec.column = r.column;
    rec.offset = r.offset;
    rec.size = r.size;
    rec.type = std::move(f.values[RecordFields::kType]);
    rec.subtype = std::move(f.values[RecordFields::kSubtype]);
    rec.uuid = std::move(f.values[RecordFields::kUuid]);
    rec.parent = std::move(f.values[RecordFields::kParent]);
    const std::string& session = f.values[RecordFields::kSession];
    if (!seen_first_) {
      // Q1: the session's id, first time and cwd are the first record's.
      seen_first_ = true;
      session_id_ = session;
      first_timestamp_ = std::move(f.values[RecordFields::kTimestamp]);
      cwd_ = std::move(f.values[RecordFields::kCwd]);
    } else if (!session.empty() && !session_id_.empty() && session != session_id_ && !mixed_reported_) {
      // Q2: Qwen Code refuses a file holding two sessions' records.
      write_.error(r.line, r.column, "a record of session " + session + " in the chat file of session " + session_id_,
                   "a Qwen Code chat file holds one session; its records all have the same \"sessionId\"");
      mixed_reported_ = true;
      return;
    }
    if (rec.uuid.empty()) {
      // Q2: a record without a uuid cannot be on the chain; Qwen Code skips it too.
      write_.warn(r.line, r.column,
                  (rec.type.empty() ? std::string("a record") : rec.type + " record") +
                      " without a \"uuid\" is on no chain; left out",
                  "qwen-records-without-uuid");
      return;
    }
    const std::size_t index = records_.size();
    if (!off_chain_subtype(rec.subtype)) last_on_chain_ = index;
    records_.push_back(std::move(rec));
    // Q2: records sharing a uuid are one record's fragments.
    auto [fragments, first] = by_uuid_.try_emplace(records_.back().uuid, Fragment{index, index});
    if (!first) {
      records_[fragments->second.last].next_fragment = index;
      fragments->second.last = index;
    }
  }

  // Q2: the chain Qwen Code resumes: from the leaf (the last record that can be
  // on a chain, or --leaf) up its parentUuid links to the root.
  std::vector<std::size_t> walk_chain(const std::string& leaf) {
    std::size_t at = last_on_chain_;
    if (!leaf.empty()) {
      auto found = by_uuid_.find(leaf);
      if (found == by_uuid_.end()) {
        out_.diagnostics.push_back(Diagnostic{Code::kBranchNotFound, Severity::kError,
                                              code_info(Code::kBranchNotFound).level, file_, 0, 0,
                                              "--leaf " + leaf + ": no record of the chat file has this uuid",
                                              "a Qwen Code chat file's records are named by their \"uuid\""});
        return {};
      }
      at = found->second.first;
    }
    std::vector<std::size_t> chain;
    std::unordered_set<std::size_t> seen;  // records on the chain so far
    while (at != SIZE_MAX) {
      const Record& r = records_[at];
      if (!seen.insert(at).second) {
        const Record& child = records_[chain.back()];
        write_.error(child.line, child.column,
                     "parentUuid " + r.uuid + " closes a loop: that record (line " + std::to_string(r.line) +
                         ") is already on the chain below it",
                     "each record's parentUuid names an earlier record; the file was edited or is corrupt");
        return {};
      }
      chain.push_back(at);
      if (r.parent.empty()) break;
      auto parent = by_uuid_.find(r.parent);
      if (parent == by_uuid_.end()) {
        // A parent the file does not hold (cut at its start, or edited): the conversation starts here.
        write_.warn(r.line, r.column,
                    "parentUuid " + r.parent + " names no record of the chat file: the conversation starts here",
                    "qwen-chain-cut");
        break;
      }
      at = parent->second.first;
    }
    return {chain.rbegin(), chain.rend()};
  }

  TranscriptOrigin origin(const Record& r, const std::string& what) const {
    return {r.line, r.column, r.type + (r.subtype.empty() ? "" : " " + r.subtype) + " " + what};
  }

  // The record's fragments (Q2), parsed again from the file; Q3: telemetry
  // and bookkeeping are never read.
  void load(const Record& first) {
    const bool read = first.type != "system" || first.subtype == "chat_compression" ||
                      first.subtype == "slash_command" || first.subtype == "custom_title";
    std::size_t bytes = 1024;  // the values and their strings take about twice the text
    for (std::size_t i = fragments_of(first); i != SIZE_MAX; i = records_[i].next_fragment)
      bytes += read ? 2 * records_[i].size : 0;
    auto fragments = std::make_shared<Fragments>(bytes);
    for (std::size_t i = fragments_of(first); i != SIZE_MAX; i = records_[i].next_fragment) {
      rapidjson::Document& doc = fragments->docs.emplace_back(&fragments->pool);
      if (!read) {
        doc.SetObject();
        continue;
      }
      const Record& r = records_[i];
      const std::string_view text = window_.read(*source_, r.offset, r.size);
      doc.Parse(text.data(), text.size());
      if (doc.HasParseError() || !doc.IsObject()) doc.SetObject();  // the file changed under the reader
    }
    fragments_ = std::move(fragments);
  }

  void convert(std::size_t index) {
    const Record& first = records_[index];
    if (first.type == "system") {
      load(first);
      system_record(first);
      return;
    }
    if (first.type != "user" && first.type != "assistant" && first.type != "tool_result") {
      // Q11: a record type this reader does not know.
      if (unknown_types_.insert(first.type).second)
        write_.warn(first.line, first.column,
                    "a record of type " + (first.type.empty() ? std::string("(none)") : "\"" + first.type + "\"") +
                        " is not part of the conversation Qwen Code sends; left out (and any later ones)",
                    "qwen-unknown-records");
      else
        write_.count("qwen-unknown-records");
      return;
    }
    if (first.subtype == "realtime_message") {
      write_.count("qwen-system-records");  // Q3: Qwen Code does not send it back either
      return;
    }
    // Q2: a record's fragments are one message: their parts in file order.
    load(first);
    std::vector<const JsonValue*> parts;
    std::string role;
    std::size_t k = 0;
    for (std::size_t i = fragments_of(first); i != SIZE_MAX; i = records_[i].next_fragment) {
      const Record& r = records_[i];
      const JsonValue* message = json_member(fragments_->docs[k++], "message");
      if (message == nullptr) continue;
      const JsonValue* list = message->IsObject() ? json_member(*message, "parts") : nullptr;
      if (!message->IsObject() || list == nullptr || !list->IsArray()) {
        write_.error(r.line, r.column, r.type + " record: \"message\" is not {\"role\", \"parts\": [...]}",
                     "Qwen Code writes each turn's content as message: {\"role\", \"parts\": [...]}");
        return;
      }
      if (role.empty()) role = json_string(*message, "role");
      if (list != nullptr)
        for (const JsonValue& part : list->GetArray()) parts.push_back(&part);
    }
    if (role.empty()) role = first.type == "assistant" ? "model" : "user";
    // As Qwen Code aggregates fragments: the first model, the last usage.
    for (const rapidjson::Document& doc : fragments_->docs) {
      if (model_of_record_.empty()) model_of_record_ = json_string(doc, "model");
      if (const JsonValue* u = json_member(doc, "usageMetadata"); u && u->IsObject()) usage_of_record_ = u;
    }
    content(first, role, parts, fragments_->docs.front());
    model_of_record_.clear();
    usage_of_record_ = nullptr;
  }

  // Q4-Q7: one Content (a role and its parts) as pi messages.
  void content(const Record& r, const std::string& role, const std::vector<const JsonValue*>& parts,
               const JsonValue& record) {
    if (role == "model") {
      assistant(r, parts);
      return;
    }
    Pending rest = pending(Pending::Kind::kUser, r, "record", r.uuid + "#" + std::to_string(entries_so_far()));
    for (const JsonValue* part : parts) {
      if (!part->IsObject()) continue;
      if (const JsonValue* response = json_member(*part, "functionResponse"); response && response->IsObject()) {
        tool_result(r, *response, record);
      } else if (json_member(*part, "text") != nullptr || image_part(r, *part)) {
        if (json_member(*part, "text") && !json_member(*part, "text")->IsString()) continue;
        rest.parts.push_back(part);
      }
    }
    if (rest.parts.empty()) return;
    if (rest.parts.size() == 1 && json_member(*rest.parts[0], "text")) {
      // Written from its text, which Q9 compares: it holds no record while it waits.
      rest.text = json_string(*rest.parts[0], "text");
      rest.parts.clear();
      rest.fragments.reset();
    }
    push(std::move(rest));
  }

  // Q5: text, thought text and function calls; other parts have no pi equivalent.
  void assistant(const Record& r, const std::vector<const JsonValue*>& parts) {
    Pending p = pending(Pending::Kind::kAssistant, r, "record", r.uuid + "#" + std::to_string(entries_so_far()));
    p.model = model_of_record_.empty() ? last_model_ : model_of_record_;
    last_model_ = p.model;
    p.usage = usage_of_record_;
    for (const JsonValue* part : parts) {
      if (!part->IsObject()) continue;
      const JsonValue* text = json_member(*part, "text");
      const JsonValue* call = json_member(*part, "functionCall");
      if (text && text->IsString()) {
        if (text->GetStringLength() == 0) continue;
        p.parts.push_back(part);
      } else if (call && call->IsObject()) {
        p.parts.push_back(part);
        std::string id = json_string(*call, "id");
        if (id.empty()) id = made_call_id(r, p.parts.size());
        open_calls_.push_back({id, json_string(*call, "name")});
      } else {
        write_.warn(r.line, r.column,
                    "assistant record: a part with no text or functionCall has no pi equivalent; left out",
                    "qwen-parts-dropped");
      }
    }
    if (p.parts.empty()) {
      write_.count("qwen-empty-replies");
      return;
    }
    push(std::move(p));
  }

  // Entries made so far, written or not (ids are made from the count).
  std::size_t entries_so_far() const { return written_ + pending_.size(); }

  std::string made_call_id(const Record& r, std::size_t k) const {
    return "qwen_" + r.uuid.substr(0, 8) + "_" + std::to_string(k);
  }

  // Q6: one functionResponse part is one pi tool result.
  void tool_result(const Record& r, const JsonValue& response, const JsonValue& record) {
    Pending p = pending(Pending::Kind::kToolResult, r, "functionResponse", {});
    p.response = &response;
    p.call_id = json_string(response, "id");
    p.tool_name = json_string(response, "name");
    if (p.call_id.empty()) {
      // Without an id the result answers the oldest open call of its name.
      for (const auto& [id, name] : open_calls_)
        if (name == p.tool_name) {
          p.call_id = id;
          break;
        }
    }
    for (auto it = open_calls_.begin(); it != open_calls_.end(); ++it)
      if (it->first == p.call_id) {
        open_calls_.erase(it);
        break;
      }
    p.key = r.uuid + "#" + p.call_id + "#" + std::to_string(entries_so_far());
    const JsonValue* result = json_member(record, "toolCallResult");
    const JsonValue* body = json_member(response, "response");
    const bool error_text = body && body->IsObject() && json_member(*body, "error") &&
                            json_member(*body, "error")->IsString() && !json_member(*body, "output");
    p.is_error = (result && json_string(*result, "status") == "error") || error_text;
    push(std::move(p));
  }

  // Q4: images travel as inline base64 data; anything else (a file URI, audio, a PDF) does not.
  bool image_part(const Record& r, const JsonValue& part) {
    const JsonValue* inline_data = json_member(part, "inlineData");
    if (inline_data && inline_data->IsObject() && is_image_mime(json_string(*inline_data, "mimeType")) &&
        !json_string(*inline_data, "data").empty())
      return true;
    std::string what = inline_data                     ? "inline " + json_string(*inline_data, "mimeType") + " data"
                       : json_member(part, "fileData") ? std::string("a file reference")
                                                       : std::string("a part of another kind");
    write_.warn(r.line, r.column, r.type + " record: " + what + " cannot be sent by pi; left out",
                "qwen-parts-dropped");
    return false;
  }

  void system_record(const Record& r) {
    if (r.subtype == "chat_compression") {
      compaction(r);
    } else if (r.subtype == "slash_command") {
      slash_command();
    } else {
      const JsonValue* payload = json_member(fragments_->docs.front(), "systemPayload");
      if (r.subtype == "custom_title" && payload != nullptr) title_ = json_string(*payload, "customTitle");
      write_.count("qwen-system-records");  // Q3
    }
  }

  // Q8: a compression checkpoint holds the history Qwen Code continues with: a
  // user message with the summary, the model's acknowledgement, and what it kept.
  void compaction(const Record& r) {
    const JsonValue* payload = json_member(fragments_->docs.front(), "systemPayload");
    const JsonValue* history = payload ? json_member(*payload, "compressedHistory") : nullptr;
    if (history == nullptr || !history->IsArray() || history->Empty()) {
      write_.count("qwen-system-records");  // Qwen Code does not replace its history either
      return;
    }
    Pending p = pending(Pending::Kind::kCompaction, r, "record", r.uuid);
    const JsonValue& first = (*history)[0];
    const JsonValue* first_parts = first.IsObject() ? json_member(first, "parts") : nullptr;
    std::size_t from = 0;
    if (json_string(first, "role") == "user" && first_parts && first_parts->IsArray()) {
      for (const JsonValue& part : first_parts->GetArray())
        if (part.IsObject() && json_member(part, "text") && json_member(part, "text")->IsString())
          p.text += (p.text.empty() ? "" : "\n") + json_string(part, "text");
      from = 1;
    }
    if (const JsonValue* info = json_member(*payload, "info"); info && info->IsObject())
      p.tokens_before = json_count(*info, "originalTokenCount");
    push(std::move(p));
    open_calls_.clear();
    for (std::size_t i = from; i < history->Size(); ++i) {
      const JsonValue& c = (*history)[i];
      const JsonValue* list = c.IsObject() ? json_member(c, "parts") : nullptr;
      if (list == nullptr || !list->IsArray()) continue;
      std::vector<const JsonValue*> parts;
      for (const JsonValue& part : list->GetArray()) parts.push_back(&part);
      content(r, json_string(c, "role"), parts, c);
    }
  }

  // Q9: a slash command Qwen Code ran itself (/compress, /stats, ...): the
  // prompt that typed it is not sent to the model.
  void slash_command() {
    write_.count("qwen-system-records");
    const JsonValue* payload = json_member(fragments_->docs.front(), "systemPayload");
    if (payload == nullptr || json_string(*payload, "phase") != "result" || json_true(*payload, "sentToModel")) return;
    const std::string raw = json_string(*payload, "rawCommand");
    if (!raw.empty() && !pending_.empty() && pending_.back().kind == Pending::Kind::kUser &&
        pending_.back().text == raw) {
      pending_.pop_back();
      write_.count("qwen-command-prompts");
    }
  }

  Pending pending(Pending::Kind kind, const Record& r, const std::string& what, std::string key) const {
    Pending p;
    p.kind = kind;
    p.origin = origin(r, what);
    p.key = std::move(key);
    p.timestamp = json_string(fragments_->docs.front(), "timestamp");
    p.uuid = r.uuid;
    p.fragments = fragments_;
    return p;
  }

  void write_header() {
    // Q1: without a sessionId, an id of the file's own from its first uuid.
    if (session_id_.empty()) session_id_ = derived_session_id("qwen-code:" + records_.front().uuid + first_timestamp_);
    write_.header(session_id_, first_timestamp_, cwd_.empty() ? "/" : cwd_,
                  {records_.front().line, records_.front().column, "first record"});
  }

  // The entries no later record can take back (Q9 takes back only a user
  // message at the end) are written, and what they point into is let go:
  // the chat file is never held whole.
  void write_settled() {
    for (; settled_ > 0; --settled_) {
      write_pending(pending_.front());
      pending_.pop_front();
    }
  }

  // Q9 takes back a user message whose text is a slash command's: from the
  // last entry that cannot be taken back, none before it can be either.
  void push(Pending&& p) {
    const bool may_be_taken_back = p.kind == Pending::Kind::kUser && !p.text.empty();
    pending_.push_back(std::move(p));
    if (!may_be_taken_back) settled_ = pending_.size();
  }

  void write_pending(Pending& p) {
    // Q1: ids from the record's uuid, one chain; a record without a time takes the previous one's.
    const std::string id = entry_ids_.id_for(p.key.empty() ? p.uuid : p.key);
    if (p.timestamp.empty()) p.timestamp = last_timestamp_.empty() ? first_timestamp_ : last_timestamp_;
    last_timestamp_ = p.timestamp;
    const std::int64_t millis = millis_of(p.timestamp, last_millis_);
    last_millis_ = millis;
    switch (p.kind) {
      case Pending::Kind::kAssistant: write_assistant(p, id, parent_, millis); break;
      case Pending::Kind::kUser: write_user(p, id, parent_, millis); break;
      case Pending::Kind::kToolResult: write_tool_result(p, id, parent_, millis); break;
      case Pending::Kind::kCompaction: write_compaction(p, id, parent_); break;
    }
    parent_ = id;
    last_origin_ = p.origin;
    ++written_;
  }

  void write_session() {
    while (!pending_.empty()) {
      write_pending(pending_.front());
      pending_.pop_front();
    }
    // What writing found goes after what reading found, as when the whole chain was read first.
    for (Deferred& d : deferred_) write_.warn(d.line, d.column, std::move(d.message), d.repair);
    // Q12: the title the user gave the session.
    if (!title_.empty())
      write_.entry("session_info", entry_ids_.id_for("session_info"), parent_, last_timestamp_, last_origin_,
                   [&](JsonWriter& w) { write_key_string(w, "name", title_); });
  }

  void write_assistant(const Pending& p, const std::string& id, const std::string& parent, std::int64_t millis) {
    bool has_calls = false;
    std::size_t k = 0;
    write_.entry("message", id, parent, p.timestamp, p.origin, [&](JsonWriter& w) {
      begin_message(w, "assistant");
      for (const JsonValue* part : p.parts) {
        ++k;
        const JsonValue* call = json_member(*part, "functionCall");
        w.StartObject();
        if (call == nullptr && json_true(*part, "thought")) {
          // Q5: a thought came as reasoning_content, where pi sends it back.
          write_key_string(w, "type", "thinking");
          write_key_string(w, "thinking", json_string(*part, "text"));
          write_key_string(w, "thinkingSignature", "reasoning_content");
        } else if (call == nullptr) {
          write_key_string(w, "type", "text");
          write_key_string(w, "text", json_string(*part, "text"));
        } else {
          has_calls = true;
          std::string call_id = json_string(*call, "id");
          if (call_id.empty()) call_id = "qwen_" + p.uuid.substr(0, 8) + "_" + std::to_string(k);
          write_key_string(w, "type", "toolCall");
          write_key_string(w, "id", call_id);
          write_key_string(w, "name", json_string(*call, "name"));
          w.Key("arguments");
          write_object_or_empty(w, json_member(*call, "args"));
        }
        w.EndObject();
      }
      w.EndArray();
      // Q7: what pi knows of the model: Qwen Code spoke Chat Completions.
      write_key_string(w, "api", "openai-completions");
      write_key_string(w, "provider", "qwen-code");
      write_key_string(w, "model", p.model);
      static const JsonValue no_usage(rapidjson::kObjectType);
      const JsonValue& u = p.usage ? *p.usage : no_usage;
      const std::uint64_t cached = json_count(u, "cachedContentTokenCount");
      const std::uint64_t prompt = json_count(u, "promptTokenCount");
      write_usage(w, prompt > cached ? prompt - cached : 0,
                  json_count(u, "candidatesTokenCount") + json_count(u, "thoughtsTokenCount"), cached, 0);
      write_key_string(w, "stopReason", has_calls ? "toolUse" : "stop");
      w.Key("timestamp");
      w.Int64(millis);
      w.EndObject();
    });
  }

  static void write_parts(JsonWriter& w, const std::vector<const JsonValue*>& parts) {
    for (const JsonValue* part : parts) {
      if (const JsonValue* data = json_member(*part, "inlineData"))
        write_image_block(w, json_string(*data, "data"), json_string(*data, "mimeType"));
      else
        write_text_block(w, json_string(*part, "text"));
    }
  }

  void write_user(const Pending& p, const std::string& id, const std::string& parent, std::int64_t millis) {
    write_.entry("message", id, parent, p.timestamp, p.origin, [&](JsonWriter& w) {
      begin_message(w, "user");
      if (p.parts.empty())
        write_text_block(w, p.text);
      else
        write_parts(w, p.parts);
      w.EndArray();
      w.Key("timestamp");
      w.Int64(millis);
      w.EndObject();
    });
  }

  // Q6: the text Qwen Code sends for a result: response.output, else
  // response.error, else the response as JSON; then the result's own parts.
  static std::string response_text(const JsonValue& response) {
    const JsonValue* body = json_member(response, "response");
    if (body == nullptr || body->IsNull()) return {};
    if (body->IsString()) return std::string(body->GetString(), body->GetStringLength());
    if (body->IsObject()) {
      for (const char* key : {"output", "error"})
        if (const JsonValue* v = json_member(*body, key); v && v->IsString())
          return std::string(v->GetString(), v->GetStringLength());
    }
    rapidjson::StringBuffer buffer;
    JsonWriter w(buffer);
    body->Accept(w);
    return std::string(buffer.GetString(), buffer.GetSize());
  }

  void write_tool_result(const Pending& p, const std::string& id, const std::string& parent, std::int64_t millis) {
    std::vector<const JsonValue*> parts;
    if (const JsonValue* list = json_member(*p.response, "parts"); list && list->IsArray())
      for (const JsonValue& part : list->GetArray()) {
        if (!part.IsObject()) continue;
        const JsonValue* text = json_member(part, "text");
        if ((text && text->IsString() && text->GetStringLength() > 0) || (!text && image_part_quiet(part)))
          parts.push_back(&part);
        else if (!text)
          deferred_.push_back(
              {p.origin.line, p.origin.column,
               "a tool result's part that is not text or an inline image cannot be sent by pi; left out",
               "qwen-parts-dropped"});
      }
    write_.entry("message", id, parent, p.timestamp, p.origin, [&](JsonWriter& w) {
      begin_tool_result(w, p.call_id, p.tool_name);
      const std::string text = response_text(*p.response);
      if (!text.empty()) write_text_block(w, text);
      write_parts(w, parts);
      w.EndArray();
      w.Key("isError");
      w.Bool(p.is_error);
      w.Key("timestamp");
      w.Int64(millis);
      w.EndObject();
    });
  }

  static bool image_part_quiet(const JsonValue& part) {
    const JsonValue* data = json_member(part, "inlineData");
    return data && data->IsObject() && is_image_mime(json_string(*data, "mimeType")) &&
           !json_string(*data, "data").empty();
  }

  void write_compaction(const Pending& p, const std::string& id, const std::string& parent) {
    // Q8: pi sends the summary, then the entries after it: those Qwen Code kept.
    write_.entry("compaction", id, parent, p.timestamp, p.origin, [&](JsonWriter& w) {
      write_key_string(w, "summary", p.text);
      write_key_string(w, "firstKeptEntryId", id);
      w.Key("tokensBefore");
      w.Uint64(p.tokens_before);
    });
  }

  const std::string& file_;
  ReadSession& out_;
  TranscriptWriter write_;
  const LogSource* source_ = nullptr;
  RecordWindow window_;  // the second pass's reads
  std::deque<Record> records_;
  std::shared_ptr<Fragments> fragments_;  // the record being converted
  std::deque<Pending> pending_;           // not written yet
  std::size_t settled_ = 0;               // the first pending_ no later record can take back
  // A warning found while writing, reported once the chain is converted.
  struct Deferred {
    std::uint64_t line, column;
    std::string message, repair;
  };
  std::vector<Deferred> deferred_;
  std::string parent_, last_timestamp_;
  std::int64_t last_millis_ = 0;
  TranscriptOrigin last_origin_;
  std::uint64_t written_ = 0;
  // uuid -> its fragments, in file order: the first and the last, each linked to the next (a vector and a key
  // string per uuid, made and freed, were 5% of the reader). The keys are the records' own uuids.
  struct Fragment {
    std::size_t first, last;
  };
  std::unordered_map<std::string_view, Fragment> by_uuid_;
  std::size_t fragments_of(const Record& r) const { return by_uuid_.find(r.uuid)->second.first; }
  std::vector<std::pair<std::string, std::string>> open_calls_;  // (call id, tool name) not yet answered
  EntryIds entry_ids_;
  std::set<std::string> unknown_types_;
  std::string session_id_, first_timestamp_, cwd_, title_;
  std::string model_of_record_, last_model_;  // Q7: the record's model, else the last one seen
  const JsonValue* usage_of_record_ = nullptr;
  std::size_t last_on_chain_ = SIZE_MAX;
  bool mixed_reported_ = false, seen_first_ = false;
};

}  // namespace

std::string convert_qwen_code(std::string chat, const std::string& file, const std::string& leaf, ReadSession& out) {
  std::string text;
  QwenCodeReader(file, text, out).run(BytesSource(std::move(chat)), leaf);
  if (!out.ok()) text.clear();
  return text;
}

namespace {

class QwenCodeFormat final : public Reader {
 public:
  const ReaderInfo& info() const override {
    static const ReaderInfo info{"qwen-code",
                                 "Qwen Code chat file",
                                 "records with \"uuid\", \"sessionId\" and \"provenance\"",
                                 "Qwen Code records",
                                 "~/.qwen/projects/<sanitized cwd>/chats/<session id>.jsonl",
                                 "docs/qwen-code.md"};
    return info;
  }
  // Claude Code's records have uuid and sessionId too (its bid is a marker):
  // Qwen Code's alone have "provenance" and Gemini-style message.parts, so
  // they outbid it.
  int bid(const InputHead& head) const override {
    rapidjson::Document doc;
    if (head.lines.empty() || !parse_head_record(head.lines[0], doc)) return kBidNone;
    if (!json_member(doc, "uuid") || !json_member(doc, "sessionId")) return kBidNone;
    const JsonValue* message = json_member(doc, "message");
    const bool parts = message && message->IsObject() && json_member(*message, "parts");
    if (json_member(doc, "provenance") || parts) return kBidMarker + 1;
    return kBidNone;
  }
  // Q2: --leaf is one of the file's uuids, and the chain ending there is written.
  ReadSession read(const ReaderInput& input, const ReadOptions& options) const override {
    const std::string& file = input.name();
    const std::string leaf = options.leaf.value_or("");
    ReadSession out = read_transcript(
        input, options, [&](const LogSource& source, std::string& text, SessionSpool* spool, ReadSession& into) {
          QwenCodeReader(file, text, into, spool).run(source, leaf);
        });
    out.leaf_taken = options.leaf.has_value();
    return out;
  }
};

}  // namespace

const Reader& qwen_code_reader() {
  static const QwenCodeFormat reader;
  return reader;
}

}  // namespace pihydrate
