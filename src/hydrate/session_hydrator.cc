// hydrate_session: read as pi reads, choose the branch, plan, write.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <unordered_set>

#include "core/json_spans.h"
#include "core/writer_thread.h"
#include "hydrate/plan.h"
#include "pi/nodes_by_id.h"
#include "pihydrate/errors.h"
#include "pihydrate/formats.h"
#include "pihydrate/output_file.h"
#include "pihydrate/validator.h"

namespace pihydrate {
namespace {

class FdLineSource final : public LineSource {
 public:
  FdLineSource(int fd, std::string name) : fd_(fd), name_(std::move(name)) {}
  std::string_view read(std::uint64_t offset, std::uint64_t length, std::string& scratch) override {
    // Never shrunk, so its bytes are zeroed only when it grows; the line is
    // spliced from it without another copy.
    if (scratch.size() < length) scratch.resize(static_cast<std::size_t>(length));
    pread_all(fd_, scratch.data(), length, offset, name_);
    return std::string_view(scratch.data(), static_cast<std::size_t>(length));
  }

 private:
  int fd_;
  std::string name_;
};

class MemoryLineSource final : public LineSource {
 public:
  explicit MemoryLineSource(std::string bytes) : bytes_(std::move(bytes)) {}
  std::string_view read(std::uint64_t offset, std::uint64_t length, std::string&) override {
    return std::string_view(bytes_).substr(offset, length);
  }

 private:
  std::string bytes_;
};

void add(HydrateReport& report, const SessionIndex& index, Code code, Severity severity, std::uint64_t line,
         std::string message) {
  Diagnostic d;
  d.code = code;
  d.severity = severity;
  d.level = code_info(code).level;
  d.file = index.file;
  d.line = line;
  d.column = line ? 1 : 0;
  d.message = std::move(message);
  report.diagnostics.push_back(std::move(d));
}

// Warnings for what pi would drop or change while reading the input: the
// validator's own findings, restricted to those about lines and content.
// They all come from the file and tree rules, which are all that run.
void report_input_findings(const SessionIndex& index, const PiView& view, const HydrateOptions& options,
                           HydrateReport& report) {
  ValidateOptions vo;
  vo.pi_version = options.pi_version;
  vo.check_cwd = false;
  vo.index = options.index;
  vo.content_rules = false;
  FileReport input = validate_index(index, view, vo);
  static const std::unordered_set<int> kept_codes = {
      static_cast<int>(Code::kMalformedLine),     static_cast<int>(Code::kGluedRecords),
      static_cast<int>(Code::kTruncatedLastLine), static_cast<int>(Code::kInvalidUtf8),
      static_cast<int>(Code::kNulByte),           static_cast<int>(Code::kNonObjectLine),
      static_cast<int>(Code::kNullLine),          static_cast<int>(Code::kNonObjectInV1),
      static_cast<int>(Code::kExtraHeader),       static_cast<int>(Code::kDuplicateId),
      static_cast<int>(Code::kDanglingParent),    static_cast<int>(Code::kUnversionedTree),
      static_cast<int>(Code::kLineTooLong),       static_cast<int>(Code::kNestingTooDeep),
      static_cast<int>(Code::kTooManyEntries)};
  for (Diagnostic& d : input.diagnostics) {
    if (!kept_codes.count(static_cast<int>(d.code))) continue;
    bool limit = d.code == Code::kLineTooLong || d.code == Code::kNestingTooDeep || d.code == Code::kTooManyEntries;
    if (!limit) d.severity = Severity::kWarning;  // hydration repairs these by leaving the line out
    report.diagnostics.push_back(std::move(d));
  }
  report.lines_pi_drops += index.bad_line_count;
  for (const Entry& e : index.entries)
    if (e.root != JsonKind::kObject) ++report.lines_pi_drops;
}

}  // namespace

bool HydrateReport::ok() const {
  for (const Diagnostic& d : diagnostics)
    if (d.severity == Severity::kError) return false;
  return true;
}

void LineSink::write_lines(std::string_view lines) {
  while (!lines.empty()) {
    const std::size_t end = lines.find('\n');
    write_line(lines.substr(0, end));
    lines.remove_prefix(end == std::string_view::npos ? lines.size() : end + 1);
  }
}

std::unique_ptr<LineSource> make_fd_line_source(int fd, std::string name) {
  return std::make_unique<FdLineSource>(fd, std::move(name));
}
std::unique_ptr<LineSource> make_memory_line_source(std::string bytes) {
  return std::make_unique<MemoryLineSource>(std::move(bytes));
}

namespace {

// Pass 2: each planned entry's source line read back and spliced
// (append_rendered_entry), in batches of about a MiB of source whose lines
// are read with one call when they lie together. `written`: the output's
// bytes so far (the header's).
void write_planned_entries(const SessionIndex& index, const PiView& branch, const Plan& plan,
                           const HydrateOptions& options, LineSource& source, std::uint64_t written, LineSink& sink,
                           HydrateReport& report) {
  auto source_entry = [&](const PlannedEntry& p) -> const Entry* {
    const std::int64_t node = p.node >= 0 ? p.node : (p.synthetic == Synthetic::kModelChange ? p.call_node : -1);
    return node >= 0 ? &branch.entry(index, static_cast<std::uint32_t>(node)) : nullptr;
  };
  std::string lines, scratch;
  // The blocks are written on a thread of their own while the next is
  // rendered (on tmpfs the write is a fifth of a session's hydration).
  WriterThread writer(sink);
  // Where the lines copy runs of their source lines unchanged (`from` made
  // the input offset): once written, the input's long strings inside them
  // are noted where they went (HydrateReport::carried).
  std::vector<ByteEdits::CopiedRun> copied;
  auto write_batch = [&](std::size_t begin, std::size_t end) {
    lines.clear();
    copied.clear();
    // A batch's source lines nearly always lie together in the file (a
    // linear session, or a branch with little abandoned in between): they
    // are read at once, not with a system call each.
    std::uint64_t low = UINT64_MAX, high = 0, bytes = 0;
    for (std::size_t i = begin; i < end; ++i) {
      if (const Entry* e = source_entry(plan.entries[i])) {
        low = std::min(low, e->offset);
        high = std::max(high, e->offset + e->length);
        bytes += e->length;
      }
    }
    const bool together = high > low && high - low <= bytes + bytes / 4 + 4096;
    const std::string_view span = together ? source.read(low, high - low, scratch) : std::string_view();
    for (std::size_t i = begin; i < end; ++i) {
      const Entry* e = source_entry(plan.entries[i]);
      const std::string_view line =
          !e         ? std::string_view()
          : together ? span.substr(static_cast<std::size_t>(e->offset - low), static_cast<std::size_t>(e->length))
                     : source.read(e->offset, e->length, scratch);
      const std::size_t runs_before = copied.size();
      append_rendered_entry(lines, index, branch, plan, i, line, options, e ? &copied : nullptr);
      for (std::size_t k = runs_before; k < copied.size(); ++k) copied[k].from += e->offset;
      lines += '\n';
    }
    const std::uint64_t size = lines.size();
    writer.write(lines);
    for (const ByteEdits::CopiedRun& run : copied)
      if (run.length >= LongStrings::kMinLength)
        note_carried_strings(index.long_strings, run.from, written + run.out_at, run.length, report.carried);
    written += size;
  };
  // The output is about its source lines' size (edits change a few bytes a
  // line; synthetic lines are short): a little more is announced.
  std::uint64_t source_bytes = 0;
  for (const PlannedEntry& p : plan.entries)
    if (const Entry* e = source_entry(p)) source_bytes += e->length + 1;
  sink.expect_bytes(source_bytes + source_bytes / 16);
  constexpr std::uint64_t kBatchBytes = std::uint64_t{1} << 20;
  std::size_t batch_begin = 0;
  std::uint64_t batch_bytes = 0;
  for (std::size_t i = 0; i < plan.entries.size(); ++i) {
    const Entry* e = source_entry(plan.entries[i]);
    batch_bytes += e ? e->length : 0;
    if (batch_bytes >= kBatchBytes) {
      write_batch(batch_begin, i + 1);
      batch_begin = i + 1;
      batch_bytes = 0;
    }
  }
  if (batch_begin < plan.entries.size()) write_batch(batch_begin, plan.entries.size());
  writer.finish();
}

}  // namespace

bool hydrate_session(const SessionIndex& index, LineSource& source, const HydrateOptions& options, LineSink& sink,
                     HydrateReport& report) {
  report.entries_read = index.entries.size();
  PiView view = build_pi_view(index, options.pi_version);  // the validator's and hydration's
  report_input_findings(index, view, options, report);
  if (!report.ok()) return false;  // a line pi-hydrate could not check

  if (view.header < 0 && index.starts_with_bom && !view.profile().trims_file_before_parsing) {
    // This pi refuses a file whose header carries a BOM (a pi that trims the
    // file first does not). The conversation is intact, so read it without
    // the BOM and write it without.
    view = build_pi_view(index, options.pi_version, /*ignore_bom=*/true);
    add(report, index, Code::kByteOrderMark, Severity::kWarning, 1,
        std::string("the input starts with a UTF-8 byte order mark (pi ") + view.profile().name +
            " refuses it); read it without the mark");
  }
  if (view.header < 0) {
    add(report, index, view.outcome == LoadOutcome::kFreshSession ? Code::kEmptyFile : Code::kNoHeader,
        Severity::kError, view.failure_line,
        view.outcome == LoadOutcome::kFreshSession
            ? "the input is empty: there is no conversation to hydrate"
            : "the input has no valid session header, so it is not a pi session");
    return false;
  }
  const Entry& header = index.entries[static_cast<std::size_t>(view.header)];

  std::vector<std::uint32_t> path;
  if (!select_path(index, view, options, path, report)) return false;
  // Leave out what pi would crash on or what carries nothing: lines that are
  // not objects, message entries without a message.
  std::vector<std::uint32_t> clean;
  clean.reserve(path.size());
  for (std::uint32_t node : path) {
    const Entry& e = view.entry(index, node);
    if (e.root != JsonKind::kObject) continue;  // already reported as PH008/PH109
    if (e.type == EntryType::kMessage && (e.message.kind == JsonKind::kMissing || e.message.kind == JsonKind::kNull)) {
      add(report, index, Code::kMessageMissing, Severity::kWarning, e.line,
          "left out a message entry without a message (pi crashes on it)");
      report.repairs["dropped-message-without-message"]++;
      continue;
    }
    clean.push_back(node);
  }
  if (view.nodes.size() > path.size()) report.repairs["dropped-off-branch"] += view.nodes.size() - path.size();

  // pi reads labels and the session name from the whole file, not from the
  // branch: labels of written entries and the last session_info come along,
  // appended to the chain (they add nothing to the context).
  {
    std::vector<std::uint8_t> written(view.nodes.size(), 0);
    for (std::uint32_t node : clean) written[node] = 1;
    auto key_of = [&](std::uint32_t node) { return js_map_key(view.entry(index, node).id); };
    NodesById<decltype(key_of)> node_of_id(view.migrates_v1 ? 0 : view.nodes.size(), key_of);  // string ids
    if (!view.migrates_v1)
      for (std::uint32_t n = 0; n < view.nodes.size(); ++n)
        if (view.entry(index, n).id.is_string()) node_of_id.put(n);
    std::int64_t last_info = -1;
    for (std::uint32_t n = 0; n < view.nodes.size(); ++n) {
      const Entry& e = view.entry(index, n);
      if (e.root != JsonKind::kObject) continue;
      if (e.type == EntryType::kSessionInfo) last_info = n;
      if (e.type != EntryType::kLabel || written[n] || !e.details().target_id.is_string()) continue;
      const std::int64_t target = node_of_id.find(JsMapKey{JsonKind::kString, e.details().target_id.text()});
      if (target < 0 || !written[static_cast<std::size_t>(target)]) continue;
      clean.push_back(n);
      report.repairs["kept-label-from-other-branch"]++;
    }
    if (last_info >= 0 && !written[static_cast<std::size_t>(last_info)]) {
      clean.push_back(static_cast<std::uint32_t>(last_info));
      report.repairs["kept-session-name-from-other-branch"]++;
    }
  }

  PiView branch = std::move(view);  // the whole view is not needed again: no copy of its tables
  branch.path = clean;
  branch.outcome = LoadOutcome::kLoads;
  rebuild_context(index, branch);

  report.session_id = options.session_id ? *options.session_id
                      : header.id.is_string() && is_valid_session_id(header.id.text())
                          ? std::string(header.id.text())
                          : derived_session_id(header.id.text());
  if (options.timestamp) {
    report.timestamp = *options.timestamp;
  } else if (header.timestamp.is_string() && is_iso8601(header.timestamp.text())) {
    report.timestamp = std::string(header.timestamp.text());
  } else {
    report.timestamp = "1970-01-01T00:00:00.000Z";
    for (std::uint32_t node : clean) {
      const Entry& e = branch.entry(index, node);
      if (e.timestamp.is_string() && is_iso8601(e.timestamp.text())) {
        report.timestamp = std::string(e.timestamp.text());
        break;
      }
    }
  }

  Plan plan = plan_entries(index, branch, clean, options, report);
  resolve_references(index, branch, plan, report);
  assign_ids(index, branch, plan, report.session_id);

  // The new working directory; none given: the input's own.
  const std::string cwd = !options.cwd.empty() || !header.details().cwd.is_string()
                              ? options.cwd
                              : std::string(header.details().cwd.text());
  const std::string header_line = "{\"type\":\"session\",\"version\":3,\"id\":" + json_quote(report.session_id) +
                                  ",\"timestamp\":" + json_quote(report.timestamp) + ",\"cwd\":" + json_quote(cwd) +
                                  "}";
  sink.write_line(header_line);
  write_planned_entries(index, branch, plan, options, source, header_line.size() + 1, sink, report);
  report.entries_written = plan.entries.size() + 1;
  return true;
}

}  // namespace pihydrate
