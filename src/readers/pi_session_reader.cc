// pi's own session files (v1, v2, v3) as a reader: nothing is converted;
// the file is indexed and its lines are read again from it, by pi's rules
// (src/pi). It is the registry's first reader, what an input nobody
// recognises is read as, so that pi's own loader says why it is not a
// session (PH102, with the formats tried as its hint).
#include <rapidjson/document.h>

#include "readers/head_record.h"
#include "readers/readers.h"

namespace pihydrate {
namespace {

bool is_entry_type(std::string_view type) {
  for (auto t = EntryType::kSession; t != EntryType::kUnknown; t = static_cast<EntryType>(static_cast<int>(t) + 1))
    if (entry_type_name(t) == type) return true;
  return false;
}

class PiSessionFormat final : public Reader {
 public:
  const ReaderInfo& info() const override {
    static const ReaderInfo info{"pi",
                                 "pi session",
                                 "a first line {\"type\":\"session\",...}, then entries",
                                 "entries",
                                 "~/.pi/agent/sessions/--<encoded cwd>--/<time>_<session id>.jsonl",
                                 "docs/hydrate.md",
                                 /*converts=*/false};
    return info;
  }
  // A session header, then entries. (pi's json mode prints the same header
  // before its events: a header followed by records of other types is only
  // the shape of a session.)
  int bid(const InputHead& head) const override {
    rapidjson::Document doc;
    if (head.lines.empty() || !parse_head_record(head.lines[0], doc) || json_string(doc, "type") != "session")
      return kBidNone;
    for (std::size_t i = 1; i < head.lines.size(); ++i) {
      if (!parse_head_record(head.lines[i], doc)) continue;
      const JsonValue* type = json_member(doc, "type");
      if (type != nullptr && type->IsString() && !is_entry_type(json_string(doc, "type"))) return kBidShape;
    }
    return kBidMarker;
  }
  ReadSession read(const ReaderInput& input, const ReadOptions& options) const override {
    ReadSession out;
    if (input.fd() >= 0) {
      out.index = build_file_index(input.fd(), input.name(), options.index);
      out.lines = make_fd_line_source(input.fd(), input.name());
    } else {
      take_session_text(input.read_all(), input.name(), options.index, out);
    }
    out.records_read = out.index.entries.size();
    return out;
  }
};

}  // namespace

const Reader& pi_session_reader() {
  static const PiSessionFormat reader;
  return reader;
}

}  // namespace pihydrate
