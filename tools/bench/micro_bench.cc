// Google Benchmark micro-benchmarks for the hot paths: line splitting,
// scanning (parsing), the pi view with tool pairing, rendering entries, and
// converting a thread export.
// Figures only; nothing here asserts a time. Run: build/tools/bench/pihydrate_bench
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <random>
#include <string>

#include "core/json_check.h"
#include "core/json_spans.h"

#include "pihydrate/hydrate.h"
#include "pihydrate/line_reader.h"
#include "pihydrate/pi_view.h"
#include "pihydrate/session_index.h"
#include "readers/thread_export.h"

namespace {

using namespace pihydrate;

// A session of `turns` turns: user, assistant with two tool calls, two
// results of code-like text. Deterministic.
std::string make_session(int turns) {
  std::mt19937 rng(42);
  std::string text =
      "{\"type\":\"session\",\"version\":3,\"id\":\"bench\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/"
      "tmp\"}\n";
  std::string code;
  for (int i = 0; i < 40; ++i) code += "\\tconst x = \\\"v\\\" + path.join(\\\"a\\\\\\\\b\\\", name); // caf\\u00e9\\n";
  int id = 0;
  std::string parent = "null";
  auto add = [&](const std::string& body) {
    char eid[16];
    std::snprintf(eid, sizeof eid, "%08x", ++id);
    text += "{\"type\":\"message\",\"id\":\"" + std::string(eid) + "\",\"parentId\":" + parent +
            ",\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"message\":" + body + "}\n";
    parent = "\"" + std::string(eid) + "\"";
  };
  for (int t = 0; t < turns; ++t) {
    std::string a = "c" + std::to_string(t) + "a", b = "c" + std::to_string(t) + "b";
    add("{\"role\":\"user\",\"content\":\"please look at file " + std::to_string(rng() % 1000) + "\",\"timestamp\":1}");
    add("{\"role\":\"assistant\",\"content\":[{\"type\":\"thinking\",\"thinking\":\"hmm\"},{\"type\":\"toolCall\","
        "\"id\":\"" +
        a + "\",\"name\":\"read\",\"arguments\":{\"path\":\"x\"}},{\"type\":\"toolCall\",\"id\":\"" + b +
        "\",\"name\":\"bash\",\"arguments\":{\"command\":\"ls\"}}],\"usage\":{\"input\":1,\"cost\":{\"total\":0.1}},"
        "\"stopReason\":\"toolUse\",\"timestamp\":2}");
    add("{\"role\":\"toolResult\",\"toolCallId\":\"" + a +
        "\",\"toolName\":\"read\",\"content\":[{\"type\":\"text\",\"text\":\"" + code +
        "\"}],\"isError\":false,\"timestamp\":3}");
    add("{\"role\":\"toolResult\",\"toolCallId\":\"" + b +
        "\",\"toolName\":\"bash\",\"content\":[{\"type\":\"text\",\"text\":\"" + code +
        "\"}],\"isError\":false,\"timestamp\":4}");
  }
  return text;
}

const std::string& corpus() {
  static const std::string text = make_session(2000);
  return text;
}

void BM_LineSplitting(benchmark::State& state) {
  for (auto _ : state) {
    auto source = make_memory_source(corpus());
    LineReader reader(*source);
    Line line;
    std::size_t lines = 0;
    while (reader.next(line)) ++lines;
    benchmark::DoNotOptimize(lines);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * corpus().size()));
}
BENCHMARK(BM_LineSplitting);

void BM_ScanIndex(benchmark::State& state) {
  for (auto _ : state) {
    auto source = make_memory_source(corpus());
    SessionIndex index = build_session_index(*source, "bench");
    benchmark::DoNotOptimize(index.entries.size());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * corpus().size()));
}
BENCHMARK(BM_ScanIndex);

void BM_PiViewAndPairing(benchmark::State& state) {
  auto source = make_memory_source(corpus());
  SessionIndex index = build_session_index(*source, "bench");
  for (auto _ : state) {
    PiView view = build_pi_view(index, PiVersion::k1_5);
    auto findings = find_pairing_issues(index, view);
    benchmark::DoNotOptimize(findings.size());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * index.entries.size()));
}
BENCHMARK(BM_PiViewAndPairing);

class NullSink final : public LineSink {
 public:
  void write_line(std::string_view line) override { bytes += line.size(); }
  std::size_t bytes = 0;
};

void BM_HydrateWrite(benchmark::State& state) {
  auto source = make_memory_source(corpus());
  SessionIndex index = build_session_index(*source, "bench");
  HydrateOptions options;
  options.cwd = "/tmp";
  for (auto _ : state) {
    auto lines = make_memory_line_source(corpus());
    NullSink sink;
    HydrateReport report;
    hydrate_session(index, *lines, options, sink, report);
    benchmark::DoNotOptimize(sink.bytes);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * corpus().size()));
}
BENCHMARK(BM_HydrateWrite);

// A thread export with the same turns: chat user turns, pi.assistant and
// pi.tool_result entries carrying the messages verbatim.
std::string make_thread(int turns) {
  std::string code;
  for (int i = 0; i < 40; ++i) code += "\\tconst x = \\\"v\\\" + path.join(\\\"a\\\\\\\\b\\\", name); // caf\\u00e9\\n";
  std::string text =
      "{\"format\":\"thread-export\",\"version\":1,\"thread\":{\"id\":\"thr_bench\",\"title\":\"bench\","
      "\"createdAt\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/tmp\",\"model\":{\"provider\":\"anthropic\","
      "\"modelId\":\"claude-sonnet-4-5\"}},\"entries\":[\n";
  int n = 0;
  auto add = [&](const std::string& kind, const std::string& body) {
    const std::string separator = n++ ? ",\n" : "";
    text += separator + "{\"id\":\"e" + std::to_string(n) + "\",\"kind\":\"" + kind +
            "\",\"ts\":\"2026-01-01T00:00:01.000Z\"," + body + "}";
  };
  const std::string meta =
      ",\"api\":\"anthropic-messages\",\"provider\":\"anthropic\",\"model\":\"claude-sonnet-4-5\","
      "\"usage\":{\"input\":1,\"output\":1,\"cacheRead\":0,\"cacheWrite\":0,\"totalTokens\":2,"
      "\"cost\":{\"input\":0,\"output\":0,\"cacheRead\":0,\"cacheWrite\":0,\"total\":0}}";
  for (int t = 0; t < turns; ++t) {
    std::string a = "c" + std::to_string(t) + "a";
    add("chat", "\"role\":\"user\",\"text\":\"please look at file " + std::to_string(t) + "\"");
    add("pi.assistant", "\"data\":{\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"toolCall\",\"id\":\"" +
                            a + "\",\"name\":\"read\",\"arguments\":{\"path\":\"x\"}}]" + meta +
                            ",\"stopReason\":\"toolUse\",\"timestamp\":1767225601000}}");
    add("pi.tool_result", "\"data\":{\"message\":{\"role\":\"toolResult\",\"toolCallId\":\"" + a +
                              "\",\"toolName\":\"read\",\"content\":[{\"type\":\"text\",\"text\":\"" + code +
                              "\"}],\"isError\":false,\"timestamp\":1767225602000}}");
  }
  return text + "\n]}\n";
}

// The thread reader end to end: syntax check, mapping, the converted session.
void BM_ThreadConvert(benchmark::State& state) {
  static const std::string thread = make_thread(2000);
  for (auto _ : state) {
    std::string bytes = thread;
    ConvertedThread converted = convert_thread_export(bytes, "bench", ThreadOptions{});
    if (!converted.ok()) state.SkipWithError("the benchmark thread does not convert");
    benchmark::DoNotOptimize(converted.session_bytes);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * thread.size()));
}
BENCHMARK(BM_ThreadConvert);

// The syntax check a thread export starts with (is_certainly_valid_json,
// collecting long values, one thread): string scanning is most of it. It
// reads PIHYDRATE_BENCH_EXPORT when set (a tools/gen_corpus.py export has the
// realistic mix of text, code and base64), else the export above.
void BM_ExportSyntaxCheck(benchmark::State& state) {
  static const std::string text = [] {
    if (const char* path = std::getenv("PIHYDRATE_BENCH_EXPORT")) {
      std::ifstream in(path, std::ios::binary);
      return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    return make_thread(2000);
  }();
  for (auto _ : state) {
    LongValues values;
    const bool valid = is_certainly_valid_json(text, 512, values, 0, {});
    if (!valid) state.SkipWithError("the export is not settled by the quick check");
    benchmark::DoNotOptimize(values.size());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
}
BENCHMARK(BM_ExportSyntaxCheck);

}  // namespace

BENCHMARK_MAIN();
