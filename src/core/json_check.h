// A quick syntax check for big JSON texts (a thread export is one document
// of hundreds of megabytes). RapidJSON's Reader copies every string it
// checks, byte by byte; this check skips string contents sixteen bytes at a
// time and allocates nothing per value.
#pragma once

#include <cstddef>
#include <string_view>

namespace pihydrate {

// True when `text` is certainly one JSON value (with surrounding whitespace)
// that RapidJSON's Reader accepts, nesting at most `max_depth` deep. False
// means "not sure": invalid JSON, but also what only RapidJSON decides
// exactly (surrogate escapes, exponents, very long numbers, too deep). The
// caller then asks RapidJSON, which also gives the error and its offset.
bool is_certainly_valid_json(std::string_view text, std::size_t max_depth);

}  // namespace pihydrate
