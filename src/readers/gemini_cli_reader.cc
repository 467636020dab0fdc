// Gemini CLI chat log -> pi v3 session, by the rules of docs/gemini-cli.md
// (G1-G12; the comments name them).
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>

#include "core/index_by_key.h"
#include "core/json_spans.h"
#include "pihydrate/formats.h"
#include "readers/gemini_cli_skim.h"
#include "readers/head_record.h"
#include "readers/jsonl_lines.h"
#include "readers/log_source.h"
#include "readers/readers.h"
#include "readers/transcript_writer.h"

namespace pihydrate {
namespace {

using gemini_cli::MessageFields;
using gemini_cli::Metadata;
using gemini_cli::RecordFields;
using gemini_cli::RecordSkimmer;

const char* const kHint = "a Gemini CLI chat log is ~/.gemini/tmp/<project>/chats/session-<time>-<id>.jsonl";

// The record kinds, tested in the order the CLI's loader tests them (G1).
bool is_message(const JsonValue& r) {
  const JsonValue* v = json_member(r, "id");
  return v && v->IsString();
}
bool is_metadata_update(const JsonValue& r) {
  const JsonValue* v = json_member(r, "$set");
  return v && v->IsObject();
}
bool is_header(const JsonValue& r) {
  const JsonValue* s = json_member(r, "sessionId");
  const JsonValue* p = json_member(r, "projectHash");
  return s && s->IsString() && p && p->IsString();
}

// G4: what the CLI leaves out of a user message's text when it resumes:
// nothing, a slash command, a help request, its own session preamble and hook output.
const char* ignored_user_content(std::string_view text) {
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  text = first == std::string_view::npos ? std::string_view() : text.substr(first);
  if (text.empty()) return "gemini-cli-empty-user-messages";
  if (text.rfind("<session_context>", 0) == 0) return "gemini-cli-session-context-dropped";
  if (text.rfind("<hook_context>", 0) == 0) return "gemini-cli-hook-context-dropped";
  if (text[0] == '/' || text[0] == '?') return "gemini-cli-commands-dropped";
  return nullptr;
}

// G11: the session's directory, from the CLI's <session_context> ("- **Workspace Directories:**\n  - DIR").
std::string workspace_of(std::string_view context) {
  const std::string_view marker = "Workspace Directories:**\n";
  const std::size_t at = context.find(marker);
  if (at == std::string_view::npos) return "";
  std::string_view rest = context.substr(at + marker.size());
  const std::size_t dash = rest.find("- ");
  if (dash == std::string_view::npos || rest.substr(0, dash).find_first_not_of(' ') != std::string_view::npos)
    return "";
  rest = rest.substr(dash + 2);
  return std::string(rest.substr(0, rest.find('\n')));
}

// G8: the exit code a shell call's output ends with ("Exit Code: N" among
// the lines the CLI adds after the command's output); 0 when none.
long exit_code_of(std::string_view output) {
  const std::string_view marker = "\nExit Code: ";
  const std::size_t at = output.rfind(marker);
  if (at == std::string_view::npos) return 0;
  // Only the CLI's trailer may follow: the command's own output cannot.
  std::string_view after = output.substr(at + marker.size());
  const std::size_t eol = after.find('\n');
  const long code = std::strtol(std::string(after.substr(0, eol)).c_str(), nullptr, 10);
  for (std::size_t pos = eol; pos != std::string_view::npos && pos + 1 < after.size();) {
    const std::string_view line = after.substr(pos + 1, after.find('\n', pos + 1) - pos - 1);
    bool trailer = line.empty();
    for (const char* head : {"Signal: ", "Background PIDs: ", "Process Group PGID: ", "</untrusted_context>"})
      trailer = trailer || line.rfind(head, 0) == 0;
    if (!trailer) return 0;
    pos = after.find('\n', pos + 1);
  }
  return code;
}

// A string member's text, as a view of the parsed record ("" when it is missing or no string): json_string without
// the copy, for the second pass, which reads every message's strings once.
std::string_view string_at(const JsonValue& object, std::string_view key) {
  const JsonValue* v = json_member(object, key);
  return v && v->IsString() ? std::string_view(v->GetString(), v->GetStringLength()) : std::string_view();
}

// A text of a string or a list of text parts (content as the CLI keeps it).
std::string text_of(const JsonValue* content) {
  if (content == nullptr) return "";
  if (content->IsString()) return std::string(content->GetString(), content->GetStringLength());
  std::string text;
  if (content->IsArray()) {
    for (const JsonValue& part : content->GetArray()) {
      if (part.IsString())
        text.append(part.GetString(), part.GetStringLength());
      else if (part.IsObject() && !json_true(part, "thought"))
        text += json_string(part, "text");
    }
  }
  return text;
}

std::string json_text(const JsonValue& v) {
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  v.Accept(w);
  return std::string(buffer.GetString(), buffer.GetSize());
}

// An image part the model can be sent again: inlineData with an image's media type.
bool is_image(const JsonValue& part) {
  const JsonValue* inline_data = json_member(part, "inlineData");
  return inline_data && string_at(*inline_data, "mimeType").rfind("image/", 0) == 0 &&
         !string_at(*inline_data, "data").empty();
}

std::optional<std::string> optional_string(const JsonValue& object, std::string_view key) {
  const JsonValue* v = json_member(object, key);
  if (v == nullptr || !v->IsString()) return std::nullopt;
  return std::string(v->GetString(), v->GetStringLength());
}

// Short texts kept for the whole replay (the messages' ids and first times), in blocks: no allocation each, and a
// view of one stays valid while the reader lives.
class TextArena {
 public:
  std::string_view keep(std::string_view text) {
    if (text.empty()) return {};
    if (room_ < text.size()) {
      const std::size_t size = std::max(text.size(), kBlockBytes);
      blocks_.push_back(std::make_unique<char[]>(size));
      next_ = blocks_.back().get();
      room_ = size;
    }
    std::memcpy(next_, text.data(), text.size());
    const std::string_view kept(next_, text.size());
    next_ += text.size();
    room_ -= text.size();
    return kept;
  }

 private:
  static constexpr std::size_t kBlockBytes = std::size_t{1} << 16;
  std::vector<std::unique_ptr<char[]>> blocks_;
  char* next_ = nullptr;
  std::size_t room_ = 0;
};

// Records found by their id: a vector, and an IndexByKey over it (an
// unordered_map's node per record, made and freed, was 5% of the reader).
// Each record's `id` is kept in a TextArena.
template <typename Record>
class RecordsById {
 public:
  RecordsById() = default;
  RecordsById(const RecordsById&) = delete;  // by_id_ reads records_ through a pointer
  RecordsById& operator=(const RecordsById&) = delete;
  // The place of the record with this id; one is made, its id kept in `texts`, when there is none.
  std::uint32_t place_of(std::string_view id, TextArena& texts) {
    records_.emplace_back();
    records_.back().id = id;  // the caller's until it is kept
    const std::int64_t found = by_id_.put_if_absent(static_cast<std::uint32_t>(records_.size() - 1));
    if (found >= 0) {
      records_.pop_back();
      return static_cast<std::uint32_t>(found);
    }
    records_.back().id = texts.keep(id);
    return static_cast<std::uint32_t>(records_.size() - 1);
  }
  const Record* find(std::string_view id) const {
    const std::int64_t k = by_id_.find(id);
    return k < 0 ? nullptr : &records_[static_cast<std::size_t>(k)];
  }
  Record& operator[](std::uint32_t k) { return records_[k]; }

 private:
  struct IdOf {
    const std::vector<Record>* records;
    std::string_view operator()(std::uint32_t k) const { return (*records)[k].id; }
  };
  std::vector<Record> records_;
  IndexByKey<IdOf, std::hash<std::string_view>> by_id_{512, IdOf{&records_}};
};

Metadata metadata_of(const JsonValue& m) {
  Metadata meta;
  if (const JsonValue* dirs = json_member(m, "directories"); dirs && dirs->IsArray() && !dirs->Empty())
    if ((*dirs)[0].IsString()) meta.first_directory = (*dirs)[0].GetString();
  meta.kind = json_string(m, "kind");
  return meta;
}

MessageFields message_fields_of(const JsonValue& m) {
  MessageFields f;
  f.id = json_string(m, "id");
  f.timestamp = json_string(m, "timestamp");
  f.model = json_string(m, "model");
  if (const JsonValue* tokens = json_member(m, "tokens"); tokens && tokens->IsObject()) {
    f.tokens = true;
    f.input = json_count(*tokens, "input");
    f.output = json_count(*tokens, "output");
    f.cached = json_count(*tokens, "cached");
    f.thoughts = json_count(*tokens, "thoughts");
  }
  return f;
}

RecordFields fields_of(const JsonValue& r) {
  RecordFields f;
  f.rewind = optional_string(r, "$rewindTo");
  f.message = is_message(r);
  f.fields = message_fields_of(r);
  f.set = is_metadata_update(r);
  if (f.set) f.set_metadata = metadata_of(*json_member(r, "$set"));
  f.session_id = optional_string(r, "sessionId");
  f.project_hash = optional_string(r, "projectHash");
  f.start_time = json_string(r, "startTime");
  f.metadata = metadata_of(r);
  return f;
}

class GeminiCliReader {
 public:
  GeminiCliReader(const std::string& file, std::string& text, ReadSession& out, SessionSpool* spool = nullptr)
      : out_(out), write_(file, text, out, spool) {}

  void run(const LogSource& source) {
    source_ = &source;
    replay();
    if (!out_.ok()) return;
    if (!header_seen_) {
      write_.error(0, 0, "no session header (a record with \"sessionId\" and \"projectHash\")", kHint);
      return;
    }
    write_messages();
    if (!out_.ok()) return;
    if (!wrote_conversation_) write_.error(0, 0, "the chat log holds no conversation once replayed", kHint);
  }

 private:
  // Where the final version of one message of the replayed list is (G1):
  // the record's bytes in the log, and its place in a list it came in.
  struct Slot {
    std::size_t begin = 0, size = 0;
    std::uint64_t line = 0, column = 0;
    int index = -1;       // -1: the record is the message; else its index in the record's messages list
    bool in_set = false;  // the list is the record's $set.messages (else its own messages)
  };

  // G1, first pass: the log replayed as the CLI's loader does, keeping for
  // each message only where its final version is, not its text.
  void replay() {
    bool whole = false;
    RecordFields skimmed;
    RecordSkimmer skimmer;
    for_each_log_line(*source_, [&](const JsonlLine& line) {
      if (out_.records_read == 0 && line.text.find_first_not_of(" \t") == line.text.find('{') &&
          line.text.find_last_not_of(" \t") == line.text.find('{')) {
        whole = true;  // G12: a session-*.json written whole, pretty-printed: "{" alone on its first line
        return false;
      }
      const std::uint64_t column = line.column_of(line.begin + line.text.find_first_not_of(" \t"));
      const Slot place{line.begin, line.text.size(), line.number, column, -1, false};
      if (skimmer.skim(line.text, skimmed)) return first_record(skimmed, nullptr, place);
      rapidjson::Document doc;
      doc.Parse(line.text.data(), line.text.size());
      if (doc.HasParseError()) {
        const std::uint64_t at = line.column_of(line.begin + doc.GetErrorOffset());
        const std::string why = rapidjson::GetParseError_En(doc.GetParseError());
        if (line.last_without_newline) {
          write_.warn(line.number, at, "the last line is cut off (" + why + "); left out", "truncated-last-line");
          return true;
        }
        write_.error(line.number, at, "not JSON: " + why, "each line of a Gemini CLI chat log is one JSON object");
        return false;
      }
      if (!doc.IsObject()) {
        write_.error(line.number, column, "a record is a JSON object",
                     "each line of a Gemini CLI chat log is one JSON object");
        return false;
      }
      return first_record(fields_of(doc), &doc, place);
    });
    if (whole) legacy();
  }

  // A record of the first pass; `doc`: its Document, when it was parsed (a list of messages is read from it).
  bool first_record(const RecordFields& f, const JsonValue* doc, const Slot& at) {
    ++out_.records_read;
    if (out_.records_read == 1 && !(f.session_id && f.project_hash)) {
      // G1: the CLI writes its header first, whether it starts a log or rewrites one.
      write_.error(
          at.line, at.column,
          "a Gemini CLI chat log starts with its header (\"sessionId\", \"projectHash\"); this record is not one",
          kHint);
      return false;
    }
    record(f, doc, at);
    return true;
  }

  void record(const RecordFields& f, const JsonValue* r, const Slot& at) {
    if (f.rewind) {
      // G1: $rewindTo drops that message and all after it; an id not in the list empties it.
      const Message* found = find_message(*f.rewind);
      const std::size_t from = found == nullptr || found->place == kNowhere ? 0 : found->place;
      for (std::size_t i = from; i < slots_.size(); ++i) messages_[in_list_[i]].place = kNowhere;
      slots_.resize(from);
      in_list_.resize(from);
      write_.count("gemini-cli-rewinds");
    } else if (f.message) {
      set_message(f.fields, at);
    } else if (f.set) {
      if (const JsonValue* messages = r ? json_member(*json_member(*r, "$set"), "messages") : nullptr;
          messages && messages->IsArray()) {
        // G1: a $set holding messages replaces the whole list.
        for (const std::uint32_t m : in_list_) messages_[m].place = kNowhere;
        slots_.clear();
        in_list_.clear();
        Slot in_set = at;
        in_set.in_set = true;
        set_list(*messages, in_set);
      }
      metadata(f.set_metadata);
    } else if (f.session_id && f.project_hash) {
      // G1: the header, written again on each resume; the first one is the session's.
      if (!header_seen_) {
        header_seen_ = true;
        header_line_ = at.line;
        session_id_ = *f.session_id;
        start_time_ = f.start_time;
      }
      metadata(f.metadata);
      if (const JsonValue* messages = r ? json_member(*r, "messages") : nullptr; messages && messages->IsArray())
        set_list(*messages, at);
    } else {
      write_.warn(at.line, at.column, "a record that is none of the CLI's (header, message, $set, $rewindTo); left out",
                  "gemini-cli-unknown-records");
    }
  }

  void set_list(const JsonValue& messages, Slot at) {
    for (rapidjson::SizeType i = 0; i < messages.Size(); ++i)
      if (is_message(messages[i])) {
        at.index = static_cast<int>(i);
        set_message(message_fields_of(messages[i]), at);
      }
  }

  void metadata(const Metadata& m) {
    if (m.first_directory) directory_ = *m.first_directory;
    if (!m.kind.empty()) kind_ = m.kind;
  }

  // G1: a message id already in the list keeps its place and takes the new version.
  void set_message(const MessageFields& message, const Slot& at) {
    const std::string& id = message.id;
    // G5: the model of a message's versions (the CLI's rewrite of the list drops it).
    // G2, G5: what the CLI's rewrite of the list drops (time, model, token counts), from the
    // message's earlier versions: a few short fields per message, not its text.
    const std::uint32_t k = messages_.place_of(id, texts_);
    Message& entry = messages_[k];
    Earlier& earlier = entry.earlier;
    if (earlier.timestamp.empty()) earlier.timestamp = texts_.keep(message.timestamp);
    if (!message.model.empty()) {
      if (message.model != last_model_) last_model_ = texts_.keep(message.model);  // a log names few models
      earlier.model = last_model_;
    }
    if (message.tokens) {
      earlier.input = message.input;
      earlier.output = message.output;
      earlier.cached = message.cached;
      earlier.thoughts = message.thoughts;
    }
    if (entry.place != kNowhere) {
      slots_[entry.place] = at;
      return;
    }
    entry.place = slots_.size();
    slots_.push_back(at);
    in_list_.push_back(k);
  }

  // G12: a session-*.json written whole by older versions: one object with the messages.
  void legacy() {
    std::string text;
    std::vector<char> block(1 << 16);
    for (std::size_t got; (got = source_->read_at(text.size(), block.data(), block.size())) != 0;)
      text.append(block.data(), got);
    neutralize_lone_surrogates(text.data(), text.size());
    rapidjson::Document doc;
    doc.Parse(text.data(), text.size());
    if (doc.HasParseError() || !doc.IsObject() || !is_header(doc)) {
      write_.error(1, 1,
                   doc.HasParseError() ? std::string("not JSON: ") + rapidjson::GetParseError_En(doc.GetParseError())
                                       : "a session-*.json file is one object with \"sessionId\" and \"projectHash\"",
                   kHint);
      return;
    }
    ++out_.records_read;
    record(fields_of(doc), &doc, Slot{0, text.size(), 1, 1, -1, false});
  }

  // The message a slot names, parsed from the log (the last record parsed is kept: a list's messages follow each
  // other).
  const JsonValue* message_at(const Slot& s) {
    if (!parsed_ || parsed_begin_ != s.begin) {
      std::string& bytes = window_.read(*source_, s.begin, s.size);
      // The pool emptied first (a Document parsed into again keeps what it held before): its first block, kept
      // from one record to the next, holds most records' values. Parsed in place: its strings are the window's
      // bytes, kept until the next record is read.
      parsed_doc_.SetNull();
      parsed_pool_.Clear();
      parsed_doc_.ParseInsitu(bytes.data());
      if (parsed_doc_.HasParseError()) parsed_doc_.SetNull();  // the log changed under the reader
      parsed_ = true;
      parsed_begin_ = s.begin;
    }
    if (s.index < 0) return &parsed_doc_;
    const JsonValue* list = json_member(s.in_set ? json_member(parsed_doc_, "$set") : &parsed_doc_, "messages");
    if (list == nullptr || !list->IsArray() || static_cast<rapidjson::SizeType>(s.index) >= list->Size())
      return nullptr;
    return &(*list)[static_cast<rapidjson::SizeType>(s.index)];
  }

  // Second pass: the replayed list, in order, written as pi entries.
  void write_messages() {
    // G11: the directory the CLI worked in, from its preamble when it has one.
    // G2: a header without its start time takes the first message's.
    for (const Slot& s : slots_)
      if (const JsonValue* m = message_at(s); m && string_at(*m, "type") == "user") {
        cwd_ = workspace_of(text_of(json_member(*m, "content")));
        if (start_time_.empty()) start_time_ = json_string(*m, "timestamp");
        break;  // the preamble is the first user message
      }
    if (cwd_.empty()) cwd_ = directory_.empty() ? "/" : directory_;
    if (session_id_.empty()) session_id_ = derived_session_id("gemini-cli:" + start_time_);
    timestamp_ = start_time_;
    write_.header(session_id_, start_time_, cwd_, {header_line_, 1, "session header"});
    if (kind_ == "subagent") write_.count("gemini-cli-subagent-log");
    for (std::size_t k = 0; k < slots_.size(); ++k) {
      const Slot& s = slots_[k];
      const JsonValue* found = message_at(s);
      if (found == nullptr) continue;  // not reached: pass 1 found it at this place of these bytes
      current_ = &messages_[in_list_[k]];
      const JsonValue& m = *found;
      const std::string_view type = string_at(m, "type");
      // G2: a message's time is that of its first version (the CLI's rewrite of the list restamps it).
      if (const std::string_view t = earlier_of(m).timestamp; !t.empty()) timestamp_ = t;
      const TranscriptOrigin origin{s.line, s.column, type.empty() ? "message" : std::string(type) + " message"};
      if (type == "user") {
        user(m, origin);
      } else if (type == "gemini") {
        gemini(m, origin);
      } else if (type == "info" || type == "error" || type == "warning") {
        // G3: what the CLI showed; it never sends them to the model.
        write_.count("gemini-cli-notices-dropped");
      } else {
        write_.warn(s.line, s.column,
                    "a message of type " + (type.empty() ? std::string("(none)") : "\"" + std::string(type) + "\"") +
                        " has no pi equivalent; left out",
                    "gemini-cli-messages-dropped");
      }
    }
  }

  void user(const JsonValue& m, const TranscriptOrigin& origin) {
    const JsonValue* content = json_member(m, "content");
    if (content == nullptr || !(content->IsString() || content->IsArray())) {
      write_.warn(origin.line, origin.column, "a user message's content is not a string or a list of parts; left out",
                  "gemini-cli-messages-dropped");
      return;
    }
    // G4: the messages the CLI itself leaves out when it resumes.
    if (const char* dropped = ignored_user_content(text_of(content))) {
      bool has_responses = false;
      if (content->IsArray())
        for (const JsonValue& part : content->GetArray())
          has_responses = has_responses || json_member(part, "functionResponse");
      if (!has_responses) {
        write_.count(dropped);
        return;
      }
    }
    std::vector<const JsonValue*> parts;
    if (content->IsArray()) {
      for (const JsonValue& part : content->GetArray()) {
        if (const JsonValue* response = json_member(part, "functionResponse")) {
          // G7: a function response in a user message answers a call, unless one already did.
          function_response(*response, json_string(*response, "id"), nullptr, false, origin);
        } else if (part.IsString() || (part.IsObject() && json_member(part, "text") && !json_true(part, "thought"))) {
          if (!text_of_part(part).empty()) parts.push_back(&part);  // an empty text is nothing to send
        } else if (is_image(part)) {
          parts.push_back(&part);
        } else {
          write_.warn(origin.line, origin.column,
                      "a user message's part has no pi equivalent (" + part_kind(part) + "); left out",
                      "gemini-cli-parts-dropped");
        }
      }
      if (parts.empty()) return;
    }
    entry("message", origin, [&](JsonWriter& w) {
      begin_message(w, "user");
      if (content->IsString()) write_text_block(w, std::string_view(content->GetString(), content->GetStringLength()));
      for (const JsonValue* part : parts) write_part(w, *part);
      w.EndArray();
      w.Key("timestamp");
      w.Int64(millis());
      w.EndObject();
    });
  }

  static std::string_view text_of_part(const JsonValue& part) {
    return part.IsString() ? std::string_view(part.GetString(), part.GetStringLength()) : string_at(part, "text");
  }

  static std::string part_kind(const JsonValue& part) {
    if (!part.IsObject() || part.MemberCount() == 0) return "not a part";
    if (const JsonValue* inline_data = json_member(part, "inlineData"))
      return "inlineData " + json_string(*inline_data, "mimeType");
    return part.MemberBegin()->name.GetString();
  }

  void write_part(JsonWriter& w, const JsonValue& part) {
    if (part.IsString()) {
      write_text_block(w, std::string_view(part.GetString(), part.GetStringLength()));
    } else if (const JsonValue* inline_data = json_member(part, "inlineData")) {
      write_image_block(w, string_at(*inline_data, "data"), string_at(*inline_data, "mimeType"));
    } else {
      write_text_block(w, string_at(part, "text"));
    }
  }

  // G5, G6: a gemini message is one pi assistant message.
  void gemini(const JsonValue& m, const TranscriptOrigin& origin) {
    const JsonValue* content = json_member(m, "content");
    const JsonValue* tool_calls = json_member(m, "toolCalls");
    if (tool_calls && !tool_calls->IsArray()) tool_calls = nullptr;
    struct Block {
      enum Kind { kText, kThinking, kCall } kind;
      std::string_view text;            // text, thinking: in the record, or in `made`
      const JsonValue* call = nullptr;  // kCall: {id, name, args}
    };
    std::vector<Block> blocks;
    std::deque<std::string> made;  // the texts that are not the record's own
    const auto keep = [&](std::string text) { return std::string_view(made.emplace_back(std::move(text))); };
    bool parts_form = false;  // G5: the content is the API's parts, calls and thoughts included
    if (content && content->IsArray())
      for (const JsonValue& part : content->GetArray())
        parts_form = parts_form || json_member(part, "functionCall") || json_true(part, "thought");
    if (parts_form) {
      for (const JsonValue& part : content->GetArray()) {
        if (const JsonValue* call = json_member(part, "functionCall"); call && call->IsObject())
          blocks.push_back({Block::kCall, "", call});
        else if (json_true(part, "thought") && !string_at(part, "text").empty())
          blocks.push_back({Block::kThinking, string_at(part, "text"), nullptr});
        else if (const std::string_view text = string_at(part, "text"); !text.empty())
          blocks.push_back({Block::kText, text, nullptr});
      }
    } else {
      // G6: thoughts as the CLI sends them back: "**subject** description".
      if (const JsonValue* thoughts = json_member(m, "thoughts"); thoughts && thoughts->IsArray())
        for (const JsonValue& t : thoughts->GetArray()) {
          const std::string_view subject = string_at(t, "subject"), description = string_at(t, "description");
          if (subject.empty() && description.empty()) continue;
          blocks.push_back(
              {Block::kThinking,
               subject.empty() ? description : keep("**" + std::string(subject) + "** " + std::string(description)),
               nullptr});
        }
      const std::string_view text = content && content->IsString()
                                        ? std::string_view(content->GetString(), content->GetStringLength())
                                        : keep(text_of(content));
      if (!text.empty()) blocks.push_back({Block::kText, text, nullptr});
      if (tool_calls)
        for (const JsonValue& call : tool_calls->GetArray())
          if (call.IsObject()) blocks.push_back({Block::kCall, "", &call});
    }
    if (blocks.empty()) {
      // G5: the CLI sends no turn for a message with nothing in it.
      write_.count("gemini-cli-empty-gemini-messages");
      return;
    }
    bool has_calls = false;
    std::vector<std::pair<std::string_view, std::string_view>> calls;  // id, name
    for (const Block& b : blocks)
      if (b.kind == Block::kCall) {
        has_calls = true;
        calls.emplace_back(string_at(*b.call, "id"), string_at(*b.call, "name"));
      }
    entry("message", origin, [&](JsonWriter& w) {
      begin_message(w, "assistant");
      for (const Block& b : blocks) {
        if (b.kind == Block::kText) {
          write_text_block(w, b.text);
        } else if (b.kind == Block::kThinking) {
          w.StartObject();
          write_key_string(w, "type", "thinking");
          write_key_string(w, "thinking", b.text);
          w.EndObject();
        } else {
          w.StartObject();
          write_key_string(w, "type", "toolCall");
          write_key_string(w, "id", string_at(*b.call, "id"));
          write_key_string(w, "name", string_at(*b.call, "name"));
          w.Key("arguments");
          write_object_or_empty(w, json_member(*b.call, "args"));
          w.EndObject();
        }
      }
      w.EndArray();
      write_key_string(w, "api", "google-generative-ai");
      write_key_string(w, "provider", "google");
      const Earlier& earlier = earlier_of(m);
      write_key_string(w, "model", earlier.model.empty() ? last_model_ : earlier.model);
      // G5: Gemini counts cached input inside the prompt and thoughts apart from the answer.
      const std::uint64_t cached = earlier.cached, input = earlier.input;
      write_usage(w, input > cached ? input - cached : 0, earlier.output + earlier.thoughts, cached, 0);
      write_key_string(w, "stopReason", has_calls ? "toolUse" : "stop");
      w.Key("timestamp");
      w.Int64(millis());
      w.EndObject();
    });
    for (const auto& [id, name] : calls) {
      if (name != last_tool_) last_tool_ = texts_.keep(name);  // a log names few tools, mostly one after another
      Call& c = call(id);
      c.name = last_tool_;
      c.named = true;
    }
    // G7: each call's result, from the call's own record, right after the message.
    if (tool_calls)
      for (const JsonValue& call : tool_calls->GetArray()) {
        const std::string id = json_string(call, "id");
        const JsonValue* result = json_member(call, "result");
        const Call* named = find_call(id);
        if (id.empty() || result == nullptr || result->IsNull() || named == nullptr || !named->named) continue;
        const std::string_view status = string_at(call, "status");
        const bool failed = status == "error" || status == "cancelled";
        if (result->IsString()) {
          tool_result(id, std::string_view(result->GetString(), result->GetStringLength()), {}, failed, origin);
        } else if (result->IsArray()) {
          for (const JsonValue& part : result->GetArray())
            if (const JsonValue* response = json_member(part, "functionResponse");
                response && (string_at(*response, "id") == id || string_at(*response, "id").empty())) {
              function_response(*response, id, result, failed, origin);
              break;
            }
        } else if (const JsonValue* response = json_member(*result, "functionResponse")) {
          function_response(*response, id, nullptr, failed, origin);
        }
      }
  }

  // G7, G8: a functionResponse answering call `id` as a pi toolResult; `siblings`: the other parts
  // sent with it (images).
  void function_response(const JsonValue& response, const std::string& id, const JsonValue* siblings, bool failed,
                         const TranscriptOrigin& origin) {
    if (const Call* c = find_call(id); c != nullptr && c->answered) {
      // G7: the CLI's resume sends a recorded result again beside the one it rebuilt.
      write_.count("gemini-cli-duplicate-results");
      return;
    }
    std::string text;
    const JsonValue* body = json_member(response, "response");
    if (body && body->IsObject()) {
      if (const JsonValue* output = json_member(*body, "output"); output && output->IsString()) {
        text.assign(output->GetString(), output->GetStringLength());
      } else if (const JsonValue* error = json_member(*body, "error"); error && error->IsString()) {
        text.assign(error->GetString(), error->GetStringLength());
        failed = true;
      } else {
        text = json_text(*body);
      }
    } else if (body) {
      text = json_text(*body);
    }
    std::vector<const JsonValue*> images;
    for (const JsonValue* list : {json_member(response, "parts"), siblings})
      if (list && list->IsArray())
        for (const JsonValue& part : list->GetArray())
          if (is_image(part)) images.push_back(&part);
    tool_result(id, text, images, failed, origin);
  }

  void tool_result(const std::string& id, std::string_view text, const std::vector<const JsonValue*>& images,
                   bool failed, const TranscriptOrigin& origin) {
    Call& answered = call(id);
    answered.answered = true;
    const std::string_view name = answered.named ? answered.name : std::string_view();
    // G8: a shell call that exited with a code other than 0 failed, as pi's own shell tool says.
    failed = failed || exit_code_of(text) != 0;
    entry("message", {origin.line, origin.column, "functionResponse"}, [&](JsonWriter& w) {
      begin_tool_result(w, id, name);
      if (!text.empty() || images.empty()) write_text_block(w, text);
      for (const JsonValue* image : images) write_part(w, *image);
      w.EndArray();
      w.Key("isError");
      w.Bool(failed);
      w.Key("timestamp");
      w.Int64(millis());
      w.EndObject();
    });
  }

  // G2: one chain, ids made from the messages' place.
  void entry(const char* type, const TranscriptOrigin& origin, const std::function<void(JsonWriter&)>& members) {
    const std::string id = entry_ids_.id_for("gemini-cli:" + std::to_string(++entries_));
    write_.entry(type, id, last_id_, timestamp_, origin, members);
    last_id_ = id;
    wrote_conversation_ = true;
  }

  std::int64_t millis() {
    if (timestamp_ != millis_time_) {  // a message's entries share its time: read once
      last_millis_ = millis_of(timestamp_, last_millis_);
      millis_time_ = timestamp_;
    }
    return last_millis_;
  }

  ReadSession& out_;
  TranscriptWriter write_;
  const LogSource* source_ = nullptr;
  RecordWindow window_;  // the second pass's reads
  std::vector<Slot> slots_;
  std::vector<char> parsed_block_ = std::vector<char>(std::size_t{1} << 16);
  rapidjson::MemoryPoolAllocator<> parsed_pool_{parsed_block_.data(), parsed_block_.size()};
  rapidjson::Document parsed_doc_{&parsed_pool_};
  bool parsed_ = false;
  std::size_t parsed_begin_ = 0;
  // What a message's versions said that a later version may have lost (G2, G5).
  TextArena texts_;  // the messages' ids, times and models
  struct Earlier {
    std::string_view timestamp, model;                              // the first time, the last model named
    std::uint64_t input = 0, output = 0, cached = 0, thoughts = 0;  // the last token counts
  };
  static constexpr std::size_t kNowhere = SIZE_MAX;
  struct Message {
    std::string_view id;
    Earlier earlier;
    std::size_t place = kNowhere;  // its slot, while in the list
  };
  // The message being written is nearly always the one its slot was set for (not when the log changed).
  const Earlier& earlier_of(const JsonValue& m) const {
    static const Earlier none;
    const std::string_view id = string_at(m, "id");
    if (current_ != nullptr && current_->id == id) return current_->earlier;
    const Message* found = find_message(id);
    return found == nullptr ? none : found->earlier;
  }
  // Every message id seen, and what its versions said.
  RecordsById<Message> messages_;
  const Message* find_message(std::string_view id) const { return messages_.find(id); }
  // The tool calls named so far and the ids answered (G7); ids and names are kept in texts_.
  struct Call {
    std::string_view id, name;
    bool named = false;     // made by a gemini message: its tool's name is known
    bool answered = false;  // a result for it is written
  };
  RecordsById<Call> calls_;
  const Call* find_call(std::string_view id) const { return calls_.find(id); }
  Call& call(std::string_view id) { return calls_[calls_.place_of(id, texts_)]; }
  std::string_view last_tool_;          // the last tool name kept
  std::vector<std::uint32_t> in_list_;  // the message of each slot, in messages_
  const Message* current_ = nullptr;    // the message of the slot being written
  std::string_view last_model_;
  EntryIds entry_ids_;
  std::string session_id_, start_time_, directory_, kind_, cwd_, timestamp_, last_id_;
  std::string millis_time_;  // the time last_millis_ was read from
  std::int64_t last_millis_ = 0;
  std::uint64_t entries_ = 0;
  std::uint64_t header_line_ = 1;
  bool header_seen_ = false, wrote_conversation_ = false;
};

}  // namespace

std::string convert_gemini_cli(std::string chat_log, const std::string& file, ReadSession& out) {
  std::string text;
  GeminiCliReader(file, text, out).run(BytesSource(std::move(chat_log)));
  if (!out.ok()) text.clear();
  return text;
}

namespace {

class GeminiCliFormat final : public Reader {
 public:
  const ReaderInfo& info() const override {
    static const ReaderInfo info{"gemini-cli",
                                 "Gemini CLI chat log",
                                 "a first record with \"sessionId\" and \"projectHash\"",
                                 "Gemini CLI records",
                                 "~/.gemini/tmp/<project>/chats/session-<time>-<id>.jsonl",
                                 "docs/gemini-cli.md"};
    return info;
  }
  int bid(const InputHead& head) const override {
    if (head.lines.empty()) return kBidNone;
    rapidjson::Document doc;
    if (parse_head_record(head.lines[0], doc)) return is_header(doc) ? kBidMarker : kBidNone;
    // G12: an older session-*.json, pretty-printed: "{" then its sessionId.
    if (head.lines.size() >= 2 && head.lines[0].find_first_not_of(" \t") == head.lines[0].find('{') &&
        head.lines[0].find_last_not_of(" \t") == head.lines[0].find('{') &&
        head.lines[1].find("\"sessionId\"") != std::string_view::npos &&
        head.text.find("\"projectHash\"") != std::string_view::npos)
      return kBidMarker;
    return kBidNone;
  }
  // A chat log has no tree: --leaf names an entry of the session written, as for pi's files.
  // The file read in place: one record in memory at a time (docs/gemini-cli.md, "Reading").
  ReadSession read(const ReaderInput& input, const ReadOptions& options) const override {
    const std::string& file = input.name();
    return read_transcript(input, options,
                           [&](const LogSource& source, std::string& text, SessionSpool* spool, ReadSession& out) {
                             GeminiCliReader(file, text, out, spool).run(source);
                           });
  }
};

}  // namespace

const Reader& gemini_cli_reader() {
  static const GeminiCliFormat reader;
  return reader;
}

}  // namespace pihydrate
