// The reader seam (pihydrate/reader.h): a toy format registered in a few
// lines is found from its first lines, read, hydrated and verified by the
// same job as every shipped format, and what the session path finds in a
// line it wrote is reported at the toy input's own line.
#include "pihydrate/reader.h"

#include <gtest/gtest.h>

#include "core/json_spans.h"
#include "pihydrate/pihydrate.h"

namespace pihydrate {
namespace {

// Lines "> text" are the user's turns; nothing else is in the format.
class QuotedLines final : public Reader {
 public:
  const ReaderInfo& info() const override {
    static const ReaderInfo info{"quoted-lines", "quoted text", "lines starting with \"> \"", "quoted lines", "", ""};
    return info;
  }
  int bid(const InputHead& head) const override {
    return !head.lines.empty() && head.lines[0].rfind("> ", 0) == 0 ? kBidMarker : kBidNone;
  }
  ReadSession read(const ReaderInput& input, const ReadOptions& options) const override {
    ReadSession out;
    // A v1-shaped session: the session path gives the ids and the chain.
    std::string text = R"({"type":"session","id":"toy","timestamp":"2026-01-02T03:04:05.000Z","cwd":"/"})"
                       "\n";
    out.origins.add(1, 1, "");
    std::uint64_t number = 0;
    const std::string all = input.read_all();
    for (std::size_t at = 0; at < all.size(); at = all.find('\n', at) + 1) {
      ++number;
      const std::string line = all.substr(at, all.find('\n', at) - at);
      text += R"({"type":"message","timestamp":"2026-01-02T03:04:05.000Z","message":{"role":"user","content":)" +
              json_quote(line.substr(2)) + "}}\n";
      out.origins.add(number, 1, "quoted line " + std::to_string(number));
      ++out.records_read;
      if (all.find('\n', at) == std::string::npos) break;
    }
    take_session_text(std::move(text), input.name(), options.index, out);
    return out;
  }
};

// Every line the sink is given.
struct Lines final : LineSink {
  std::vector<std::string> lines;
  void write_line(std::string_view line) override { lines.emplace_back(line); }
};

TEST(ReaderRegistry, AToyReaderIsChosenReadAndHydratedLikeEveryFormat) {
  static const QuotedLines toy;
  ReaderRegistry readers = ReaderRegistry::standard();
  readers.add(toy);
  EXPECT_EQ(readers.find("quoted-lines"), &toy);
  EXPECT_EQ(readers.choose(make_input_head("> hi\n", true)), &toy);
  EXPECT_NE(readers.tried().find("quoted text (lines starting with \"> \")"), std::string::npos);

  HydrateRequest request;
  request.cwd = "/sandbox";
  request.cwd_must_exist = false;
  request.readers = &readers;
  Lines sink;
  const HydrateResult result =
      hydrate(Input::bytes("> Fix the build.\n>  \n> And the docs.\n", "notes.txt"), request, Output::lines(sink));
  ASSERT_TRUE(result.ok);
  EXPECT_EQ(result.format, "quoted-lines");
  EXPECT_EQ(result.report.entries_read, 3u);  // the reader's count of its own records
  ASSERT_EQ(sink.lines.size(), 3u);           // the header and two turns: the blank one has nothing to send
  EXPECT_NE(sink.lines[0].find(R"("cwd":"/sandbox")"), std::string::npos);
  EXPECT_NE(sink.lines[2].find("And the docs."), std::string::npos);
  // The session path's finding about the blank turn, at the toy input's line 2.
  bool found = false;
  for (const Diagnostic& d : result.report.diagnostics)
    if (d.line == 2 && d.message.rfind("quoted line 2: ", 0) == 0) found = true;
  EXPECT_TRUE(found);
}

TEST(ReaderRegistry, AnInputNobodyRecognisesIsReadAsAPiSession) {
  HydrateRequest request;
  request.cwd = "/sandbox";
  request.cwd_must_exist = false;
  Lines sink;
  const HydrateResult result = hydrate(Input::bytes("> hi\n", "notes.txt"), request, Output::lines(sink));
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.format, "pi");
  // pi's loader says why it is not a session, and the hint what was tried.
  std::size_t no_header = 0;
  for (const Diagnostic& d : result.report.diagnostics) {
    if (d.code != Code::kNoHeader) continue;
    ++no_header;
    EXPECT_EQ(d.hint, ReaderRegistry::standard().tried());
  }
  EXPECT_EQ(no_header, 1u);
}

TEST(ReaderRegistry, AnUnknownFromIsRefused) {
  HydrateRequest request;
  request.cwd = "/sandbox";
  request.from = "nope";
  Lines sink;
  EXPECT_THROW(hydrate(Input::bytes("{}", "x"), request, Output::lines(sink)), std::invalid_argument);
}

TEST(SourceMap, MapsLinesToTheirRecordsAndColumnsInsideCopiedBytes) {
  SourceMap map;
  SourceMap::Origin copied;
  copied.line = 7;
  copied.column = 3;
  copied.copied_column = 20;
  copied.copied_size = 10;
  copied.input_copied_column = 40;
  map.add(copied, "message_end");
  map.add(9, 1, "message_end");
  Diagnostic inside;
  inside.line = 1;
  inside.column = 25;
  inside.message = "bad";
  map.map_back(inside);
  EXPECT_EQ(inside.line, 7u);
  EXPECT_EQ(inside.column, 45u);
  EXPECT_EQ(inside.message, "message_end: bad");
  Diagnostic outside;
  outside.line = 2;
  outside.column = 25;
  map.map_back(outside);
  EXPECT_EQ(outside.line, 9u);
  EXPECT_EQ(outside.column, 1u);
  Diagnostic past;
  past.line = 3;
  past.message = "kept";
  map.map_back(past);
  EXPECT_EQ(past.line, 3u);
  EXPECT_EQ(past.message, "kept");
}

}  // namespace
}  // namespace pihydrate
