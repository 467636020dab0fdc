// Strict UTF-8 checking, with the same idea of "invalid" as the WHATWG
// decoder node uses: overlong forms, surrogates and code points above
// U+10FFFF are invalid (node replaces them with U+FFFD).
#pragma once

#include <cstddef>
#include <string_view>

namespace pihydrate {

constexpr std::size_t kUtf8Valid = static_cast<std::size_t>(-1);

// Returns the byte offset of the first invalid sequence, or kUtf8Valid.
std::size_t find_invalid_utf8(std::string_view bytes);

}  // namespace pihydrate
