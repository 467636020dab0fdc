// A whole hydration, as one call (pihydrate.h): the input opened or spooled,
// an event capture mapped to a thread export (event_capture.h), a thread
// export converted into a spooled session, the session hydrated
// into a temporary output, diagnostics pointed at the input's positions, the
// output verified (while it is fsynced) and committed.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <utility>

#include <boost/filesystem/operations.hpp>

#include "core/mapped_file.h"
#include "core/run_beside.h"
#include "core/spool_indexer.h"
#include "jobs/hydrate_job.h"
#include "jobs/job_files.h"
#include "jobs/sigbus_exit.h"
#include "pihydrate/errors.h"
#include "pihydrate/output_file.h"
#include "pihydrate/pihydrate.h"
#include "readers/event_capture.h"
#include "readers/foreign_session.h"
#include "readers/raw_thread.h"

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

// PH904: the input changed while it was read.
Diagnostic input_changed(const std::string& file, std::string message) {
  Diagnostic d;
  d.code = Code::kInputChanged;
  d.severity = Severity::kError;
  d.level = Level::kLoad;
  d.file = file;
  d.message = std::move(message);
  return d;
}

// What PH904 says when the input ended early: mapped (SIGBUS) or on pass 2's read.
constexpr const char* kInputShrank = "the input shrank while it was being read; nothing written (run again)";

// The input as a file descriptor (none for bytes), and what it looked like
// when opened.
struct OpenInput {
  Fd fd;
  std::string display;  // names it in diagnostics
  std::string path;     // a file's path, which the output must not replace; else empty
  // A file must not change while it is read: a session's pass 2 copies
  // lines by the offsets of pass 1 (pi itself rewrites v1/v2 files when it
  // loads them), and a thread export is read in place. The verification
  // trusts the long strings pass 1 checked, too. Size, mtime and ctime are
  // compared (ctime cannot be set back, as mtime can).
  bool check_unchanged = false;
  struct stat before {};

  bool changed() const {
    struct stat after {};
    return check_unchanged && ::fstat(fd.fd, &after) == 0 &&
           (after.st_size != before.st_size || after.st_mtim.tv_sec != before.st_mtim.tv_sec ||
            after.st_mtim.tv_nsec != before.st_mtim.tv_nsec || after.st_ctim.tv_sec != before.st_ctim.tv_sec ||
            after.st_ctim.tv_nsec != before.st_ctim.tv_nsec);
  }
};

void open_input(const Input& input, OpenInput& opened) {
  opened.display = input.name();
  if (input.kind() == Input::Kind::kStream) {
    opened.fd.fd = spool_stream(*input.in(), input.name() == "<stdin>" ? "standard input" : input.name());
  } else if (input.kind() == Input::Kind::kFile) {
    opened.path = input.name();
    opened.fd.fd = ::open(opened.path.c_str(), O_RDONLY | O_CLOEXEC);
    if (opened.fd.fd < 0) throw IoError("cannot open " + opened.path + ": " + std::strerror(errno));
    if (::fstat(opened.fd.fd, &opened.before) == 0) {
      if (S_ISDIR(opened.before.st_mode)) throw IoError(opened.path + " is a directory");
      opened.check_unchanged = true;
    }
  }
}

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

// The session to hydrate: its index and a way to read its lines again.
struct Session {
  SessionIndex index;
  std::unique_ptr<LineSource> lines;
  Fd spool;  // a converted thread's
  ConvertedThread thread;
  ForeignSession foreign;  // a Claude Code or Codex transcript's
};

void read_session(const Input& input, OpenInput& in, const IndexOptions& options, Session& s) {
  if (in.fd.fd < 0) {
    auto source = make_memory_source(input.data());
    s.index = build_session_index(*source, in.display, options);
    s.lines = make_memory_line_source(input.data());
  } else {
    s.index = build_file_index(in.fd.fd, in.display, options);
    s.lines = make_fd_line_source(in.fd.fd, in.display);
  }
}

// The input up to the end of its first line that is not blank (at most
// 4 MiB): what guess_session_format looks at. Read in small steps, as a
// pi header is a few hundred bytes and the file may be gigabytes.
std::string input_head(const Input& input, const OpenInput& in) {
  constexpr std::size_t kMaxHeadBytes = std::size_t{4} << 20, kStep = std::size_t{64} << 10;
  if (in.fd.fd < 0) return input.data().substr(0, kMaxHeadBytes);
  std::string head;
  while (head.size() < kMaxHeadBytes) {
    const std::size_t got = head.size();
    head.resize(got + kStep);
    const ssize_t n = ::pread(in.fd.fd, &head[got], kStep, static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) {
      head.resize(got);
      continue;
    }
    head.resize(got + static_cast<std::size_t>(std::max<ssize_t>(n, 0)));
    if (n <= 0) break;
    const std::size_t text = head.find_first_not_of(" \t\r\n\xEF\xBB\xBF");
    if (text != std::string::npos && head.find('\n', text) != std::string::npos) break;
  }
  return head;
}

// Reads a Claude Code or Codex transcript as the pi session it stands for
// (foreign_session.h); false (with its diagnostics) when it cannot.
// `leaf`: a Claude Code record's uuid, where the branch to write ends.
bool read_foreign_session(const Input& input, OpenInput& in, SessionFormat format, const std::string& leaf,
                          const IndexOptions& options, Session& s) {
  {
    std::string bytes = in.fd.fd >= 0 ? read_all(in.fd.fd, in.display) : input.data();
    s.foreign = format == SessionFormat::kClaudeCode ? convert_claude_code(bytes, in.display, leaf)
                                                     : convert_codex(bytes, in.display);
  }
  if (!s.foreign.ok()) return false;
  s.index = build_session_index(*make_memory_source(s.foreign.session), in.display, options);
  s.lines = make_memory_line_source(s.foreign.session);
  return true;
}

// What a hydration reads: a session, a thread export, or an event capture
// (mapped to a thread export first).
enum class InputForm { kSession, kThread, kEvents };

// Converts the export into a spooled session; false (with thread.diagnostics) when it cannot.
// `owned`: the export's text, converted in place (an event capture's thread), instead of the input.
bool convert_thread(const Input& input, OpenInput& in, const HydrateRequest& request, const IndexOptions& options,
                    const Target& target, const ProcessHooks& hooks, Session& s, std::string* owned) {
  ThreadOptions to;
  to.partial = request.partial;
  to.trailer = request.trailer;
  to.max_depth = options.max_depth;
  // The export: an event capture's thread text (owned), else the input, mapped or read whole.
  auto mapped = owned == nullptr && in.fd.fd >= 0 ? MappedFile::map(in.fd.fd) : nullptr;
  // A mapped file that shrinks under the reader raises SIGBUS, from the
  // first byte read on: the exit it takes then is set up before.
  std::optional<SigbusExit> exit_on_sigbus;
  if (mapped && hooks.exit_on_shrunk_input)
    exit_on_sigbus.emplace(hooks.exit_on_shrunk_input(input_changed(in.display, kInputShrank)),
                           target.created.created());
  std::string read;  // the input read whole, when it is not mapped
  if (owned == nullptr && !mapped) read = in.fd.fd >= 0 ? read_all(in.fd.fd, in.display) : input.data();
  std::string& bytes = owned != nullptr ? *owned : read;
  // The converted session goes to a temporary file, and the export's bytes
  // are freed before the session is read: a big export is never held twice.
  s.spool.fd = make_unlinked_temp("the converted thread");
  // The converter keeps one core busy; the other writes and indexes what it converts.
  SpoolIndexer spool_indexer(s.spool.fd, in.display, options);
  to.spool = [&spool_indexer](SpoolBlock& block) { spool_indexer.append(block); };
  const int export_fd = owned != nullptr ? -1 : in.fd.fd;
  if (mapped) {
    // What a line copies unchanged from the export is read from the
    // export's file again instead of from the spool: the spool holds only
    // the rest. (An export read whole, from a pipe say, cannot be read twice.)
    to.borrow_from_export = true;
    // Read in place: pages the converter is done with leave memory, so
    // the peak does not follow the export's size.
    to.residency = mapped.get();
    s.thread = convert_thread_export(mapped->data(), mapped->size(), in.display, to);
  } else {
    s.thread = convert_thread_export(bytes, in.display, to);  // converted in place
  }
  if (!s.thread.ok()) return false;
  if (s.thread.carries_raw_entries) {
    // pi's own entries: the session is put back together from them
    // (raw_thread.h), in memory, as it is no bigger than the file pi wrote.
    // The converter stopped after reading the envelopes.
    if (mapped) bytes.assign(mapped->data(), mapped->size());
    s.thread = assemble_raw_thread(bytes, in.display, to);
    if (!s.thread.ok()) return false;
    s.index = build_session_index(*make_memory_source(s.thread.session), in.display, options);
    s.lines = make_memory_line_source(s.thread.session);
    return true;
  }
  s.index = spool_indexer.finish();
  s.lines = make_spool_line_source(s.spool.fd, export_fd, spool_indexer.take_layout(), in.display);
  return true;
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

// Points what the session path reported about a converted transcript at the
// transcript's records, after the reader's own findings.
void map_to_transcript(const ForeignSession& foreign, HydrateReport& report) {
  for (Diagnostic& d : report.diagnostics) foreign.map_back(d);
  put_first(foreign.diagnostics, foreign.repairs, foreign.records, report);
}

// Points messages about converted lines at the thread entries they came
// from, after the converter's own.
void map_to_thread(const ConvertedThread& thread, HydrateReport& report) {
  for (Diagnostic& d : report.diagnostics) {
    if (d.line == 0 || d.line > thread.origins.size()) continue;
    const ThreadOrigin& o = thread.origins[d.line - 1];
    const std::string_view id = thread.id_of(o);
    d.message = ConvertedThread::path_of(o) + (id.empty() ? "" : " (id " + quote_for_message(std::string(id)) + ")") +
                ": " + d.message;
    d.line = o.line;
    d.column = o.column;
  }
  put_first(thread.diagnostics, thread.repairs, thread.entry_count, report);
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
    IndexOptions output_index = options;
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

// Points what the thread path reported about a capture's thread at the
// capture's lines, after the capture's own findings.
void map_to_capture(const EventCapture& capture, HydrateReport& report) {
  for (Diagnostic& d : report.diagnostics) capture.map_back(d);
  put_first(capture.diagnostics, capture.repairs, capture.events, report);
}

HydrateResult hydrate_input(const Input& input, InputForm form, const HydrateRequest& request, const Output& output,
                            const ProcessHooks& hooks) {
  const bool is_thread = form != InputForm::kSession;
  HydrateOptions ho = hydrate_options(request);
  OpenInput in;
  open_input(input, in);
  Target target{output, {}, {}, {}};
  prepare_target(target, in.path);
  HydrateResult result;
  result.path = target.file;
  // The input's long strings are noted, so verifying the output can step
  // over those it carries unchanged (HydrateReport::carried).
  IndexOptions input_index = ho.index;
  input_index.record_long_strings = request.verify;
  Session s;
  auto phase = [&hooks](const char* name) {
    if (hooks.on_phase) hooks.on_phase(name);
  };
  EventCapture capture;
  FormatGuess guess;
  if (form == InputForm::kEvents) {
    phase("converting the event capture");
    {
      // Read whole (captures are not gigabytes, docs/events.md) and freed
      // once mapped: the thread text is all that is kept.
      std::string bytes = in.fd.fd >= 0 ? read_all(in.fd.fd, in.display) : input.data();
      capture = convert_event_capture(bytes, in.display);
    }
    if (!capture.ok()) {
      result.input_converted = false;
      result.report.diagnostics = std::move(capture.diagnostics);
      return result;
    }
  } else {
    phase(is_thread ? "converting the thread export" : "reading the session");
  }
  if (is_thread) {
    std::string* owned = form == InputForm::kEvents ? &capture.thread : nullptr;
    const bool converted = convert_thread(input, in, request, input_index, target, hooks, s, owned);
    if (owned != nullptr) *owned = std::string();  // converted: its text is not needed any more
    if (!converted) {
      result.input_converted = false;
      result.report.diagnostics = std::move(s.thread.diagnostics);
      if (form == InputForm::kEvents) map_to_capture(capture, result.report);
      return result;
    }
    // A thread's derived id and time; none when pi's own header came with raw entries.
    if (!ho.session_id && !s.thread.session_id.empty()) ho.session_id = s.thread.session_id;
    if (!ho.timestamp && !s.thread.timestamp.empty()) ho.timestamp = s.thread.timestamp;
  } else {
    // Which format: as asked, else guessed from the first record; a file
    // that is none of them is read as pi's (whose loader says why not).
    guess.format = request.from;
    if (guess.format == SessionFormat::kAuto) guess = guess_session_format(input_head(input, in));
    result.format = guess.format == SessionFormat::kAuto ? SessionFormat::kPi : guess.format;
    if (result.format == SessionFormat::kPi) {
      read_session(input, in, input_index, s);
    } else {
      phase(result.format == SessionFormat::kClaudeCode ? "converting the Claude Code transcript"
                                                        : "converting the Codex rollout");
      // A Claude Code transcript's --leaf is one of its uuids: the reader
      // writes that branch. (A Codex rollout has no tree; --leaf then names
      // an entry of the session written, as for pi's files.)
      std::string leaf;
      if (result.format == SessionFormat::kClaudeCode && ho.leaf_id) leaf = *std::exchange(ho.leaf_id, std::nullopt);
      if (!read_foreign_session(input, in, result.format, leaf, input_index, s)) {
        result.input_converted = false;
        result.report.diagnostics = std::move(s.foreign.diagnostics);
        // Read as the caller said: the file may be of another format.
        if (request.from != SessionFormat::kAuto)
          for (Diagnostic& d : result.report.diagnostics)
            if (d.code == Code::kTranscriptInvalid)
              d.hint += std::string(d.hint.empty() ? "" : "; ") + "read as " + session_format_name(request.from) +
                        " because of --from; without it the format is found from the first record";
        return result;
      }
    }
  }
  const bool to_sink = output.kind() == Output::Kind::kSink;
  OutputFile file(target.dir, hooks.remove_output_on_signals);
  HydrateReport& report = result.report;
  bool ok;
  phase("writing the session");
  try {
    ok = hydrate_session(s.index, *s.lines, ho, file, report);
  } catch (const InputShrankError&) {
    // Cut short between the index and the second read of its lines.
    report.diagnostics.push_back(input_changed(in.display, kInputShrank));
    ok = false;
  }
  if (ok && in.changed()) {
    report.diagnostics.push_back(
        input_changed(in.display, "the input changed while it was being read; nothing written (run again)"));
    ok = false;
  }
  if (is_thread) map_to_thread(s.thread, report);
  if (form == InputForm::kEvents) map_to_capture(capture, report);
  if (result.format == SessionFormat::kClaudeCode || result.format == SessionFormat::kCodex)
    map_to_transcript(s.foreign, report);
  if (!guess.tried.empty())
    for (Diagnostic& d : report.diagnostics)
      if (d.code == Code::kNoHeader) d.hint = guess.tried;
  if (ok && output.kind() == Output::Kind::kDirectory) {
    // A crafted session id or timestamp must not leave the directory.
    std::string name = session_file_name(report.timestamp, report.session_id);
    if (name.find('/') != std::string::npos || name.find('\\') != std::string::npos || name.rfind("..", 0) == 0)
      throw IoError("refusing the file name '" + name + "' derived from the input");
    target.file = result.path = (fs::path(target.dir) / name).string();
    check_output_target(target.file, in.path, output.overwrite());
  }
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

HydrateResult hydrate_session(const Input& input, const HydrateRequest& request, const Output& output,
                              const ProcessHooks& hooks) {
  return hydrate_input(input, InputForm::kSession, request, output, hooks);
}

HydrateResult hydrate_thread(const Input& input, const HydrateRequest& request, const Output& output,
                             const ProcessHooks& hooks) {
  return hydrate_input(input, InputForm::kThread, request, output, hooks);
}

HydrateResult hydrate_events(const Input& input, const HydrateRequest& request, const Output& output,
                             const ProcessHooks& hooks) {
  return hydrate_input(input, InputForm::kEvents, request, output, hooks);
}

}  // namespace pihydrate
