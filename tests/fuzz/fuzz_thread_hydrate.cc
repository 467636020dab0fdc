// Thread export conversion and hydration on arbitrary bytes, the quick
// JSON syntax check against RapidJSON's (and on two threads against one),
// the mapped reading (pages dropped and faulted back in) against the
// in-memory one, and the
// spooled session (runs borrowed from the export)
// read back and indexed against the in-memory one, and the carried strings
// of the library's whole hydration (hydrate_thread).
#include <sys/mman.h>
#include <unistd.h>

#include <string>

#include <rapidjson/reader.h>

#include "common/index_summary.h"
#include "core/json_check.h"
#include "core/json_spans.h"
#include "core/mapped_file.h"
#include "core/spool_indexer.h"
#include "fuzz_common.h"
#include "pihydrate/pihydrate.h"
#include "pihydrate/session_index.h"
#include "pihydrate/spool.h"
#include "readers/thread_export.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace pihydrate;
  if (size == 0) return 0;
  ThreadOptions to;
  to.partial = static_cast<PartialPolicy>(data[0] % 3);
  to.trailer = (data[0] & 4) != 0;
  std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  // What the quick check calls certainly valid, RapidJSON must accept.
  if (bytes.find('\0') == std::string::npos && is_certainly_valid_json(bytes, 512)) {
    rapidjson::StringStream stream(bytes.c_str());
    rapidjson::BaseReaderHandler<> handler;
    rapidjson::Reader reader;
    if (reader.Parse<rapidjson::kParseNumbersAsStringsFlag>(stream, handler).IsError()) __builtin_trap();
  }
  // The check on two threads, its second started wherever the input says,
  // gives what one thread gives: the same answer and the same long values.
  if (bytes.size() > 2) {
    const std::size_t at = 1 + (static_cast<std::size_t>(data[0]) * 131 + size) % (bytes.size() - 1);
    LongValues one, two;
    SecondThread second;
    second.at = at;
    const bool alone = is_certainly_valid_json(bytes, 64, one, 0);
    if (is_certainly_valid_json(bytes, 64, two, 0, {}, second) != alone || (alone && !(one == two))) __builtin_trap();
  }
  const std::string original = bytes;
  ConvertedThread thread = convert_thread_export(bytes, "fuzz", to);
  if (!original.empty() && (data[0] & 8)) {
    // The same export read from a mapped file, its pages released after each
    // pass: the same session, the same findings.
    int fd = ::memfd_create("fuzz-thread", 0);
    if (fd >= 0 && ::write(fd, original.data(), original.size()) == static_cast<ssize_t>(original.size())) {
      if (auto mapped = MappedFile::map(fd)) {
        ThreadOptions mo = to;
        mo.residency = mapped.get();
        ConvertedThread from_map = convert_thread_export(mapped->data(), mapped->size(), "fuzz", mo);
        if (from_map.session != thread.session || from_map.diagnostics.size() != thread.diagnostics.size())
          __builtin_trap();
      }
    }
    if (fd >= 0) ::close(fd);
  }
  if (thread.ok() && (data[0] & 32)) {
    // Spooled with every unchanged run borrowed, however short: the spool's
    // stored bytes plus the export's runs read back are the session, and
    // the spool's index is the session's.
    int export_fd = ::memfd_create("fuzz-export", 0);
    int spool_fd = ::memfd_create("fuzz-spool", 0);
    if (export_fd >= 0 && spool_fd >= 0 &&
        ::write(export_fd, original.data(), original.size()) == static_cast<ssize_t>(original.size())) {
      std::string copy = original;
      ThreadOptions so = to;
      so.borrow_from_export = true;
      so.min_borrowed_run = 1;
      IndexOptions noting;
      noting.record_long_strings = true;
      SpoolIndexer indexer(spool_fd, "fuzz", noting);
      so.spool = [&](SpoolBlock& block) { indexer.append(block); };
      const ConvertedThread spooled = convert_thread_export(copy, "fuzz", so);
      const SessionIndex index = indexer.finish();
      auto memory = make_memory_source(thread.session);
      if (test_support::index_summary(index) !=
          test_support::index_summary(build_session_index(*memory, "fuzz", noting)))
        __builtin_trap();
      if (!spooled.ok() || spooled.session_bytes != thread.session.size()) __builtin_trap();
      const SpoolLayout layout = indexer.take_layout();
      if (layout.session_size() != thread.session.size()) __builtin_trap();
      auto source = make_spool_line_source(spool_fd, export_fd, layout, "fuzz");
      std::string scratch;
      if (source->read(0, layout.session_size(), scratch) != thread.session) __builtin_trap();
      for (const Entry& e : index.entries)
        if (source->read(e.offset, e.length, scratch) != std::string_view(thread.session).substr(e.offset, e.length))
          __builtin_trap();
    }
    if (export_fd >= 0) ::close(export_fd);
    if (spool_fd >= 0) ::close(spool_fd);
  }
  if (!thread.ok()) return 0;
  // The whole job, as the library does it for a caller (spooled, hydrated,
  // verified, handed to a sink): what it says its output carries from the
  // converted session must hold.
  HydrateRequest request = fuzz::request_from(data[0]);
  request.partial = to.partial;
  request.trailer = to.trailer;
  fuzz::CollectingSink sink;
  const HydrateResult result = hydrate_thread(Input::bytes(original, "fuzz"), request, Output::lines(sink));
  if (!result.ok) return 0;
  IndexOptions noting;
  noting.max_depth = request.limits.max_depth;
  noting.record_long_strings = true;
  auto source = make_memory_source(thread.session);
  fuzz::check_carried_strings(thread.session, build_session_index(*source, "fuzz", noting), result.report, sink.text);
  return 0;
}
