#include <iostream>
#include <string>
#include <vector>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "pihydrate/cli.h"

int main(int argc, char** argv) {
#if defined(__GLIBC__)
  // glibc raises its mmap threshold each time a big block is freed, after
  // which freed index and queue buffers stay in the heap and in RSS. A fixed
  // threshold hands every block over 256 KiB back to the kernel on free.
  mallopt(M_MMAP_THRESHOLD, 256 * 1024);
#endif
  std::ios::sync_with_stdio(false);
  return pihydrate::run_cli(std::vector<std::string>(argv + 1, argv + argc), std::cin, std::cout, std::cerr);
}
