// The thread export reader's conversion of an export in a file of its
// caller's: the event capture reader writes a capture's thread export to a
// temporary file and hands it here.
#pragma once

#include <string>

#include "pihydrate/reader.h"

namespace pihydrate {

// `fd` is read mapped, as a thread export's file is; the session's lines
// borrow from it, so it must stay open while they are read.
ReadSession read_thread_export_file(int fd, const std::string& name, const ReadOptions& options);

}  // namespace pihydrate
