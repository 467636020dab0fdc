// The text of a pi message, written once for every rule that reads it: R3
// and R7 compare a message's text with a chat turn's, X4 a raw message's
// with a lossy one's (both with white space normalised), and flattening
// (R11) writes a result's text as a user message.
#pragma once

#include <string>
#include <string_view>

namespace pihydrate {

// What becomes of a content block that is not text.
enum class OtherBlocks { kLeftOut, kMarked };  // kMarked: "[image]", "[thinking]", ...

// The text of a content value (`content_json`, its JSON text): a string is
// its own text; an array's text blocks are joined by "\n" (with the other
// blocks as markers when kMarked); anything else has none.
std::string content_text(std::string_view content_json, OtherBlocks other = OtherBlocks::kLeftOut);
// The text of a message object (`message_json`): its content's.
std::string message_text(std::string_view message_json);

}  // namespace pihydrate
