// The library's jobs, one call each: validate a file, hydrate a pi session,
// hydrate a thread export or a capture of pi's events, show the tree pi reads (session_tree.h) and the
// conversation it sends when it resumes (context.h). Each does what the pi-hydrate command does and
// writes the same bytes; the command is a thin shell over them
// (docs/library.md). The lower-level headers stay available for callers who
// want the parts.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "pihydrate/context.h"  // build_resume_context: what pi sends when it resumes
#include "pihydrate/diagnostic.h"
#include "pihydrate/findings.h"  // kListedPerCode: how many findings of a code a report lists
#include "pihydrate/hydrate.h"
#include "pihydrate/pi_paths.h"      // find_pi_session_dir: where pi keeps sessions
#include "pihydrate/session_tree.h"  // read_session_tree: the tree pi reads
#include "pihydrate/validator.h"

namespace pihydrate {

// Validates the file at `path` as `pi-hydrate validate` does. Throws IoError
// when it cannot be read.
FileReport validate_file(const std::string& path, const ValidateOptions& options = {});

// What a hydration reads. A stream is read once, into an unlinked temporary
// file (the input is read twice); so is one that tree, context or validate read.
class Input {
 public:
  static Input file(std::string path);  // named by `path` in diagnostics
  static Input bytes(std::string bytes, std::string name = "<memory>");
  static Input stream(std::istream& in, std::string name = "<stdin>");
  // An open file read through its descriptor `fd` (a stream already read
  // into an unlinked temporary file), which the Input and its copies own
  // together: the last one closes it.
  static Input spooled(int fd, std::string name);

  enum class Kind { kFile, kBytes, kStream, kSpooled };
  Kind kind() const { return kind_; }
  const std::string& name() const { return name_; }   // the path, for a file
  const std::string& data() const { return bytes_; }  // kBytes only
  std::istream* in() const { return in_; }            // kStream only
  int fd() const { return fd_ ? *fd_ : -1; }          // kSpooled only

 private:
  Input(Kind kind, std::string name) : kind_(kind), name_(std::move(name)) {}
  Kind kind_;
  std::string name_;
  std::string bytes_;
  std::istream* in_ = nullptr;
  std::shared_ptr<const int> fd_;
};

// Where a hydration writes. Nothing is written unless the call succeeds: a
// file is written to a temporary file beside it (mode 0600), verified,
// fsynced and renamed; lines for a sink wait in a temporary file in $TMPDIR
// (or /tmp) until they are verified. Missing directories are made, and
// removed again when nothing is written.
class Output {
 public:
  // The file `path`; an existing one is refused unless `overwrite`, and so
  // are a symlink and the input itself.
  static Output file(std::string path, bool overwrite = false);
  // DIR/<timestamp>_<session id>.jsonl, pi's --session-dir layout.
  static Output directory(std::string dir, bool overwrite = false);
  static Output lines(LineSink& sink);

  enum class Kind { kFile, kDirectory, kSink };
  Kind kind() const { return kind_; }
  const std::string& path() const { return path_; }
  bool overwrite() const { return overwrite_; }
  LineSink* sink() const { return sink_; }

 private:
  Output(Kind kind, std::string path, bool overwrite, LineSink* sink)
      : kind_(kind), path_(std::move(path)), overwrite_(overwrite), sink_(sink) {}
  Kind kind_;
  std::string path_;
  bool overwrite_;
  LineSink* sink_;
};

// The memory caps of docs/reliability.md; they apply to the input, to a
// thread's converted session and to the verified output.
struct Limits {
  std::size_t max_line_bytes = std::size_t{256} << 20;  // at most kMaxLineBytesLimit
  std::size_t max_depth = 512;
  std::size_t max_entries = 50'000'000;
};

class ReaderRegistry;  // reader.h: the input formats, one reader each

// What the caller wants of a hydration (the command's options, docs/cli.md).
struct HydrateRequest {
  std::string cwd;             // the new session's working directory, written as given (pass an absolute
                               // path); empty: the input's own
  bool cwd_must_exist = true;  // the verification requires it (false: --allow-missing-cwd)
  ToolPolicy tools = ToolPolicy::kPair;
  std::size_t flatten_max_chars = 4000;
  ThinkingPolicy thinking = ThinkingPolicy::kKeep;
  bool prune_compacted = false;
  std::optional<std::string> leaf_id;     // a session's branch to write, instead of pi's leaf
  std::optional<std::string> label;       // or the branch ending at the entry with this label
  std::optional<std::string> session_id;  // default: the input's (a thread's, derived from thread.id)
  std::optional<std::string> timestamp;   // default: the input's (a thread's createdAt)
  PiVersion pi_version = newest_pi_version();
  PartialPolicy partial = PartialPolicy::kDrop;  // thread exports, event captures: an interrupted stream
  bool trailer = true;  // thread exports, event captures: session_info, model_change, thinking_level_change
  // What the input is: a reader's name (ReaderInfo::name: "pi", "claude-code", ...); empty: the
  // reader that recognises its first lines (docs/cli.md, "Input formats").
  std::string from;
  const ReaderRegistry* readers = nullptr;  // the formats to choose from; null: every one pi-hydrate reads
  Limits limits;
  bool verify = true;  // validate the output before it is committed
};

struct HydrateResult {
  bool ok = false;  // written; false: the errors are in report.diagnostics and nothing was written
  // The file written (or that would have been, when verification failed);
  // empty for a sink, and for a directory until the session id is known.
  std::string path;
  // False when the input could not be read as its format: the report then holds those errors only.
  bool input_converted = true;
  std::string format;  // the reader it was read with ("pi", "thread-export", "claude-code", ...)
  // Diagnostics name the input's positions: a thread's as `entries[i] (id "...")`
  // at the entry's line:col, a session's at its line. (report.carried, with
  // verification on, names the output's strings its verification stepped over.)
  HydrateReport report;
};

// Process-wide behaviour a call may switch on for itself; all off by
// default, so a library caller gets no signal handler behind its back
// (the pi-hydrate executable turns both on).
struct ProcessHooks {
  // From the temporary output's creation on, SIGINT, SIGTERM and SIGHUP
  // (unless ignored) remove it and end the process as the signal would, and
  // SIGPIPE is ignored. The handlers stay installed after the call.
  bool remove_output_on_signals = false;
  // While a thread export is read in place (mapped), a SIGBUS (the file
  // shrank) writes the text this returns for the PH904 diagnostic to
  // standard error, removes the directories made for the output and ends
  // the process with _exit(1). Called before the export is read; the
  // previous SIGBUS handler is restored after it is read. Unset: no handler
  // (such a SIGBUS ends the process).
  std::function<std::string(const Diagnostic&)> exit_on_shrunk_input;
  // Called as each phase of the job starts, with its name ("reading the pi
  // session" or "converting the " and the format's title, as in "converting
  // the thread export"; then "writing the session", "verifying the output"),
  // on the calling thread: for a progress display.
  std::function<void(const char* phase)> on_phase;
};

// Hydrates an input of any format the registry reads (a pi session of any
// version, a thread export, a capture of pi's events, another agent's
// transcript): its reader turns it into the pi session it stands for, which
// is hydrated, verified and written. Throws IoError for what is not the
// input's fault (a file that cannot be opened or written, a refused target)
// and std::invalid_argument for a request the command refuses as a usage
// error (an unknown `from`).
HydrateResult hydrate(const Input& input, const HydrateRequest& request, const Output& output,
                      const ProcessHooks& hooks = {});
// The same; kept for callers of the earlier calls, one per input.
HydrateResult hydrate_session(const Input& input, const HydrateRequest& request, const Output& output,
                              const ProcessHooks& hooks = {});
// The same with request.from "thread-export" (docs/thread-export.md).
HydrateResult hydrate_thread(const Input& input, const HydrateRequest& request, const Output& output,
                             const ProcessHooks& hooks = {});
// The same with request.from "pi-events": a capture of pi's stdout in --mode json or --mode rpc
// (docs/events.md); report.entries_read counts its events.
HydrateResult hydrate_events(const Input& input, const HydrateRequest& request, const Output& output,
                             const ProcessHooks& hooks = {});

// The pi session an input stands for, as tree, context and validate read it:
// pi's own session as it is; any other format converted and hydrated in
// memory as `pi-hydrate --session` writes it (with the input's own cwd).
struct SessionOfInput {
  std::string format;      // the reader's name
  bool converted = false;  // false: `session` is the input itself
  Input session = Input::bytes(std::string());
  HydrateResult conversion;  // when converted: what converting it found, at the input's positions
};
SessionOfInput read_session_of(const Input& input, const std::string& from = {},
                               PiVersion version = newest_pi_version(), const ReaderRegistry* readers = nullptr);

// The session tree pi reads from `input` (`pi-hydrate tree`), as `version`
// of pi does; an input of another format is converted first
// (read_session_of). Throws IoError when it cannot be read.
SessionTree read_session_tree(const Input& input, PiVersion version, const std::string& from = {});
SessionTree read_session_tree(const std::string& path, PiVersion version);

// Validates `input` as `pi-hydrate validate` does: a pi session as pi loads
// it; an input of another format by what converting it finds
// (read_session_of): its warnings, and an error for each thing that stops it.
FileReport validate_input(const Input& input, const ValidateOptions& options = {}, const std::string& from = {});

// What pi sends when it resumes a session (`pi-hydrate context`).
struct ContextOptions {
  PiVersion pi_version = newest_pi_version();
  std::string from;                    // what the input is (HydrateRequest::from); empty: found from its first lines
  std::optional<std::string> leaf_id;  // another branch: the one ending at this entry id (--leaf)
  std::optional<std::string> label;    // or at the entry with this label (--label)
};
struct ContextReport {
  std::string file;    // the input's name, as in diagnostics
  std::string format;  // what it was read as ("pi", "claude-code", ...)
  // An input of another format is converted first: what converting it found
  // (warnings; an error means it could not be converted, and nothing is
  // built), at the input's positions.
  Diagnostics conversion;
  bool not_converted = false;  // it could not be converted: there is no context
  ResumeContext context;       // context.loads is false when pi does not load the file
  Diagnostics errors;          // why not: pi's load errors, or a crash building the chosen branch
  Diagnostics bad_branch;      // --leaf or --label names no entry: nothing was built
};
// Reads `input` as options.pi_version of pi does (the header cwd is not
// checked: the session is usually meant for another machine); an input of
// another format is converted first (read_session_of). Throws IoError when
// it cannot be read.
ContextReport resume_context(const Input& input, const ContextOptions& options = {});

// The same for a request too big to hold: once everything but the messages
// is known, `head` gets the report (context.messages empty,
// context.message_count set), then `each` gets the messages in order. They
// are built in one pass into an unlinked temporary file in $TMPDIR (or
// /tmp), so memory does not grow with the messages. Neither is called when
// nothing is sent (not converted, not loaded, pi-ai throws, a bad branch):
// the report returned says why, as resume_context's does. The report
// returned never holds the messages.
ContextReport resume_context(const Input& input, const ContextOptions& options,
                             const std::function<void(const ContextReport&)>& head, const SentMessageSink& each);

}  // namespace pihydrate
