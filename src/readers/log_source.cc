// Streaming JSON-lines input (log_source.h).
#include "readers/log_source.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "core/json_spans.h"
#include "pihydrate/errors.h"
#include "pihydrate/line_reader.h"

namespace pihydrate {

std::size_t BytesSource::read_at(std::uint64_t offset, char* out, std::size_t n) const {
  if (offset >= bytes_.size()) return 0;
  n = std::min<std::size_t>(n, bytes_.size() - offset);
  std::memcpy(out, bytes_.data() + offset, n);
  return n;
}

std::size_t FileSource::read_at(std::uint64_t offset, char* out, std::size_t n) const {
  for (;;) {
    const ssize_t got = ::pread(fd_, out, n, static_cast<off_t>(offset));
    if (got >= 0) return static_cast<std::size_t>(got);
    if (errno != EINTR) throw IoError("cannot read " + name_ + ": " + std::strerror(errno));
  }
}

std::string read_record(const LogSource& source, std::uint64_t offset, std::size_t size) {
  std::string bytes(size, '\0');
  std::size_t done = 0;
  while (done < size) {
    const std::size_t got = source.read_at(offset + done, &bytes[done], size - done);
    if (got == 0) break;
    done += got;
  }
  bytes.resize(done);
  neutralize_lone_surrogates(bytes.data(), bytes.size());
  return bytes;
}

std::string& RecordWindow::read(const LogSource& source, std::uint64_t offset, std::size_t size) {
  constexpr std::size_t kWindowBytes = std::size_t{1} << 20;
  if (offset < window_begin_ || offset + size > window_begin_ + window_.size()) {
    window_.resize(std::max(size, kWindowBytes));
    std::size_t done = 0;
    for (std::size_t got; done < window_.size(); done += got)
      if ((got = source.read_at(offset + done, &window_[done], window_.size() - done)) == 0) break;
    window_.resize(done);
    window_begin_ = offset;
  }
  const std::size_t from = static_cast<std::size_t>(offset - window_begin_);
  record_.reserve(size + 1 + kLinePadding);  // an in-place parse's SSE2 scan reads past the end: see kLinePadding
  record_.assign(window_, from, std::min(size, window_.size() - from));  // fewer when the input shrank
  neutralize_lone_surrogates(record_.data(), record_.size());
  return record_;
}

void for_each_log_line(const LogSource& source, const std::function<bool(const JsonlLine&)>& visit) {
  std::string line;
  std::vector<char> block(1 << 16);
  std::uint64_t offset = 0, start = 0, number = 1;
  const auto emit = [&](bool last) {
    std::size_t begin = start == 0 && line.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;
    std::size_t end = line.size();
    if (end > begin && line[end - 1] == '\r') --end;
    if (line.find_first_not_of(" \t", begin) >= end) return true;  // blank
    neutralize_lone_surrogates(line.data() + begin, end - begin);
    JsonlLine l;
    l.number = number;
    l.start = start;
    l.begin = start + begin;
    l.text = std::string_view(line).substr(begin, end - begin);
    l.last_without_newline = last;
    return visit(l);
  };
  for (std::size_t got; (got = source.read_at(offset, block.data(), block.size())) != 0; offset += got) {
    for (std::size_t at = 0; at < got;) {
      const char* nl = static_cast<const char*>(std::memchr(block.data() + at, '\n', got - at));
      const std::size_t to = nl == nullptr ? got : static_cast<std::size_t>(nl - block.data());
      line.append(block.data() + at, to - at);
      if (nl == nullptr) break;
      if (!emit(false)) return;
      line.clear();
      start = offset + to + 1;
      ++number;
      at = to + 1;
    }
  }
  if (!line.empty()) emit(true);
}

}  // namespace pihydrate
