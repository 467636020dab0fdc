// What tree, context and validate read: the pi session an input stands for
// (read_session_of, pihydrate.h), indexed.
#pragma once

#include <memory>

#include "core/files.h"
#include "pihydrate/pihydrate.h"

namespace pihydrate {

// A session (a file, or bytes) indexed, with a way to read its lines again.
struct IndexedSession {
  Fd file;
  SessionIndex index;
  std::unique_ptr<LineSource> lines;
};
// read_session_of, for validate: with kNo, a converted session is not kept
// (`session` is left empty), only what converting it found.
enum class KeepSession { kYes, kNo };
SessionOfInput read_session_of(const Input& input, const std::string& from, PiVersion version,
                               const ReaderRegistry* readers, KeepSession keep);

// `input` is a file, spooled, or bytes (read_session_of gives no stream).
// Throws IoError when it cannot be read.
void index_session(const Input& input, const IndexOptions& options, IndexedSession& out);

}  // namespace pihydrate
