// Hydrates a thread export into a pi session with the library's one call,
// then validates what it wrote, using only the public headers.
//   hydrate_thread_example THREAD.json CWD OUT.jsonl
// writes the bytes `pi-hydrate --thread THREAD.json --cwd CWD -o OUT.jsonl` writes.
#include <iostream>

#include "pihydrate/errors.h"
#include "pihydrate/pihydrate.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: " << argv[0] << " THREAD.json CWD OUT.jsonl\n";
    return 2;
  }
  pihydrate::HydrateRequest request;
  request.cwd = argv[2];  // written as given: an absolute path
  try {
    const pihydrate::HydrateResult result = pihydrate::hydrate_thread(
        pihydrate::Input::file(argv[1]), request, pihydrate::Output::file(argv[3], /*overwrite=*/true));
    // Warnings, and the errors that stopped it, at the export's line:col.
    for (const pihydrate::Diagnostic& d : result.report.diagnostics)
      std::cerr << d.file << ":" << d.line << ":" << d.column << ": " << pihydrate::code_name(d.code) << ": "
                << d.message << "\n";
    if (!result.ok) {
      std::cerr << "nothing written\n";
      return 1;
    }
    std::cout << "wrote " << result.path << ": " << result.report.entries_written << " lines, session "
              << result.report.session_id << "\n";
    const pihydrate::FileReport verdict = pihydrate::validate_file(result.path);
    std::cout << "loadable: " << (verdict.loadable ? "yes" : "no")
              << ", resumable: " << (verdict.resumable ? "yes" : "no") << ", errors: " << verdict.errors << "\n";
    return verdict.resumable ? 0 : 1;
  } catch (const pihydrate::IoError& e) {  // a file that cannot be read or written, a refused target
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }
}
