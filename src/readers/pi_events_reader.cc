// Captures of pi's stdout in --mode json or --mode rpc (docs/events.md) as
// a reader: the capture is mapped to a thread export (event_capture.h,
// E1-E12), written to a temporary file, which the thread export reader
// converts as it converts a thread export's file; what either finds is
// reported at the capture's line:column, named by the event.
#include <rapidjson/document.h>

#include "core/files.h"
#include "core/spool_indexer.h"
#include "pihydrate/output_file.h"
#include "readers/event_capture.h"
#include "readers/head_record.h"
#include "readers/readers.h"
#include "readers/thread_export_reader.h"

namespace pihydrate {
namespace {

// The event type of a head line: its own, or a wrapper's inner event's (E1).
std::string event_type(std::string_view line) {
  rapidjson::Document doc;
  if (!parse_head_record(line, doc)) return {};
  if (auto type = json_string_member(doc, "type")) return *type;
  for (const char* key : {"event", "data"})
    if (const JsonValue* inner = json_member(doc, key); inner != nullptr && inner->IsObject())
      if (auto type = json_string_member(*inner, "type")) return *type;
  return {};
}

// The thread reader's session, whose lines point at the thread's entries,
// pointed at the capture's events instead.
SourceMap to_capture(const SourceMap& thread_origins, const EventCapture& capture) {
  SourceMap origins;
  for (std::size_t i = 0; i < thread_origins.size(); ++i) {
    const SourceMap::Origin& o = thread_origins.at(i);
    Diagnostic at;
    at.line = o.line;
    at.column = o.column;
    capture.origins.map_back(at);
    const std::string_view event =
        o.line >= 1 && o.line <= capture.origins.size() ? capture.origins.name_of(capture.origins.at(o.line - 1)) : "";
    // The thread's own name for the line ("entries[3] (id \"L12\")", "thread"),
    // with its path replaced by the event's type.
    std::string name = EventCapture::renamed(std::string(thread_origins.name_of(o)), event);
    origins.add(at.line, at.column, name);
  }
  return origins;
}

class PiEventsFormat final : public Reader {
 public:
  const ReaderInfo& info() const override {
    static const ReaderInfo info{"pi-events",
                                 "capture of pi's events",
                                 "lines of pi's events: agent_start, message_end, response, ...",
                                 "events",
                                 "",
                                 "docs/events.md"};
    return info;
  }
  // json mode starts with the same session header as a session file; the
  // events after it tell the two apart. RPC mode has no header. Lines that
  // are not JSON (stderr mixed in) are stepped over.
  int bid(const InputHead& head) const override {
    bool header = false;
    for (std::string_view line : head.lines) {
      const std::string type = event_type(line);
      if (type == "session" && !header) {
        header = true;
      } else if (is_pi_event_type(type)) {
        return kBidMarker;
      } else if (!type.empty()) {
        return kBidNone;
      }
    }
    return kBidNone;
  }
  ReadSession read(const ReaderInput& input, const ReadOptions& options) const override {
    // Neither the capture nor its thread is held (E1): the capture is read a
    // line at a time, and the thread written to a file, converted from there.
    // The session's lines borrow from the thread's file: they own it (as its spool).
    auto lines = std::make_unique<SpooledLines>();
    const std::string thread_name = "the capture's thread export";
    lines->spool.fd = make_unlinked_temp(thread_name);
    const auto write = [&](std::string& text) {
      write_all(lines->spool.fd, text.data(), text.size(), thread_name);
      text.clear();
    };
    EventCapture capture = input.fd() >= 0
                               ? convert_event_capture(FileSource(input.fd(), input.name()), input.name(), write)
                               : convert_event_capture(BytesSource(input.read_all()), input.name(), write);
    ReadSession out;
    if (capture.ok()) {
      out = read_thread_export_file(lines->spool.fd, input.name(), options);
      out.origins = to_capture(out.origins, capture);
      if (out.lines) {
        lines->lines = std::move(out.lines);
        out.lines = std::move(lines);
      }
    }
    // The capture's own findings first, then the thread reader's, at the capture's positions.
    Diagnostics all = std::move(capture.diagnostics);
    for (Diagnostic& d : out.diagnostics) {
      capture.map_back(d);
      all.push_back(std::move(d));
    }
    out.diagnostics = std::move(all);
    for (const auto& [kind, count] : capture.repairs) out.repairs[kind] += count;
    out.records_read = capture.events;
    return out;
  }
};

}  // namespace

const Reader& pi_events_reader() {
  static const PiEventsFormat reader;
  return reader;
}

}  // namespace pihydrate
