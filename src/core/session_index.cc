// Indexing a session: every line scanned into compact entries with byte offsets (pass 1).
#include "pihydrate/session_index.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <thread>

#include "core/entry_scanner.h"
#include "core/json_spans.h"
#include "core/utf8.h"
#include "pihydrate/errors.h"
#include "pihydrate/output_file.h"

namespace pihydrate {

// Entry::length holds any line the reader keeps; and the per-entry memory
// bounds in docs/performance.md count on an Entry of this size (64-bit).
static_assert(kMaxLineBytesLimit <= UINT32_MAX);
static_assert(sizeof(void*) != 8 || sizeof(Entry) == 144, "Entry grew: see docs/performance.md, Memory bounds");

const char* json_kind_name(JsonKind kind) {
  switch (kind) {
    case JsonKind::kMissing: return "missing";
    case JsonKind::kNull: return "null";
    case JsonKind::kFalse: return "false";
    case JsonKind::kTrue: return "true";
    case JsonKind::kNumber: return "a number";
    case JsonKind::kString: return "a string";
    case JsonKind::kArray: return "an array";
    case JsonKind::kObject: return "an object";
  }
  return "?";
}

const EntryDetails Entry::kNoDetails{};

std::string_view entry_type_name(EntryType type) {
  switch (type) {
    case EntryType::kSession: return "session";
    case EntryType::kMessage: return "message";
    case EntryType::kCompaction: return "compaction";
    case EntryType::kBranchSummary: return "branch_summary";
    case EntryType::kCustomMessage: return "custom_message";
    case EntryType::kCustom: return "custom";
    case EntryType::kLabel: return "label";
    case EntryType::kSessionInfo: return "session_info";
    case EntryType::kModelChange: return "model_change";
    case EntryType::kThinkingLevelChange: return "thinking_level_change";
    case EntryType::kContextEdit: return "context_edit";
    case EntryType::kUsage: return "usage";
    case EntryType::kNone:
    case EntryType::kUnknown: break;
  }
  return {};
}

std::string_view Entry::type_text() const {
  return type == EntryType::kUnknown ? details().unknown_type : entry_type_name(type);
}

std::string_view StringArena::add(std::string_view text) {
  if (text.empty()) return {};
  constexpr std::size_t kBlock = 1 << 16;
  if (text.size() > kBlock / 4) {  // big strings live apart, so blocks never grow
    large_.emplace_back(text);
    return large_.back();
  }
  if (blocks_.empty() || used_in_last_ + text.size() > kBlock) {
    blocks_.emplace_back();
    blocks_.back().reserve(kBlock);
    used_in_last_ = 0;
  }
  std::string& block = blocks_.back();
  block.append(text.data(), text.size());  // within the reserved capacity: no reallocation
  std::string_view view(block.data() + used_in_last_, text.size());
  used_in_last_ += text.size();
  return view;
}

namespace {

// The lines of `source` into `index`. `file_start`: the source begins at the
// file's first byte (where a BOM may be). Returns false when the entry cap
// stopped the scan.
// `known`: instead of options.known_strings. `base`: where the source
// starts in the file, for known and long strings (entries' offsets are
// the source's).
bool scan_lines(ByteSource& source, const IndexOptions& options, bool file_start, SessionIndex& index,
                const KnownStrings* known = nullptr, std::uint64_t base = 0) {
  EntryScanner scanner(*index.arena, index.tool_calls, index.details, options.max_depth);
  scanner.set_known_strings(known ? known : options.known_strings);
  scanner.set_record_long_strings(options.record_long_strings);
  scanner.set_keep_timestamps(options.keep_timestamps);
  index.timestamps_kept = options.keep_timestamps;
  LineReader reader(source, options.reader);
  Line line;
  while (reader.next(line)) {
    index.line_count = line.number;
    index.ends_with_newline = line.has_newline;
    if (line.too_long) {
      BadLine bad;
      bad.line = line.number;
      bad.column = 1;
      bad.problem = LineProblem::kTooLong;
      bad.is_last_without_newline = !line.has_newline;
      bad.reason = std::to_string(line.length) + " bytes";
      if (index.bad_line_count++ < SessionIndex::kMaxKeptProblems) index.bad_lines.push_back(std::move(bad));
      continue;
    }
    std::string_view bytes = line.bytes;
    std::size_t start = 0;
    if (file_start && line.number == 1 && bytes.size() >= 3 && bytes.substr(0, 3) == "\xEF\xBB\xBF") {
      index.starts_with_bom = true;
      start = 3;
    }
    if (!bytes.empty() && bytes.back() == '\r') {
      if (index.crlf_lines++ == 0) index.first_crlf_line = line.number;
    }
    Entry entry;
    BadLine bad;
    const ScanStatus status = scanner.scan(line.data, line.bytes.size(), start, entry, bad, base + line.offset);
    const std::size_t bad_utf8 = scanner.utf8_verdict();
    if (bad_utf8 != kUtf8Valid && index.invalid_utf8_count++ < SessionIndex::kMaxKeptProblems) {
      index.invalid_utf8_lines.push_back(line.number);
      index.invalid_utf8_columns.push_back(bad_utf8 + 1);
    }

    switch (status) {
      case ScanStatus::kBlank: ++index.blank_lines; break;
      case ScanStatus::kBad:
        bad.line = line.number;
        bad.is_last_without_newline = !line.has_newline;
        if (index.bad_line_count++ < SessionIndex::kMaxKeptProblems) index.bad_lines.push_back(std::move(bad));
        break;
      case ScanStatus::kParsed:
        if (index.entries.size() >= options.max_entries) {
          index.entry_cap_hit = true;
          index.file_size = reader.bytes_read();
          return false;
        }
        entry.line = line.number;
        entry.offset = line.offset;
        entry.length = static_cast<std::uint32_t>(line.length);  // a kept line is at most kMaxLineBytesLimit
        index.entries.push_back(entry);
        for (const auto& [at, length] : scanner.line_long_strings())
          if (index.long_strings.size() < LongStrings::cap_for(index.entries.size()))
            index.long_strings.add(base + line.offset + at, length);
        break;
    }
  }
  index.file_size = reader.bytes_read();
  return true;
}

// Bytes [offset, end) of a file, by pread: two threads can read one file.
class RangeSource final : public ByteSource {
 public:
  RangeSource(int fd, std::uint64_t offset, std::uint64_t end, const std::string& name)
      : fd_(fd), offset_(offset), end_(end), name_(name) {}
  std::size_t read(char* buffer, std::size_t size) override {
    if (offset_ >= end_) return 0;
    size = static_cast<std::size_t>(std::min<std::uint64_t>(size, end_ - offset_));
    for (;;) {
      ssize_t n = ::pread(fd_, buffer, size, static_cast<off_t>(offset_));
      if (n >= 0) {
        offset_ += static_cast<std::uint64_t>(n);
        return static_cast<std::size_t>(n);
      }
      if (errno != EINTR) throw IoError("cannot read " + name_ + ": " + std::strerror(errno));
    }
  }

 private:
  int fd_;
  std::uint64_t offset_, end_;
  const std::string& name_;
};

// The offset just past the first '\n' at or after `from`, or 0 when none.
std::uint64_t next_line_start(int fd, std::uint64_t from, std::uint64_t size, const std::string& name) {
  std::vector<char> chunk(std::size_t{1} << 16);
  RangeSource source(fd, from, size, name);
  for (std::uint64_t at = from;;) {
    std::size_t n = source.read(chunk.data(), chunk.size());
    if (n == 0) return 0;
    if (const void* nl = std::memchr(chunk.data(), '\n', n))
      return at + static_cast<std::uint64_t>(static_cast<const char*>(nl) - chunk.data()) + 1;
    at += n;
  }
}

// Appends the second half's index (scanned from byte `split`, its lines
// numbered from 1) to the first's.
void append_half(SessionIndex& index, SessionIndex&& tail, std::uint64_t split) {
  const std::uint64_t lines_before = index.line_count;
  const auto calls_before = static_cast<std::uint32_t>(index.tool_calls.size());
  index.entries.append_consuming(std::move(tail.entries), [&](Entry& e) {
    e.line += lines_before;
    e.offset += split;
    e.tool_calls_begin += calls_before;
  });
  index.tool_calls.insert(index.tool_calls.end(), tail.tool_calls.begin(), tail.tool_calls.end());
  tail.tool_calls = {};
  index.merged_details.push_back(std::move(tail.details));  // the entries' pointers stay valid
  index.merged_arenas.push_back(std::move(tail.arena));
  for (BadLine& bad : tail.bad_lines) {
    if (index.bad_lines.size() >= SessionIndex::kMaxKeptProblems) break;
    bad.line += lines_before;
    index.bad_lines.push_back(std::move(bad));
  }
  index.bad_line_count += tail.bad_line_count;
  for (std::size_t i = 0; i < tail.invalid_utf8_lines.size(); ++i) {
    if (index.invalid_utf8_lines.size() >= SessionIndex::kMaxKeptProblems) break;
    index.invalid_utf8_lines.push_back(tail.invalid_utf8_lines[i] + lines_before);
    index.invalid_utf8_columns.push_back(tail.invalid_utf8_columns[i]);
  }
  index.invalid_utf8_count += tail.invalid_utf8_count;
  if (tail.crlf_lines > 0 && index.crlf_lines == 0) index.first_crlf_line = tail.first_crlf_line + lines_before;
  index.crlf_lines += tail.crlf_lines;
  index.blank_lines += tail.blank_lines;
  if (tail.line_count > 0) {
    index.line_count = lines_before + tail.line_count;
    index.ends_with_newline = tail.ends_with_newline;
  }
  index.file_size = split + tail.file_size;
  index.long_strings.append(std::move(tail.long_strings));
}

}  // namespace

void LongStrings::append(LongStrings&& later) {
  begins_.append_consuming(std::move(later.begins_), [](std::uint64_t&) {});
  lengths_.append_consuming(std::move(later.lengths_), [](std::uint32_t&) {});
}

std::size_t LongStrings::first_at_or_after(std::uint64_t offset) const {
  std::size_t lo = 0, hi = size();
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if (begins_[mid] < offset)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

std::uint64_t LongStrings::end_of(std::uint64_t offset) const {
  const std::size_t k = first_at_or_after(offset);
  return k < size() && begins_[k] == offset ? offset + lengths_[k] : 0;
}

SessionIndex build_session_index(ByteSource& source, std::string display_name, const IndexOptions& options) {
  SessionIndex index;
  index.file = std::move(display_name);
  scan_lines(source, options, true, index);
  return index;
}

SessionIndex build_file_index(int fd, std::string display_name, const IndexOptions& options) {
  // Halves of a few MiB are not worth a thread.
  constexpr std::uint64_t kMinSplitBytes = std::uint64_t{8} << 20;
  struct stat st {};
  const bool regular = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  const auto size = static_cast<std::uint64_t>(regular ? st.st_size : 0);
  std::uint64_t split = 0;
  if (options.two_threads && regular && size >= kMinSplitBytes && std::thread::hardware_concurrency() > 1)
    split = next_line_start(fd, size / 2, size, display_name);
  if (!regular) {  // a pipe or a device: one pass, as it comes
    auto source = make_fd_source(fd, display_name);
    return build_session_index(*source, std::move(display_name), options);
  }
  auto in_one_pass = [&] {
    RangeSource whole(fd, 0, size, display_name);
    return build_session_index(whole, display_name, options);
  };
  if (split == 0 || split >= size) return in_one_pass();
  SessionIndex head, tail;
  head.file = tail.file = display_name;
  std::exception_ptr tail_error;
  bool tail_complete = true;
  std::thread second([&] {
    try {
      RangeSource source(fd, split, size, display_name);
      tail_complete = scan_lines(source, options, false, tail, nullptr, split);
    } catch (...) {
      tail_error = std::current_exception();
    }
  });
  bool head_complete = false;
  try {
    RangeSource source(fd, 0, split, display_name);
    head_complete = scan_lines(source, options, true, head);
  } catch (...) {
    second.join();
    throw;
  }
  second.join();
  if (tail_error) std::rethrow_exception(tail_error);
  // The entry cap is counted over the whole file: past it, the sequential
  // scan decides exactly where reading stopped.
  if (!head_complete || !tail_complete || head.entries.size() + tail.entries.size() > options.max_entries)
    return in_one_pass();
  append_half(head, std::move(tail), split);
  return head;
}

}  // namespace pihydrate
