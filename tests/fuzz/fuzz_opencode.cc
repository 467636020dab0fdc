// The OpenCode reader on arbitrary bytes: an export's JSON, or a SQLite
// database (bytes that start with SQLite's magic are read as one, through
// the private copy): never a crash, and a session it accepts parses line by
// line, one origin per line, and hydrates. Kilo CLI's reader, the same code
// under Kilo's names (docs/opencode.md KL1-KL3), is fuzzed through the same door.
#include <string>

#include "fuzz_common.h"
#include "readers/readers.h"

namespace {

class BytesInput final : public pihydrate::ReaderInput {
 public:
  explicit BytesInput(std::string bytes) : bytes_(std::move(bytes)) {}
  const std::string& name() const override { return name_; }
  int fd() const override { return -1; }
  std::string read_all() const override { return bytes_; }
  std::unique_ptr<MappedReadGuard> guard_mapped_read() const override { return nullptr; }

 private:
  std::string name_ = "fuzz";
  std::string bytes_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace pihydrate;
  if (size == 0) return 0;
  std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  // The first byte: a leaf to name (bit 0), SQLite's magic put in front (bit 1), Kilo CLI's reader (bit 2).
  if ((data[0] & 2) != 0) bytes.insert(0, std::string("SQLite format 3\0", 16));
  ReadOptions options;
  if ((data[0] & 1) != 0) options.leaf = "ses_a";
  (void)ReaderRegistry::standard().choose(make_input_head(bytes, true));
  const BytesInput input(std::move(bytes));
  const Reader& reader = (data[0] & 4) != 0 ? kilo_cli_reader() : opencode_reader();
  ReadSession converted = reader.read(input, options);
  if (!converted.ok()) return 0;
  std::size_t lines = 0;
  for (const Entry& e : converted.index.entries) lines += e.length > 0 ? 1 : 0;
  if (!converted.index.bad_lines.empty()) __builtin_trap();  // the reader writes one JSON object per line
  if (lines != converted.origins.size()) __builtin_trap();
  fuzz::CollectingSink sink;
  HydrateReport report;
  HydrateOptions hydrate;
  hydrate.cwd = "/sandbox";
  (void)hydrate_session(converted.index, *converted.lines, hydrate, sink, report);
  return 0;
}
