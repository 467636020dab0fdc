// Replays inputs through a fuzz target without libFuzzer, so the normal and
// sanitizer test builds run every corpus file and every golden input:
//   fuzz_replay_TARGET PATH...   (files, or directories searched recursively)
// Each file is run as it is and behind four option bytes.
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include <boost/filesystem.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

void run(const std::string& bytes) {
  LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  for (unsigned char option : {0x00, 0x05, 0x0a, 0x17}) {
    std::string prefixed(1, static_cast<char>(option));
    prefixed += bytes;
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(prefixed.data()), prefixed.size());
  }
}

}  // namespace

int main(int argc, char** argv) {
  namespace fs = boost::filesystem;
  std::size_t files = 0;
  for (int i = 1; i < argc; ++i) {
    std::vector<fs::path> paths;
    if (fs::is_directory(argv[i])) {
      for (fs::recursive_directory_iterator it(argv[i]), end; it != end; ++it)
        if (fs::is_regular_file(it->path()) && it->path().filename() != "cmd" && it->path().filename() != "expected")
          paths.push_back(it->path());
    } else {
      paths.push_back(argv[i]);
    }
    std::sort(paths.begin(), paths.end());
    for (const fs::path& p : paths) {
      std::ifstream in(p.string(), std::ios::binary);
      std::stringstream ss;
      ss << in.rdbuf();
      run(ss.str());
      ++files;
    }
  }
  std::printf("replayed %zu files\n", files);
  return files > 0 ? 0 : 1;
}
