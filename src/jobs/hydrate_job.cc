// A whole hydration, as one call (pihydrate.h): the input opened, its
// reader chosen (by --from, or by its first lines) and read into the pi
// session it stands for, that session hydrated into a temporary output,
// what was found pointed at the input's positions, the output verified
// (while it is fsynced) and committed. Nothing here depends on the format.
#include <unistd.h>

#include <algorithm>
#include <stdexcept>
#include <utility>

#include <boost/filesystem/operations.hpp>

#include "core/files.h"
#include "core/run_beside.h"
#include "jobs/hydrate_job.h"
#include "jobs/opened_input.h"
#include "pihydrate/errors.h"
#include "pihydrate/findings.h"
#include "pihydrate/output_file.h"
#include "pihydrate/pihydrate.h"
#include "pihydrate/reader.h"

namespace pihydrate {

Input Input::file(std::string path) { return Input(Kind::kFile, std::move(path)); }

Input Input::bytes(std::string bytes, std::string name) {
  Input input(Kind::kBytes, std::move(name));
  input.bytes_ = std::move(bytes);
  return input;
}

Input Input::stream(std::istream& in, std::string name) {
  Input input(Kind::kStream, std::move(name));
  input.in_ = &in;
  return input;
}

Input Input::spooled(int fd, std::string name) {
  Input input(Kind::kSpooled, std::move(name));
  input.fd_ = std::shared_ptr<const int>(new int(fd), [](const int* owned) {
    ::close(*owned);
    delete owned;
  });
  return input;
}

Output Output::file(std::string path, bool overwrite) {
  return Output(Kind::kFile, std::move(path), overwrite, nullptr);
}
Output Output::directory(std::string dir, bool overwrite) {
  return Output(Kind::kDirectory, std::move(dir), overwrite, nullptr);
}
Output Output::lines(LineSink& sink) { return Output(Kind::kSink, "", false, &sink); }

HydrateOptions hydrate_options(const HydrateRequest& r) {
  if (r.limits.max_line_bytes > kMaxLineBytesLimit)
    throw std::invalid_argument("max_line_bytes is over kMaxLineBytesLimit");
  if (r.session_id && !is_valid_session_id(*r.session_id))
    throw std::invalid_argument("not a session id: " + *r.session_id);
  if (r.timestamp && !is_iso8601(*r.timestamp))
    throw std::invalid_argument("not an ISO-8601 timestamp: " + *r.timestamp);
  HydrateOptions ho;
  ho.cwd = r.cwd;
  ho.tools = r.tools;
  ho.thinking = r.thinking;
  ho.flatten_max_chars = r.flatten_max_chars;
  ho.leaf_id = r.leaf_id;
  ho.label = r.label;
  ho.session_id = r.session_id;
  ho.timestamp = r.timestamp;
  ho.prune_compacted = r.prune_compacted;
  ho.pi_version = r.pi_version;
  ho.index.reader.max_line_bytes = r.limits.max_line_bytes;
  ho.index.max_depth = std::max<std::size_t>(1, r.limits.max_depth);
  ho.index.max_entries = r.limits.max_entries;
  return ho;
}

namespace {

namespace fs = boost::filesystem;

// Where the output goes: its directory now, its name (a directory output's)
// once the session id is known.
struct Target {
  const Output& output;
  std::string dir;
  std::string file;  // as given: messages and the summary name it the way the caller did
  CreatedDirectories created;
};

void prepare_target(Target& t, const std::string& input_path) {
  switch (t.output.kind()) {
    case Output::Kind::kSink: t.dir = temp_directory(); return;
    case Output::Kind::kFile:
      t.dir = fs::absolute(t.output.path()).parent_path().string();
      t.file = t.output.path();
      check_output_target(t.file, input_path, t.output.overwrite());
      break;
    case Output::Kind::kDirectory: t.dir = fs::absolute(t.output.path()).lexically_normal().string(); break;
  }
  boost::system::error_code ec;
  if (!t.created.create(t.dir, ec)) throw IoError("cannot create " + t.dir + ": " + ec.message());
}

// A reader's own findings go before what the session path found in what it
// made; its repairs are added and its count of entries read is the report's.
void put_first(const Diagnostics& findings, const std::map<std::string, std::uint64_t>& repairs,
               std::uint64_t entries_read, HydrateReport& report) {
  Diagnostics all = findings;
  all.insert(all.end(), report.diagnostics.begin(), report.diagnostics.end());
  report.diagnostics = std::move(all);
  for (const auto& [kind, count] : repairs) report.repairs[kind] += count;
  report.entries_read = entries_read;
}

// Validates the written file as pi would load it, while it is synced to
// disk on another thread (the fsync mostly waits for the disk, and the
// verification needs the cores); a file that fails is not committed. A
// sink's file is not synced. False with the errors in the report.
bool verify_output(OutputFile& output, const HydrateRequest& request, const IndexOptions& options,
                   const KnownLongStrings& carried, const std::string& name, bool sync, HydrateReport& report) {
  bool ok = true;
  auto verify = [&] {
    ValidateOptions vo;
    vo.pi_version = request.pi_version;
    vo.check_cwd = request.cwd_must_exist;
    vo.index = options;
    IndexOptions output_index = index_options_for(vo);  // as validate indexes: no timestamps' text below lint
    output_index.known_strings = &carried;
    SessionIndex written = build_file_index(output.fd(), name, output_index);
    FileReport verdict = validate_index(written, vo);
    for (Diagnostic& d : verdict.diagnostics) {
      if (d.severity != Severity::kError) continue;
      d.message = "output failed verification: " + d.message;
      report.diagnostics.push_back(d);
      ok = false;
    }
  };
  if (!sync) {
    verify();
    return ok;
  }
  std::exception_ptr sync_error;
  run_beside(
      [&] {
        try {
          output.finish();
        } catch (...) {
          sync_error = std::current_exception();
        }
      },
      verify);
  // A file that failed verification is not written: how its sync went does not matter.
  if (sync_error && ok) std::rethrow_exception(sync_error);
  return ok;
}

// How the reader reads: the request's options, and the index the session path needs.
ReadOptions read_options(const HydrateRequest& request, const HydrateOptions& ho) {
  ReadOptions ro;
  ro.partial = request.partial;
  ro.trailer = request.trailer;
  ro.leaf = ho.leaf_id;
  ro.index = ho.index;
  // The input's long strings are noted, so verifying the output can step
  // over those it carries unchanged (HydrateReport::carried).
  ro.index.record_long_strings = request.verify;
  return ro;
}

// An input nobody recognised was read as a pi session, and pi's loader
// refused it (PH102): its hint says which formats were tried.
void explain_unrecognised(const ChosenReader& chosen, const ReaderRegistry& registry, Diagnostics& diagnostics) {
  if (chosen.recognised) return;
  for (Diagnostic& d : diagnostics)
    if (d.code == Code::kNoHeader) d.hint = registry.tried();
}

// A directory output's file name, once the session id is known.
void name_directory_output(Target& target, const OpenedInput& in, const HydrateReport& report, HydrateResult& result) {
  // A crafted session id or timestamp must not leave the directory.
  std::string name = session_file_name(report.timestamp, report.session_id);
  if (name.find('/') != std::string::npos || name.find('\\') != std::string::npos || name.rfind("..", 0) == 0)
    throw IoError("refusing the file name '" + name + "' derived from the input");
  target.file = result.path = (fs::path(target.dir) / name).string();
  check_output_target(target.file, in.path(), target.output.overwrite());
}

// hydrate(), its findings listed as they were found: the reader's, the
// session path's and the verification's, each list of its own.
HydrateResult hydrate_listing_all(const Input& input, const HydrateRequest& request, const Output& output,
                                  const ProcessHooks& hooks) {
  HydrateOptions ho = hydrate_options(request);
  const ReaderRegistry& registry = request.readers != nullptr ? *request.readers : ReaderRegistry::standard();
  OpenedInput in(input);
  Target target{output, {}, {}, {}};
  prepare_target(target, in.path());
  in.exit_on_shrunk_input = hooks.exit_on_shrunk_input;
  in.made_directories = &target.created.created();
  auto phase = [&hooks](const std::string& name) {
    if (hooks.on_phase) hooks.on_phase(name.c_str());
  };

  HydrateResult result;
  result.path = target.file;
  const ChosenReader chosen = choose_reader(registry, request.from, in);
  result.format = chosen.reader->info().name;
  phase(reading_phase(chosen.reader->info()));
  ReadSession s = chosen.reader->read(in, read_options(request, ho));
  if (!s.ok()) {
    result.input_converted = false;
    result.report.diagnostics = std::move(s.diagnostics);
    return result;
  }
  if (s.leaf_taken) ho.leaf_id.reset();  // the reader wrote that branch
  if (!ho.session_id && s.session_id) ho.session_id = s.session_id;
  if (!ho.timestamp && s.timestamp) ho.timestamp = s.timestamp;

  const bool to_sink = output.kind() == Output::Kind::kSink;
  OutputFile file(target.dir, hooks.remove_output_on_signals);
  HydrateReport& report = result.report;
  bool ok;
  phase("writing the session");
  try {
    ok = hydrate_session(s.index, *s.lines, ho, file, report);
  } catch (const InputShrankError&) {
    // Cut short between the index and the second read of its lines.
    report.diagnostics.push_back(input_changed(in.name(), kInputShrank));
    ok = false;
  }
  if (ok && in.changed()) {
    report.diagnostics.push_back(
        input_changed(in.name(), "the input changed while it was being read; nothing written (run again)"));
    ok = false;
  }
  // What the session path found in the lines a reader wrote, at the input's records.
  for (Diagnostic& d : report.diagnostics) s.origins.map_back(d);
  put_first(s.diagnostics, s.repairs, s.records_read, report);
  explain_unrecognised(chosen, registry, report.diagnostics);
  if (ok && output.kind() == Output::Kind::kDirectory) name_directory_output(target, in, report, result);
  // The input's index is not needed any more: it is released before the
  // output is indexed, so the two are never in memory at once.
  s.index = SessionIndex();
  const KnownLongStrings carried(report.carried);
  s.lines.reset();
  if (!ok) return result;
  file.flush();
  if (request.verify) phase("verifying the output");
  if (request.verify &&
      !verify_output(file, request, ho.index, carried, to_sink ? "<output>" : target.file, !to_sink, report))
    return result;
  if (to_sink) {
    file.copy_to(*output.sink());
  } else {
    file.commit(target.file, output.overwrite());
    target.created.keep();
  }
  result.ok = true;
  return result;
}

}  // namespace

HydrateResult hydrate(const Input& input, const HydrateRequest& request, const Output& output,
                      const ProcessHooks& hooks) {
  HydrateResult result = hydrate_listing_all(input, request, output, hooks);
  // At most kListedPerCode findings of a code in all, and one summary each.
  list_at_most_per_code(result.report.diagnostics);
  return result;
}

HydrateResult hydrate_session(const Input& input, const HydrateRequest& request, const Output& output,
                              const ProcessHooks& hooks) {
  return hydrate(input, request, output, hooks);
}

HydrateResult hydrate_thread(const Input& input, const HydrateRequest& request, const Output& output,
                             const ProcessHooks& hooks) {
  HydrateRequest thread = request;
  thread.from = "thread-export";
  return hydrate(input, thread, output, hooks);
}

HydrateResult hydrate_events(const Input& input, const HydrateRequest& request, const Output& output,
                             const ProcessHooks& hooks) {
  HydrateRequest events = request;
  events.from = "pi-events";
  return hydrate(input, events, output, hooks);
}

}  // namespace pihydrate
