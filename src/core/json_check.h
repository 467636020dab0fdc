// A quick syntax check for big JSON texts (a thread export is one document
// of hundreds of megabytes). RapidJSON's Reader copies every string it
// checks, byte by byte; this check skips string contents sixteen bytes at a
// time and allocates nothing per value.
#pragma once

#include <cstddef>
#include <functional>
#include <string_view>

#include "core/json_spans.h"

namespace pihydrate {

// True when `text` is certainly one JSON value (with surrounding whitespace)
// that RapidJSON's Reader accepts, nesting at most `max_depth` deep. False
// means "not sure": invalid JSON, but also what only RapidJSON decides
// exactly (surrogate escapes, exponents, very long numbers, too deep). The
// caller then asks RapidJSON, which also gives the error and its offset.
bool is_certainly_valid_json(std::string_view text, std::size_t max_depth);
// The same check, also recording in `long_values` every string, object and
// array longer than LongValues::kMinLength, at offsets from `text`'s first
// byte plus `base`: one pass instead of a check and a LongValues::index.
// When it returns false, `long_values` is incomplete.
// `progress` (optional) hears how far the check has come (an offset like
// those recorded), every MiB or so.
bool is_certainly_valid_json(std::string_view text, std::size_t max_depth, LongValues& long_values,
                             std::size_t base, const std::function<void(std::size_t)>& progress = {});

// The first '"', '\\' or control byte (< 0x20) in [p, end), or end: inside a
// string literal, the only bytes that need a look. Sixteen bytes at a time.
const char* next_string_special(const char* p, const char* end);

}  // namespace pihydrate
