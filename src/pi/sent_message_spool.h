// Sent messages kept on disk instead of in memory: `context` learns how many
// messages pi sends (its first line says so) only once it has built them
// all, and a request can be bigger than the memory at hand. One pass builds
// them into the spool; they are handed on from it after the head.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/files.h"
#include "pihydrate/context.h"

namespace pihydrate {

class SentMessageSpool {
 public:
  SentMessageSpool();  // an unlinked temporary file (make_unlinked_temp); throws IoError

  void add(const SentMessage& m);
  // Hands every message added, in order, to `each`. Once.
  void replay(const SentMessageSink& each);

 private:
  void flush();

  Fd file_;
  std::string buffer_;  // written out a MiB at a time
  std::uint64_t count_ = 0;
};

// The bytes add() writes for one message, and their reading back (tests
// check that a message comes back whole).
void append_sent_message(const SentMessage& m, std::string& out);
// Reads one message from `bytes` at `at`, moving `at` past it; false when
// the bytes end before it does. Throws IoError on bytes append did not write.
bool read_sent_message(std::string_view bytes, std::size_t& at, SentMessage& m);

}  // namespace pihydrate
