// GitHub Copilot CLI session events -> pi v3 session, by the rules of
// docs/copilot-cli.md (CP1-CP14; the comments name them).
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <sys/stat.h>

#include <rapidjson/error/en.h>

#include "pihydrate/formats.h"
#include "readers/head_record.h"
#include "readers/log_source.h"
#include "readers/readers.h"
#include "readers/transcript_writer.h"

namespace pihydrate {
namespace {

const char* const kHint = "a Copilot CLI session is ~/.copilot/session-state/<session id>/events.jsonl";

bool is_image_mime(std::string_view mime) { return mime.rfind("image/", 0) == 0; }

// How deep a line's arrays and objects nest, counted outside strings, up to `limit` + 1.
// An event nested deeper is refused before it is parsed: the DOM and the writer recurse.
constexpr int kMaxDepth = 512;
int nesting_of(std::string_view line, int limit) {
  int depth = 0, deepest = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < line.size() && deepest <= limit; ++i) {
    const char c = line[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

// CP9: the exit code in the trailer the CLI ends a shell result with
// ("<shellId: N completed with exit code K>"); 0 when there is none.
long trailer_exit_code(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  const std::string_view marker = " completed with exit code ";
  if (text.empty() || text.back() != '>') return 0;
  const std::size_t open = text.rfind("<shellId: ");
  const std::size_t at = text.rfind(marker);
  if (open == std::string_view::npos || at == std::string_view::npos || at < open) return 0;
  return std::strtol(std::string(text.substr(at + marker.size())).c_str(), nullptr, 10);
}

// The event types that are the CLI's own bookkeeping (CP4): shown in its
// timeline, used for its accounting, never sent to the model.
bool is_bookkeeping(const std::string& type) {
  static const std::set<std::string> prefixes = {"session.",       "assistant.",      "tool.",        "permission.",
                                                 "hook.",          "subagent.",       "skill.",       "mcp.",
                                                 "external_tool.", "human_response.", "tool_search.", "model."};
  if (type == "abort") return true;
  for (const std::string& p : prefixes)
    if (type.rfind(p, 0) == 0) return true;
  return false;
}

// CP2: the events that are messages of the conversation (the others may sit on side chains).
bool is_message_event(const std::string& type) {
  return type == "user.message" || type == "assistant.message" || type == "tool.execution_complete" ||
         type == "system.notification" || type == "session.compaction_complete";
}

// One event, parsed, with where it starts.
struct Event {
  rapidjson::Document doc;
  const JsonValue* data = nullptr;  // its "data" object, or an empty one
  std::string type;
  std::uint64_t line = 0, column = 0;
  std::uint64_t ordinal = 0;  // 1-based among the file's events
  std::uint64_t begin = 0;    // its bytes in the file
  std::size_t size = 0;
};

class CopilotCliReader {
 public:
  CopilotCliReader(const std::string& file, std::string& text, ReadSession& out, SessionSpool* spool = nullptr)
      : out_(out), write_(file, text, out, spool) {}

  void run(const LogSource& source) {
    source_ = &source;
    scan();
    if (!out_.ok()) return;
    if (!started_) {
      write_.error(0, 0, "no session.start event: the file holds no Copilot CLI session", kHint);
      return;
    }
    convert();
    if (!out_.ok()) return;
    if (!wrote_conversation_)
      write_.error(0, 0, "the session holds no conversation (no user or assistant message)", kHint);
  }

 private:
  struct Asset {
    std::uint64_t begin = 0;
    std::size_t size = 0;
  };

  // Each event of the file in order, parsed; `pass` 1 reports what is wrong
  // with the file, pass 2 (the same bytes) does not again.
  void for_each_event(int pass, const std::function<void(Event&)>& visit) {
    std::uint64_t ordinal = 0;
    for_each_log_line(*source_, [&](const JsonlLine& line) {
      Event e;
      if (nesting_of(line.text, kMaxDepth) > kMaxDepth) {
        if (pass == 1)
          write_.error(line.number, line.column_of(line.begin),
                       "an event nested deeper than " + std::to_string(kMaxDepth) + " levels",
                       "the CLI writes events a few levels deep; the file was edited or is corrupt");
        return false;
      }
      e.doc.Parse(line.text.data(), line.text.size());
      if (e.doc.HasParseError()) {
        if (pass == 2) return true;  // pass 1 reported it (or left the cut-off last line out)
        const std::uint64_t at = line.column_of(line.begin + e.doc.GetErrorOffset());
        const std::string why = rapidjson::GetParseError_En(e.doc.GetParseError());
        if (line.last_without_newline) {
          write_.warn(line.number, at, "the last line is cut off (" + why + "); left out", "truncated-last-line");
          return true;
        }
        write_.error(line.number, at, "not JSON: " + why, "each line of a Copilot CLI events.jsonl is one JSON object");
        return false;
      }
      e.line = line.number;
      e.begin = line.begin;
      e.size = line.text.size();
      e.column = line.column_of(line.begin + line.text.find_first_not_of(" \t"));
      if (!e.doc.IsObject()) {
        if (pass == 1)
          write_.error(e.line, e.column, "an event is a JSON object",
                       "each line of a Copilot CLI events.jsonl is one JSON object");
        return pass == 2;
      }
      e.ordinal = ++ordinal;
      if (pass == 1) ++out_.records_read;
      e.type = json_string(e.doc, "type");
      static const JsonValue empty(rapidjson::kObjectType);
      const JsonValue* data = json_member(e.doc, "data");
      e.data = data && data->IsObject() ? data : &empty;
      if (pass == 1 && e.ordinal == 1 && e.type != "session.start") {
        // CP1: the CLI starts every session's file with session.start.
        write_.error(e.line, e.column,
                     "a Copilot CLI session starts with a session.start event; this one is " +
                         (e.type.empty() ? std::string("untyped") : "\"" + e.type + "\""),
                     kHint);
        return false;
      }
      visit(e);
      return out_.ok();
    });
  }

  // Pass 1: what the conversation needs before it is written, a few short
  // fields per event, not their texts (docs/copilot-cli.md, "Reading").
  void scan() {
    std::unordered_set<std::string> seen;  // the ids of the events so far (ids, not texts)
    bool chain_reported = false;
    for_each_event(1, [&](Event& e) {
      const std::string id = json_string(e.doc, "id");
      const JsonValue* parent = json_member(e.doc, "parentId");
      const std::string parent_id = parent && parent->IsString() ? parent->GetString() : "";
      // CP2: the conversation is the file's order; a message whose parentId names no earlier event is noted.
      if (e.ordinal > 1 && is_message_event(e.type) && !seen.count(parent_id)) {
        if (!chain_reported)
          write_.warn(e.line, e.column,
                      "parentId " + (parent_id.empty() ? std::string("(none)") : parent_id) +
                          " names no earlier event: the file's order is taken as the conversation's (and for any "
                          "later such event)",
                      "copilot-cli-chain-breaks");
        else
          write_.count("copilot-cli-chain-breaks");
        chain_reported = true;
      }
      seen.insert(id);
      if (e.type == "session.start" && !started_) {
        // CP1: the header is the session's start.
        started_ = true;
        start_line_ = e.line;
        start_column_ = e.column;
        session_id_ = json_string(*e.data, "sessionId");
        start_time_ = json_string(*e.data, "startTime");
        if (start_time_.empty()) start_time_ = json_string(e.doc, "timestamp");
        if (const JsonValue* context = json_member(*e.data, "context"); context && context->IsObject())
          cwd_ = json_string(*context, "cwd");
        model_ = json_string(*e.data, "selectedModel");
      } else if (e.type == "session.context_cleared" && !json_member(e.doc, "agentId")) {
        // CP12: the conversation the CLI sends starts after the last clear.
        cleared_at_ = e.ordinal;
      } else if (e.type == "session.binary_asset") {
        // CP8: an image's bytes, kept once and named by attachments and tool results.
        if (const std::string asset = json_string(*e.data, "assetId"); !asset.empty())
          assets_[asset] = {e.begin, e.size};
      }
    });
  }

  // An asset's media type and base64 bytes, read back from the file; false when it has none.
  bool asset(const std::string& id, std::string& mime, std::string& data) {
    auto found = assets_.find(id);
    if (found == assets_.end() || found->second.size == 0) return false;
    const std::string bytes = read_record(*source_, found->second.begin, found->second.size);
    rapidjson::Document doc;
    doc.Parse(bytes.data(), bytes.size());
    const JsonValue* d = doc.HasParseError() || !doc.IsObject() ? nullptr : json_member(doc, "data");
    if (d == nullptr || !d->IsObject()) return false;
    mime = json_string(*d, "mimeType");
    data = json_string(*d, "data");
    return !data.empty();
  }

  // Pass 2: the conversation, event by event.
  void convert() {
    if (session_id_.empty()) session_id_ = derived_session_id("copilot-cli:" + start_time_);
    timestamp_ = start_time_;
    write_.header(session_id_, start_time_, cwd_.empty() ? "/" : cwd_, {start_line_, start_column_, "session.start"});
    for_each_event(2, [&](Event& e) {
      if (const std::string t = json_string(e.doc, "timestamp"); !t.empty()) event_time_ = t;
      if (e.ordinal <= cleared_at_) {
        if (e.type == "user.message" || e.type == "assistant.message" || e.type == "tool.execution_complete")
          write_.count("copilot-cli-cleared-messages");
        else
          model_event(e);
        return;
      }
      event(e);
    });
    flush_assistant();
    // CP13: the session's title.
    if (!title_.empty() && wrote_conversation_)
      entry("session_info", title_origin_, [&](JsonWriter& w) { write_key_string(w, "name", title_); });
  }

  // What changes the model named on later messages (CP7).
  void model_event(const Event& e) {
    if (e.type == "session.model_change") {
      if (const std::string m = json_string(*e.data, "newModel"); !m.empty()) model_ = m;
    } else if (e.type == "session.resume") {
      if (const std::string m = json_string(*e.data, "selectedModel"); !m.empty()) model_ = m;
    } else if (e.type == "session.title_changed") {
      title_ = json_string(*e.data, "title");
      title_origin_ = {e.line, e.column, "session.title_changed event"};
    }
  }

  void event(Event& e) {
    if (json_member(e.doc, "agentId")) {
      // CP11: a subagent's own events; its answer reaches the conversation as its tool call's result.
      write_.count("copilot-cli-subagent-events");
      return;
    }
    if (e.type == "assistant.message") {
      assistant_chunk(e);
      return;
    }
    if (e.type == "session.usage_record") {
      usage(e);
      return;
    }
    if (e.type == "user.message" || e.type == "tool.execution_complete" || e.type == "system.notification" ||
        e.type == "session.compaction_complete" || e.type == "session.context_cleared")
      flush_assistant();
    timestamp_ = event_time_;
    if (e.type == "user.message") {
      user(e);
    } else if (e.type == "tool.execution_complete") {
      tool_result(e);
    } else if (e.type == "system.notification") {
      notification(e);
    } else if (e.type == "session.compaction_complete") {
      compaction(e);
    } else if (e.type == "session.context_cleared") {
      // CP12: a clear sets the conversation's first message, when it gives one.
      if (const std::string first = json_string(*e.data, "initialMessage"); !first.empty())
        user_text(first, {e.line, e.column, "session.context_cleared event"});
    } else if (e.type == "system.message") {
      // CP3: the CLI's system prompt; pi sends its own.
      write_.count("copilot-cli-system-prompts");
    } else if (e.type == "tool.execution_start") {
      if (const std::string id = json_string(*e.data, "toolCallId"); !id.empty() && !call_names_.count(id))
        call_names_[id] = json_string(*e.data, "toolName");
      write_.count("copilot-cli-bookkeeping-events");
    } else if (e.type == "session.truncation") {
      // CP12: the CLI left old messages out of its requests; pi sends the whole conversation.
      write_.warn(e.line, e.column,
                  "the CLI truncated its conversation here (" +
                      std::to_string(json_count(*e.data, "messagesRemovedDuringTruncation")) +
                      " messages); pi sends them all",
                  "copilot-cli-truncations");
    } else if (e.type == "skill.invoked") {
      // CP10: a skill's text the CLI adds to its requests; how it is placed there is not in the file.
      write_.warn(e.line, e.column, "skill " + json_string(*e.data, "name") + ": its text is not carried over",
                  "copilot-cli-skills-dropped");
    } else if (e.type == "session.model_change" || e.type == "session.resume" || e.type == "session.title_changed") {
      model_event(e);
      write_.count("copilot-cli-bookkeeping-events");
    } else if (is_bookkeeping(e.type)) {
      write_.count("copilot-cli-bookkeeping-events");
    } else if (unknown_types_.insert(e.type).second) {
      // CP14: an event type this reader does not know.
      write_.warn(e.line, e.column,
                  "an event of type " + (e.type.empty() ? std::string("(none)") : "\"" + e.type + "\"") +
                      " is not part of the conversation this reader knows; left out (and any later ones)",
                  "copilot-cli-unknown-events");
    } else {
      write_.count("copilot-cli-unknown-events");
    }
  }

  // CP5: user messages: the text the CLI sent (transformedContent), then their images.
  void user(const Event& e) {
    std::string text = json_string(*e.data, "transformedContent");
    if (text.empty()) text = json_string(*e.data, "content");
    std::vector<std::pair<std::string, std::string>> images;  // mime, base64
    if (const JsonValue* list = json_member(*e.data, "attachments"); list && list->IsArray())
      for (const JsonValue& a : list->GetArray()) {
        if (!a.IsObject()) continue;
        std::string mime = json_string(a, "mimeType"), data = json_string(a, "data");
        if (data.empty() && !json_string(a, "assetId").empty() && is_image_mime(mime))
          asset(json_string(a, "assetId"), mime, data);
        if (!data.empty() && is_image_mime(mime)) {
          images.emplace_back(mime, data);
        } else if (is_image_mime(mime) || json_string(a, "type") == "blob") {
          // CP8: bytes the file does not hold (omitted for their size, or never kept).
          write_.warn(e.line, e.column,
                      "an attached " + (mime.empty() ? std::string("blob") : mime) +
                          " whose bytes the file does not hold; left out",
                      "copilot-cli-attachments-dropped");
        }
        // Files and other references: the CLI rendered them into transformedContent.
      }
    if (text.empty() && images.empty()) {
      write_.count("copilot-cli-empty-user-messages");
      return;
    }
    entry("message", {e.line, e.column, "user.message event"}, [&](JsonWriter& w) {
      begin_message(w, "user");
      if (!text.empty()) write_text_block(w, text);
      for (const auto& [mime, data] : images) write_image_block(w, data, mime);
      w.EndArray();
      w.Key("timestamp");
      w.Int64(millis());
      w.EndObject();
    });
  }

  void user_text(const std::string& text, const TranscriptOrigin& origin) {
    entry("message", origin, [&](JsonWriter& w) {
      begin_message(w, "user");
      write_text_block(w, text);
      w.EndArray();
      w.Key("timestamp");
      w.Int64(millis());
      w.EndObject();
    });
  }

  // CP10: a notification the CLI put in the conversation (a background task done).
  void notification(const Event& e) {
    const std::string text = json_string(*e.data, "content");
    if (text.empty()) {
      write_.count("copilot-cli-empty-user-messages");
      return;
    }
    user_text(text, {e.line, e.column, "system.notification event"});
  }

  // CP7: the usage the CLI recorded for the model call whose message follows.
  void usage(const Event& e) {
    const JsonValue* u = json_member(*e.data, "usage");
    if (u == nullptr || !u->IsObject()) return;
    usage_ = Usage{};
    usage_.seen = true;
    usage_.input = json_count(*u, "inputTokens");
    usage_.output = json_count(*u, "outputTokens");
    usage_.cache_read = json_count(*u, "cacheReadTokens");
    usage_.cache_write = json_count(*u, "cacheWriteTokens");
    usage_.provider_type = json_string(*u, "providerType");
    usage_.byok = json_true(*u, "isByok");
    write_.count("copilot-cli-bookkeeping-events");
  }

  // CP6: the chunks of one model call (the same apiCallId, one after another) are one pi message.
  void assistant_chunk(Event& e) {
    const std::string call = json_string(*e.data, "apiCallId");
    if (!chunks_.empty() && (call.empty() || call != chunk_call_)) flush_assistant();
    if (chunks_.empty()) {
      chunk_usage_ = usage_;
      usage_ = Usage{};
      chunk_time_ = event_time_;
    }
    chunk_call_ = call;
    chunks_.push_back(std::move(e));
  }

  struct Block {
    enum Kind { kText, kThinking, kRedacted, kCall } kind;
    std::string text, signature;
    const JsonValue* call = nullptr;
  };

  // CP6: thinking and text, in the order the reply had them.
  void reasoning_and_text(const JsonValue& d, std::vector<Block>& blocks, const std::string& api) {
    const std::string content = json_string(d, "content");
    const JsonValue* rb = json_member(d, "reasoningBlocks");
    const bool anthropic_blocks = rb && rb->IsObject() && json_string(*rb, "provider") == "anthropic-messages";
    const JsonValue* ordered = anthropic_blocks ? json_member(*rb, "orderedBlocks") : nullptr;
    const JsonValue* list = anthropic_blocks ? json_member(*rb, "blocks") : nullptr;
    bool text_written = false;
    const auto anthropic_block = [&](const JsonValue& b) {
      if (!b.IsObject()) return;
      const std::string type = json_string(b, "type");
      if (type == "thinking") {
        blocks.push_back({Block::kThinking, json_string(b, "thinking"), json_string(b, "signature"), nullptr});
      } else if (type == "redacted_thinking") {
        blocks.push_back({Block::kRedacted, "", json_string(b, "data"), nullptr});
      } else if (type == "text" && ordered) {
        if (const std::string t = json_string(b, "text"); !t.empty()) blocks.push_back({Block::kText, t, "", nullptr});
        text_written = true;
      }
    };
    if (ordered && ordered->IsArray()) {
      for (const JsonValue& b : ordered->GetArray()) anthropic_block(b);
    } else if (list && list->IsArray()) {
      for (const JsonValue& b : list->GetArray()) anthropic_block(b);
    } else if (const std::string reasoning = json_string(d, "reasoningText"); !reasoning.empty()) {
      // Without blocks: the readable text, signed by reasoningOpaque when the call spoke Anthropic's API.
      std::string signature;
      if (api == "anthropic-messages")
        signature = json_string(d, "reasoningOpaque");
      else if (api == "openai-completions")
        signature = json_string(d, "reasoningWireField");
      blocks.push_back({Block::kThinking, reasoning, signature, nullptr});
    } else if (!json_string(d, "reasoningOpaque").empty() && api == "anthropic-messages") {
      blocks.push_back({Block::kRedacted, "", json_string(d, "reasoningOpaque"), nullptr});
    }
    if (!json_string(d, "encryptedContent").empty()) write_.count("copilot-cli-encrypted-reasoning");
    if (!text_written && !content.empty()) blocks.push_back({Block::kText, content, "", nullptr});
  }

  std::string api_of(const JsonValue& d) const {
    const JsonValue* rb = json_member(d, "reasoningBlocks");
    const std::string wire = rb && rb->IsObject() ? json_string(*rb, "provider") : "";
    if (wire == "anthropic-messages" || wire == "openai-responses" || wire == "openai-completions") return wire;
    if (chunk_usage_.provider_type == "anthropic") return "anthropic-messages";
    return "openai-completions";
  }

  void flush_assistant() {
    if (chunks_.empty()) return;
    std::vector<Event> chunks = std::move(chunks_);
    chunks_.clear();
    const Event& first = chunks.front();
    const std::string api = api_of(*first.data);
    std::vector<Block> blocks;
    std::string model;
    for (const Event& c : chunks) {
      reasoning_and_text(*c.data, blocks, api);
      if (const std::string m = json_string(*c.data, "model"); !m.empty()) model = m;
      if (const JsonValue* requests = json_member(*c.data, "toolRequests"); requests && requests->IsArray())
        for (const JsonValue& r : requests->GetArray())
          if (r.IsObject() && !json_string(r, "toolCallId").empty()) blocks.push_back({Block::kCall, "", "", &r});
    }
    if (blocks.empty()) {
      // CP6: a reply with nothing in it is not sent back.
      write_.count("copilot-cli-empty-replies");
      return;
    }
    if (model.empty()) model = model_;
    model_ = model;
    bool has_calls = false;
    for (const Block& b : blocks)
      if (b.kind == Block::kCall) {
        has_calls = true;
        call_names_[json_string(*b.call, "toolCallId")] = json_string(*b.call, "name");
        open_calls_.insert(json_string(*b.call, "toolCallId"));
      }
    timestamp_ = chunk_time_;
    entry("message", {first.line, first.column, "assistant.message event"}, [&](JsonWriter& w) {
      begin_message(w, "assistant");
      for (const Block& b : blocks) {
        w.StartObject();
        if (b.kind == Block::kText) {
          write_key_string(w, "type", "text");
          write_key_string(w, "text", b.text);
        } else if (b.kind == Block::kCall) {
          write_key_string(w, "type", "toolCall");
          write_key_string(w, "id", json_string(*b.call, "toolCallId"));
          write_key_string(w, "name", json_string(*b.call, "name"));
          w.Key("arguments");
          write_object_or_empty(w, json_member(*b.call, "arguments"));
        } else {
          write_key_string(w, "type", "thinking");
          write_key_string(w, "thinking", b.text);
          if (!b.signature.empty()) write_key_string(w, "thinkingSignature", b.signature);
          if (b.kind == Block::kRedacted) {
            w.Key("redacted");
            w.Bool(true);
          }
        }
        w.EndObject();
      }
      w.EndArray();
      // CP7: what pi knows of the model that wrote it.
      write_key_string(w, "api", api);
      write_key_string(w, "provider",
                       !chunk_usage_.seen || !chunk_usage_.byok ? std::string("github-copilot")
                       : chunk_usage_.provider_type.empty()     ? std::string("openai")
                                                                : chunk_usage_.provider_type);
      write_key_string(w, "model", model);
      const std::uint64_t cached = chunk_usage_.cache_read + chunk_usage_.cache_write;
      write_usage(w, chunk_usage_.input > cached ? chunk_usage_.input - cached : 0, chunk_usage_.output,
                  chunk_usage_.cache_read, chunk_usage_.cache_write);
      write_key_string(w, "stopReason", has_calls ? "toolUse" : "stop");
      if (const std::string id = json_string(*first.data, "apiCallId"); !id.empty())
        write_key_string(w, "responseId", id);
      w.Key("timestamp");
      w.Int64(millis());
      w.EndObject();
    });
  }

  // CP8, CP9: a tool's completion is the pi result of its call.
  void tool_result(const Event& e) {
    const std::string id = json_string(*e.data, "toolCallId");
    if (!open_calls_.count(id)) {
      // A command the user ran (isUserRequested), or a call whose message is not in the file.
      write_.count(json_true(*e.data, "isUserRequested") ? "copilot-cli-user-commands" : "copilot-cli-orphan-results");
      return;
    }
    open_calls_.erase(id);
    const bool success = json_true(*e.data, "success");
    std::string text;
    std::vector<std::pair<std::string, std::string>> images;
    const JsonValue* result = json_member(*e.data, "result");
    if (success && result && result->IsObject()) {
      text = json_string(*result, "content");
      if (const JsonValue* binaries = json_member(*result, "binaryResultsForLlm"); binaries && binaries->IsArray())
        for (const JsonValue& b : binaries->GetArray()) {
          if (!b.IsObject()) continue;
          std::string mime = json_string(b, "mimeType"), data = json_string(b, "data");
          if (data.empty() && !json_string(b, "assetId").empty()) asset(json_string(b, "assetId"), mime, data);
          if (!data.empty() && is_image_mime(mime))
            images.emplace_back(mime, data);
          else
            write_.warn(e.line, e.column,
                        "a tool result's " + (mime.empty() ? std::string("binary") : mime) +
                            " the file does not hold as an image; left out",
                        "copilot-cli-attachments-dropped");
        }
    } else if (const JsonValue* error = json_member(*e.data, "error"); error && error->IsObject()) {
      text = json_string(*error, "message");
    }
    // CP9: a shell command that exited with a code other than 0 failed, as pi's own bash tool says.
    long exit_code = 0;
    if (const JsonValue* shell = json_member(*e.data, "shellExecution"); shell && shell->IsObject()) {
      const JsonValue* code = json_member(*shell, "exitCode");
      if (code && code->IsInt64()) exit_code = static_cast<long>(code->GetInt64());
    } else {
      exit_code = trailer_exit_code(text);
    }
    const bool failed = !success || exit_code != 0;
    entry("message", {e.line, e.column, "tool.execution_complete event"}, [&](JsonWriter& w) {
      begin_tool_result(w, id, call_names_[id]);
      if (!text.empty() || images.empty()) write_text_block(w, text);
      for (const auto& [mime, data] : images) write_image_block(w, data, mime);
      w.EndArray();
      w.Key("isError");
      w.Bool(failed);
      w.Key("timestamp");
      w.Int64(millis());
      w.EndObject();
    });
  }

  // CP12: a compaction that succeeded: its summary, then what came after it.
  void compaction(const Event& e) {
    const std::string summary = json_string(*e.data, "summaryContent");
    if (!json_true(*e.data, "success") || summary.empty()) {
      write_.count("copilot-cli-bookkeeping-events");
      return;
    }
    open_calls_.clear();
    const std::string id = next_id();
    write_.entry("compaction", id, last_id_, timestamp_, {e.line, e.column, "session.compaction_complete event"},
                 [&](JsonWriter& w) {
                   write_key_string(w, "summary", summary);
                   write_key_string(w, "firstKeptEntryId", id);
                   w.Key("tokensBefore");
                   w.Uint64(json_count(*e.data, "preCompactionTokens"));
                 });
    last_id_ = id;
  }

  std::string next_id() { return entry_ids_.id_for("copilot-cli:" + std::to_string(++entries_)); }

  // CP2: one chain, ids made from the entries' places.
  void entry(const char* type, const TranscriptOrigin& origin, const std::function<void(JsonWriter&)>& members) {
    const std::string id = next_id();
    write_.entry(type, id, last_id_, timestamp_.empty() ? start_time_ : timestamp_, origin, members);
    last_id_ = id;
    wrote_conversation_ = true;
  }

  std::int64_t millis() {
    last_millis_ = millis_of(timestamp_, last_millis_);
    return last_millis_;
  }

  struct Usage {
    bool seen = false, byok = false;
    std::uint64_t input = 0, output = 0, cache_read = 0, cache_write = 0;
    std::string provider_type;
  };

  ReadSession& out_;
  TranscriptWriter write_;
  const LogSource* source_ = nullptr;
  bool started_ = false, wrote_conversation_ = false;
  std::uint64_t start_line_ = 1, start_column_ = 1, cleared_at_ = 0, entries_ = 0;
  std::string session_id_, start_time_, cwd_, model_, title_;
  TranscriptOrigin title_origin_;
  std::map<std::string, Asset> assets_;  // assetId -> where its event is
  std::vector<Event> chunks_;            // CP6: the assistant message being gathered
  std::string chunk_call_, chunk_time_, event_time_, timestamp_, last_id_;
  Usage usage_, chunk_usage_;
  std::unordered_map<std::string, std::string> call_names_;  // call id -> tool name
  std::set<std::string> open_calls_;                         // calls written without their result yet
  std::set<std::string> unknown_types_;
  EntryIds entry_ids_;
  std::int64_t last_millis_ = 0;
};

// CP1: the first record of a Copilot CLI events.jsonl.
bool is_start_event(const JsonValue& doc) {
  if (json_string(doc, "type") != "session.start") return false;
  const JsonValue* data = json_member(doc, "data");
  return data && data->IsObject() && (json_member(*data, "copilotVersion") || json_member(*data, "producer"));
}

class CopilotCliFormat final : public Reader {
 public:
  const ReaderInfo& info() const override {
    static const ReaderInfo info{"copilot-cli",
                                 "Copilot CLI session",
                                 "a first event {\"type\": \"session.start\", \"data\": {\"copilotVersion\", ...}}",
                                 "Copilot CLI events",
                                 "~/.copilot/session-state/<session id>/events.jsonl",
                                 "docs/copilot-cli.md"};
    return info;
  }
  int bid(const InputHead& head) const override {
    rapidjson::Document doc;
    if (head.lines.empty() || !parse_head_record(head.lines[0], doc)) return kBidNone;
    return is_start_event(doc) ? kBidMarker : kBidNone;
  }
  // An events file is one chain: --leaf names an entry of the session written, as for pi's files.
  // The file read in place, twice: one event in memory at a time (docs/copilot-cli.md, "Reading").
  ReadSession read(const ReaderInput& input, const ReadOptions& options) const override {
    const std::string& file = input.name();
    return read_transcript(input, options,
                           [&](const LogSource& source, std::string& text, SessionSpool* spool, ReadSession& out) {
                             CopilotCliReader(file, text, out, spool).run(source);
                           });
  }
};

bool is_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool is_directory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

}  // namespace

std::string convert_copilot_cli(std::string events, const std::string& file, ReadSession& out) {
  std::string text;
  CopilotCliReader(file, text, out).run(BytesSource(std::move(events)));
  if (!out.ok()) text.clear();
  return text;
}

std::string copilot_cli_session_file(const std::string& argument, const char* copilot_home, const char* home) {
  if (argument.empty() || argument == "-" || is_file(argument)) return argument;
  // A session's folder: its events.jsonl.
  if (is_directory(argument)) {
    const std::string events = argument + (argument.back() == '/' ? "" : "/") + "events.jsonl";
    return is_file(events) ? events : argument;
  }
  // A bare session id: its folder under $COPILOT_HOME, else ~/.copilot.
  if (argument.find('/') != std::string::npos) return argument;
  for (const std::string& root : {copilot_home && *copilot_home ? std::string(copilot_home) : std::string(),
                                  home && *home ? std::string(home) + "/.copilot" : std::string()}) {
    if (root.empty()) continue;
    const std::string events = root + "/session-state/" + argument + "/events.jsonl";
    if (is_file(events)) return events;
  }
  return argument;
}

const Reader& copilot_cli_reader() {
  static const CopilotCliFormat reader;
  return reader;
}

}  // namespace pihydrate
