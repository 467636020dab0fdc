// What the first pass of the Gemini CLI reader reads of each record
// (docs/gemini-cli.md G1, G2, G5, G11), and the fast way to read it: a skim
// that steps over the rest of the line. The reader's fields_of reads the
// same from a parsed Document, the plain path the skim must agree with
// (gemini_cli_reader_test.cc converts logs both ways).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pihydrate {
namespace gemini_cli {

// The fields the kinds are told by, and a message's short fields; a list of
// messages is read from the record's Document.
struct Metadata {
  std::optional<std::string> first_directory;  // directories[0], when it is a string
  std::string kind;
};
struct MessageFields {
  std::string id, timestamp, model;
  bool tokens = false;  // "tokens" is an object
  std::uint64_t input = 0, output = 0, cached = 0, thoughts = 0;
};
struct RecordFields {
  std::optional<std::string> rewind, session_id, project_hash;  // when strings
  bool message = false;                                         // "id" is a string (message.id)
  MessageFields fields;
  bool set = false;  // "$set" is an object
  Metadata set_metadata, metadata;
  std::string start_time;
  // Emptied for the next record, its strings keeping their room.
  void clear() {
    rewind.reset(), session_id.reset(), project_hash.reset();
    message = set = false;
    fields.id.clear(), fields.timestamp.clear(), fields.model.clear();
    fields.tokens = false;
    fields.input = fields.output = fields.cached = fields.thoughts = 0;
    set_metadata.first_directory.reset(), metadata.first_directory.reset();
    set_metadata.kind.clear(), metadata.kind.clear();
    start_time.clear();
  }
};

// True when `text` is certainly a JSON object; then `fields` holds what the
// first pass reads of it. False when the skim is not sure (a list of
// messages, a key with escapes, a count RapidJSON might read as a double,
// bad syntax): the record is then parsed into a Document.
// The skim keeps its stack of open containers from one record to the next.
class RecordSkimmer {
 public:
  bool skim(std::string_view text, RecordFields& fields);

 private:
  std::vector<int> places_;
};

}  // namespace gemini_cli
}  // namespace pihydrate
