// What the transcript readers (Claude Code, Codex, Gemini CLI, Qwen Code)
// share: reading a JSONL transcript record by record, and writing the pi v3
// session that stands for it, line by line, each with the transcript position
// it came from, into memory or into a spool.
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "core/index_by_key.h"
#include "core/json_value.h"
#include "pihydrate/findings.h"
#include "pihydrate/reader.h"
#include "readers/log_source.h"

namespace pihydrate {

// RapidJSON's Writer into a StringBuffer, whose String() copies a run of
// bytes that need no escape at once, and escapes the others as Writer does
// (\" \\ \b \f \n \r \t, \u00XX for the other control bytes, nothing
// else): Writer's own goes byte by byte for up to 16 bytes after each escape,
// and was a tenth of the Gemini CLI reader's time.
class JsonWriter : public rapidjson::Writer<rapidjson::StringBuffer> {
 public:
  using Writer::String;
  using Writer::Writer;
  bool String(const Ch* text, rapidjson::SizeType length, bool copy = false);
  // Writer's Key is its String (written by Writer's own).
  bool Key(const Ch* text, rapidjson::SizeType length, bool copy = false) { return String(text, length, copy); }
  bool Key(const Ch* text) { return String(text, static_cast<rapidjson::SizeType>(std::strlen(text))); }
};

// Where one line of the written session came from in the transcript.
struct TranscriptOrigin {
  std::uint64_t line = 0;
  std::uint64_t column = 0;
  std::string record;  // names the record in messages: "assistant record", "response_item function_call"
};

// One transcript record: its parsed object (a reader may keep it) and where it starts.
struct TranscriptRecord {
  rapidjson::Document doc;
  std::uint64_t line = 0;
  std::uint64_t column = 0;
  std::uint64_t offset = 0;  // its text in the transcript, for read_record
  std::size_t size = 0;
};

// Calls `read` for each JSON object line of `transcript`, in order. Blank
// lines, a BOM and CRLF endings are tolerated; a line that is not a JSON
// object is an error (PH605) at its line:column, except a last line cut off
// before its newline (a CLI killed mid-write), which is left out with a
// warning (PH606). Lone UTF-16 surrogate escapes are rewritten in place, as
// for the other inputs.
// Counts each record in out.records_read; stops at the first error. One
// record is in memory at a time (and what `read` keeps of it).
// `skim` (optional) looks at each line first, with the record's place (its
// doc empty): true when it took what it needs from the line, which is then
// certainly a JSON object (and `read` is not called); false when it is not
// sure, and the line is parsed and handed to `read`.
using TranscriptSkim = std::function<bool(std::string_view text, const TranscriptRecord& place)>;
void read_transcript(const LogSource& transcript, const std::string& file, ReadSession& out,
                     const std::function<void(TranscriptRecord&&)>& read, const TranscriptSkim& skim = {});
void read_transcript(std::string transcript, const std::string& file, ReadSession& out,
                     const std::function<void(TranscriptRecord&&)>& read);

// A converted session written to an unlinked temporary file and indexed on
// the second core while the reader converts (SpoolIndexer, as a thread
// export's): the reader never holds the session it writes, only its last MiB.
class SessionSpool {
 public:
  SessionSpool(const std::string& name, const IndexOptions& options);
  ~SessionSpool();
  SessionSpool(const SessionSpool&) = delete;
  SessionSpool& operator=(const SessionSpool&) = delete;
  // Takes `text`'s whole lines once they are 1 MiB or more (`text` is then left empty).
  void take_block(std::string& text);
  // The rest of `text`, and the session: out.index and out.lines.
  void finish(std::string& text, ReadSession& out);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// A transcript reader's read(), the same for every one: `run` converts a
// source into `text` (through a TranscriptWriter given `spool`). Bytes in
// memory are read whole, and the text taken as the session; a file is read a
// line at a time, and the session handed to a spool a MiB at a time (`spool`
// is null for bytes).
using TranscriptRun =
    std::function<void(const LogSource& source, std::string& text, SessionSpool* spool, ReadSession& out)>;
ReadSession read_transcript(const ReaderInput& input, const ReadOptions& options, const TranscriptRun& run);

// Writes the session's lines into `text` (handed to `spool`, when there is
// one, a MiB at a time), their origins and the reader's findings into `out`.
class TranscriptWriter {
 public:
  TranscriptWriter(const std::string& file, std::string& text, ReadSession& out, SessionSpool* spool = nullptr)
      : file_(file), text_(text), out_(out), spool_(spool), writer_(buffer_) {}
  // Adds the summary of the warnings not listed (FindingsList) to `out`.
  ~TranscriptWriter() { listed_.close(); }
  TranscriptWriter(const TranscriptWriter&) = delete;
  TranscriptWriter& operator=(const TranscriptWriter&) = delete;

  void header(const std::string& session_id, const std::string& timestamp, const std::string& cwd,
              const TranscriptOrigin& origin);
  // One entry: `type`, `id`, `parent` ("" for none), `timestamp` (ISO-8601),
  // then the members `write_members` writes into the open object.
  void entry(const char* type, const std::string& id, const std::string& parent, const std::string& timestamp,
             const TranscriptOrigin& origin, const std::function<void(JsonWriter&)>& write_members);

  void error(std::uint64_t line, std::uint64_t column, std::string message, std::string hint = {});
  // A record (or part of one) that is not carried over: reported and counted under `repair`.
  void warn(std::uint64_t line, std::uint64_t column, std::string message, const std::string& repair);
  void count(const std::string& repair, std::uint64_t n = 1) { out_.repairs[repair] += n; }

 private:
  const std::string& file_;
  std::string& text_;
  ReadSession& out_;
  FindingsList listed_{out_.diagnostics};  // a transcript of a million dropped records lists a hundred
  SessionSpool* spool_;
  // One line's JSON, written again for each line: its buffer and level stack keep their room.
  rapidjson::StringBuffer buffer_;
  JsonWriter writer_;
  JsonWriter& start_line();
  void end_line(const TranscriptOrigin& origin);
};

// Writers for the parts of pi messages both readers build.
// Opens `"message":{"role":ROLE,"content":[`; the caller writes the blocks,
// ends the array, adds the message's other members and ends the object.
void begin_message(JsonWriter& w, const char* role);
// The same for a tool result: role, toolCallId and toolName before the content.
void begin_tool_result(JsonWriter& w, std::string_view call_id, std::string_view tool_name);
void write_string(JsonWriter& w, std::string_view s);
void write_key_string(JsonWriter& w, const char* key, std::string_view s);
void write_text_block(JsonWriter& w, std::string_view text);
void write_image_block(JsonWriter& w, std::string_view base64, std::string_view mime_type);
// `value` when it is an object, else {} (pi's tool call arguments are always an object).
void write_object_or_empty(JsonWriter& w, const JsonValue* value);
// pi's usage object (cost is not known: zero, as pi writes for a provider without prices).
void write_usage(JsonWriter& w, std::uint64_t input, std::uint64_t output, std::uint64_t cache_read,
                 std::uint64_t cache_write);
// A base64 data: URL's media type and payload; false for any other URL.
bool split_data_url(std::string_view url, std::string& mime, std::string& data);
// Epoch milliseconds of an ISO-8601 time, or `fallback` when it is not one.
std::int64_t millis_of(const std::string& iso, std::int64_t fallback);
// The pi entry ids (8 hex digits) of a source's keys: the same key, the
// same id, and each id taken by one key. A key's id is the hash of the key,
// or, when another key has it, of the key with the next seed. Each id is
// kept as a number, found in an IndexByKey, beside where its key is in one
// string of all keys (a std::map of both was 3-5% of a reader's time).
class EntryIds {
 public:
  EntryIds() = default;
  EntryIds(const EntryIds&) = delete;  // by_id_ reads ids_ through a pointer
  EntryIds& operator=(const EntryIds&) = delete;
  std::string id_for(std::string_view key);

 private:
  struct IdOf {
    const std::vector<std::uint32_t>* ids;
    std::uint32_t operator()(std::uint32_t key) const { return (*ids)[key]; }
  };
  struct IdIsItsHash {  // the ids are hashes already
    std::size_t operator()(std::uint32_t id) const { return id; }
  };
  std::string_view key(std::uint32_t k) const;
  std::vector<std::uint32_t> ids_;     // each key's id (its 8 hex digits as a number), by the key's place
  std::vector<std::size_t> key_ends_;  // where each key ends in keys_
  std::string keys_;
  IndexByKey<IdOf, IdIsItsHash> by_id_{0, IdOf{&ids_}};  // id -> the key's place
};

}  // namespace pihydrate
