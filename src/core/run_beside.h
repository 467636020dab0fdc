// Two pieces of work at once, on this thread and a helper.
#pragma once

#include <exception>
#include <thread>

namespace pihydrate {

// Runs `beside` on a second thread while `here` runs on this one, and
// returns once both are done; an exception from either is rethrown (this
// thread's first). `beside` must touch nothing `here` writes, unless they
// take turns through a lock of their own.
template <typename Beside, typename Here>
void run_beside(Beside beside, Here here) {
  std::exception_ptr beside_error;
  std::thread helper([&] {
    try {
      beside();
    } catch (...) {
      beside_error = std::current_exception();
    }
  });
  try {
    here();
  } catch (...) {
    helper.join();  // it uses this frame
    throw;
  }
  helper.join();
  if (beside_error) std::rethrow_exception(beside_error);
}

}  // namespace pihydrate
