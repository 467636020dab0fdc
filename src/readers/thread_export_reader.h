// The thread export reader's conversion of an export held in memory: the
// event capture reader maps a capture to a thread export and hands it here.
#pragma once

#include <string>

#include "pihydrate/reader.h"

namespace pihydrate {

// `bytes` may be rewritten in place (a lone UTF-16 surrogate escape becomes \uFFFD).
ReadSession read_thread_export_text(std::string& bytes, const std::string& name, const ReadOptions& options);

}  // namespace pihydrate
