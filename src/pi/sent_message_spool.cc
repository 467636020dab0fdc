// SentMessageSpool: each message as its members in a fixed order, strings
// and vectors with their sizes before them. Only this process reads it.
#include "pi/sent_message_spool.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "pihydrate/errors.h"
#include "pihydrate/output_file.h"

namespace pihydrate {
namespace {

// A new member of SentMessage must be written and read here too.
static_assert(sizeof(void*) != 8 || sizeof(SentMessage) == 232, "SentMessage changed: spool its new member");

constexpr std::size_t kFlushBytes = std::size_t{1} << 20;

void put_u64(std::uint64_t v, std::string& out) { out.append(reinterpret_cast<const char*>(&v), sizeof v); }
void put_string(std::string_view s, std::string& out) {
  put_u64(s.size(), out);
  out.append(s);
}
void put_value(const SentValue& v, std::string& out) {
  out.push_back(static_cast<char>(v.kind));
  put_string(v.text, out);
}

struct Reader {
  std::string_view bytes;
  std::size_t& at;
  bool ok = true;

  std::uint64_t u64() {
    std::uint64_t v = 0;
    if (bytes.size() - at < sizeof v) return ok = false, 0;
    std::memcpy(&v, bytes.data() + at, sizeof v);
    at += sizeof v;
    return v;
  }
  std::uint8_t byte() {
    if (at >= bytes.size()) return ok = false, 0;
    return static_cast<std::uint8_t>(bytes[at++]);
  }
  std::string string() {
    const std::uint64_t size = u64();
    if (!ok || bytes.size() - at < size) return ok = false, std::string();
    std::string s(bytes.substr(at, static_cast<std::size_t>(size)));
    at += static_cast<std::size_t>(size);
    return s;
  }
  SentValue value() {
    SentValue v;
    v.kind = static_cast<JsonKind>(byte());
    v.text = string();
    return v;
  }
};

}  // namespace

void append_sent_message(const SentMessage& m, std::string& out) {
  const std::size_t start = out.size();
  put_u64(0, out);  // the size of what follows, set at the end
  put_string(m.role, out);
  out.push_back(static_cast<char>(m.source));
  put_u64(m.line, out);
  put_value(m.entry_id, out);
  put_u64(m.texts.size(), out);
  for (const std::string& text : m.texts) put_string(text, out);
  put_u64(m.tool_calls.size(), out);
  for (const SentToolCall& call : m.tool_calls) {
    put_value(call.id, out);
    put_value(call.name, out);
    put_string(call.arguments, out);
  }
  put_value(m.tool_call_id, out);
  out.push_back(static_cast<char>(m.is_error | m.orphan << 1 | m.edited << 2));
  put_u64(m.images, out);
  put_u64(m.thinking, out);
  put_u64(m.thinking_dropped, out);
  put_u64(m.thinking_as_text, out);
  put_u64(m.call_line, out);
  const std::uint64_t size = out.size() - start - sizeof size;
  std::memcpy(&out[start], &size, sizeof size);
}

bool read_sent_message(std::string_view bytes, std::size_t& at, SentMessage& m) {
  std::uint64_t size = 0;
  if (bytes.size() - at < sizeof size) return false;
  std::memcpy(&size, bytes.data() + at, sizeof size);
  if (bytes.size() - at - sizeof size < size) return false;
  std::size_t in = 0;
  Reader r{bytes.substr(at + sizeof size, static_cast<std::size_t>(size)), in};
  m = SentMessage();
  m.role = r.string();
  m.source = static_cast<SentSource>(r.byte());
  m.line = r.u64();
  m.entry_id = r.value();
  for (std::uint64_t n = r.u64(); r.ok && n > 0; --n) m.texts.push_back(r.string());
  for (std::uint64_t n = r.u64(); r.ok && n > 0; --n) {
    SentToolCall call;
    call.id = r.value();
    call.name = r.value();
    call.arguments = r.string();
    m.tool_calls.push_back(std::move(call));
  }
  m.tool_call_id = r.value();
  const std::uint8_t flags = r.byte();
  m.is_error = flags & 1;
  m.orphan = flags & 2;
  m.edited = flags & 4;
  m.images = static_cast<std::size_t>(r.u64());
  m.thinking = static_cast<std::size_t>(r.u64());
  m.thinking_dropped = static_cast<std::size_t>(r.u64());
  m.thinking_as_text = static_cast<std::size_t>(r.u64());
  m.call_line = r.u64();
  if (!r.ok || in != size) throw IoError("the messages of a context came back damaged");
  at += sizeof size + static_cast<std::size_t>(size);
  return true;
}

SentMessageSpool::SentMessageSpool() { file_.fd = make_unlinked_temp("the messages of a context"); }

void SentMessageSpool::add(const SentMessage& m) {
  append_sent_message(m, buffer_);
  ++count_;
  if (buffer_.size() >= kFlushBytes) flush();
}

void SentMessageSpool::flush() {
  write_all(file_.fd, buffer_.data(), buffer_.size(), "the messages of a context");
  buffer_.clear();
}

void SentMessageSpool::replay(const SentMessageSink& each) {
  flush();
  if (::lseek(file_.fd, 0, SEEK_SET) < 0)
    throw IoError(std::string("cannot rewind the messages of a context: ") + std::strerror(errno));
  std::string window;  // whole messages, and the start of the next
  std::size_t at = 0;
  std::vector<char> chunk(kFlushBytes);
  std::uint64_t handed = 0;
  for (;;) {
    const ssize_t n = ::read(file_.fd, chunk.data(), chunk.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw IoError(std::string("cannot read the messages of a context: ") + std::strerror(errno));
    window.erase(0, at);
    at = 0;
    window.append(chunk.data(), static_cast<std::size_t>(n));
    SentMessage m;
    while (read_sent_message(window, at, m)) {
      each(std::move(m));
      ++handed;
    }
    if (n == 0) break;
  }
  if (handed != count_ || at != window.size())
    throw IoError("the messages of a context came back cut: " + std::to_string(handed) + " of " +
                  std::to_string(count_));
}

}  // namespace pihydrate
