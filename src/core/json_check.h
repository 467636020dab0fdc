// A quick syntax check for big JSON texts (a thread export is one document
// of hundreds of megabytes). RapidJSON's Reader copies every string it
// checks, byte by byte; this check skips string contents sixteen bytes at a
// time and allocates nothing per value.
#pragma once

#include <cstddef>
#include <functional>
#include <string_view>
#include <vector>

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
bool is_certainly_valid_json(std::string_view text, std::size_t max_depth, LongValues& long_values, std::size_t base,
                             const std::function<void(std::size_t)>& progress = {});

// For the check above, a place where a second thread may start: `at`
// (offset in `text`) is a guess at an element, after a comma, of an array
// nested in the top-level object (a thread export's entries: the first
// '{' of a line that follows a line ending in ','). The second thread
// checks from there while the first reads up to it; if the first gets
// there in that state it takes the second's result, otherwise it reads on
// by itself. Either way the result and long_values are those of one thread.
struct SecondThread {
  std::size_t at = 0;
  // Hears how far the second thread has come, as `progress` does (optional;
  // called on the second thread).
  std::function<void(std::size_t begin, std::size_t offset)> progress;
};
// `line_starts` (optional) gets the offset past every newline between
// tokens, in order; when the check returns true those are all of the text's
// newlines (it accepts no raw newline inside a string). `elements`
// (optional) gets, in order, the span of every element of every array that
// is a member of the top-level object (a thread export's entries), so that
// they need not be found again.
bool is_certainly_valid_json(std::string_view text, std::size_t max_depth, LongValues& long_values, std::size_t base,
                             const std::function<void(std::size_t)>& progress, const SecondThread& second,
                             std::vector<std::size_t>* line_starts = nullptr,
                             std::vector<ElementSpan>* elements = nullptr);

// What scan_string_contents saw besides the string's end.
struct StringScan {
  bool escaped = false;                      // a backslash escape
  const char* first_invalid_utf8 = nullptr;  // with kCheckUtf8: the first invalid sequence
};

// Scans a string literal's contents from p (past its opening quote) and
// returns its closing quote, or nullptr when the literal is cut short by
// `end`, holds a control byte or an escape that is invalid or a surrogate
// (left to RapidJSON). With kCheckUtf8 it also checks UTF-8 the way
// find_invalid_utf8 does (first_invalid_utf8 is set once, then kept).
// After nullptr, what `scan` holds is unspecified: a block may be rejected
// before its escapes or UTF-8 were recorded.
template <bool kCheckUtf8>
const char* scan_string_contents(const char* p, const char* end, StringScan& scan);

// How scan_string_contents walks a long string's 64-byte blocks: with
// SSE2, or with AVX2 where the processor has it (chosen before main).
enum class StringScanWalk { kSse2, kAvx2 };
bool string_scan_walk_available(StringScanWalk walk);
// For tests, which compare the walks: not while another thread scans.
void select_string_scan_walk(StringScanWalk walk);

}  // namespace pihydrate
