// The reference reader of thread exports, the test oracle for the
// converter's reader (src/readers/thread_reading.h): docs/thread-export.md's
// Reading rules, read plainly, on one thread, through RapidJSON. It is not
// part of the library; the unit tests and fuzz_thread_reader build it.
#pragma once

#include <cstddef>
#include <string>

#include "readers/thread_reading.h"

namespace pihydrate {

// It rejects what RapidJSON cannot hold (a number beyond a double's range) as invalid JSON.
ReadThread read_thread_reference(std::string bytes, const std::string& file, std::size_t max_depth);

}  // namespace pihydrate
