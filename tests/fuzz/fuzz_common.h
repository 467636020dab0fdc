// Shared by the libFuzzer targets: a sink that only counts, and the option
// byte that lets the fuzzer reach every policy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "pihydrate/hydrate.h"

namespace pihydrate::fuzz {

class CountingSink final : public LineSink {
 public:
  void write_line(std::string_view line) override { bytes += line.size() + 1; }
  std::size_t bytes = 0;
};

// The first input byte picks options; the rest is the file.
inline HydrateOptions options_from(std::uint8_t bits) {
  HydrateOptions o;
  o.cwd = "/tmp";
  o.tools = (bits & 1) ? ToolPolicy::kFlatten : ToolPolicy::kPair;
  o.thinking = (bits & 2) ? ThinkingPolicy::kDrop : ThinkingPolicy::kKeep;
  o.prune_compacted = (bits & 4) != 0;
  o.pi_version = (bits & 8) ? PiVersion::k0_78 : PiVersion::k1_5;
  o.flatten_max_chars = (bits & 16) ? 8 : 4000;
  o.index.max_depth = 64;  // keeps the recursive parser's stack small under ASan
  return o;
}

}  // namespace pihydrate::fuzz
