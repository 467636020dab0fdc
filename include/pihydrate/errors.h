// Environment failures (a file that cannot be opened or written) are the only
// exceptions pi-hydrate throws; input problems are Diagnostics.
#pragma once

#include <stdexcept>
#include <string>

namespace pihydrate {

class IoError : public std::runtime_error {
 public:
  explicit IoError(const std::string& what) : std::runtime_error(what) {}
};

// The input ended early on a second read: it changed while it was read
// (reported as PH904, not as a failing disk).
class InputShrankError : public IoError {
 public:
  using IoError::IoError;
};

}  // namespace pihydrate
