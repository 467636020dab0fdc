// The pi-hydrate executable: the process-wide settings a library leaves to
// the program that owns the process (allocator tuning, signal handlers),
// then run_cli.
#include <iostream>
#include <string>
#include <vector>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "pihydrate/cli.h"

namespace {

void tune_allocator() {
#if defined(__GLIBC__)
  // glibc raises its mmap threshold each time a big block is freed, after
  // which freed index and queue buffers stay in the heap and in RSS. A fixed
  // threshold hands every block over 256 KiB back to the kernel on free.
  mallopt(M_MMAP_THRESHOLD, 256 * 1024);
#endif
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  tune_allocator();
  std::ios::sync_with_stdio(false);
  return pihydrate::run_cli(args, std::cin, std::cout, std::cerr, pihydrate::Process::kOwned);
}
