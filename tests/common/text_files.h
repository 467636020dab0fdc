// Small helpers the library-level tests share: a file's bytes, and a sink
// that keeps what a hydration writes as one text.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

#include "pihydrate/hydrate.h"

namespace pihydrate {
namespace test_support {

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The lines written, each ending with '\n'.
class TextSink final : public LineSink {
 public:
  void write_line(std::string_view line) override {
    text.append(line);
    text += '\n';
  }
  std::string text;
};

}  // namespace test_support
}  // namespace pihydrate
