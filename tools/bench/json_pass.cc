// The floor a reader is measured against: one pass of RapidJSON over the
// same bytes on one core. Each line of a JSONL file is parsed into a
// document (reused, so no allocation per line); a file that is one JSON
// value is parsed whole. Prints the seconds the parse took (reading the file
// into memory is not counted), the lines parsed and the bytes.
//   json-pass FILE
#include <rapidjson/document.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: json-pass FILE\n");
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "json-pass: cannot open %s\n", argv[1]);
    return 2;
  }
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto start = std::chrono::steady_clock::now();
  rapidjson::Document doc;
  std::size_t lines = 0, failed = 0;
  doc.Parse(bytes.data(), bytes.size());
  if (doc.HasParseError()) {  // not one value: JSONL
    for (std::size_t at = 0; at < bytes.size();) {
      std::size_t end = bytes.find('\n', at);
      if (end == std::string::npos) end = bytes.size();
      if (end > at) {
        doc.Parse(bytes.data() + at, end - at);
        ++lines;
        failed += doc.HasParseError();
      }
      at = end + 1;
    }
  } else {
    lines = 1;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%.3f s %zu lines (%zu not JSON) %zu bytes\n", seconds, lines, failed, bytes.size());
  return 0;
}
