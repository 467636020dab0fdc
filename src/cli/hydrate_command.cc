// `pi-hydrate --session in.jsonl --cwd DIR -o out.jsonl`: options, input,
// output location, verification and the summary. The work is the library's.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <map>
#include <ostream>
#include <sstream>

#include <boost/filesystem.hpp>
#include <cxxopts.hpp>
#include <rapidjson/ostreamwrapper.h>
#include <rapidjson/writer.h>

#include "cli/commands.h"
#include "core/run_beside.h"
#include "pihydrate/cli.h"
#include "pihydrate/errors.h"
#include "pihydrate/hydrate.h"
#include "pihydrate/mapped_file.h"
#include "pihydrate/output_file.h"
#include "pihydrate/thread_export.h"

namespace pihydrate {
namespace {

namespace fs = boost::filesystem;

const char* kHydrateHelp = R"HELP(
Writes a clean, linear v3 session that `pi --session FILE` resumes with the
same context, in a new working directory. The input is read exactly as pi
reads it (skipped lines, v1/v2 migration, the last entry as leaf); what pi
would drop is reported as a warning with its line.

Exactly one output: -o FILE (or -o - for stdout), --session-dir DIR (writes
DIR/<timestamp>_<session id>.jsonl, pi's --session-dir layout) or
--agent-dir DIR (writes DIR/sessions/--<encoded cwd>--/<timestamp>_<id>.jsonl,
where `pi --continue` run in --cwd finds it). With a directory output the
written path is printed on stdout:  pi --session "$(pi-hydrate ...)"

The output is written to a temporary file next to the target, checked with
the validator (--no-verify skips that), fsynced and renamed. Nothing is left
behind on failure. An existing target is refused without --force, and so is
the input itself. Created files have mode 0600.

Tool calls (--tools): pair (default) keeps toolCall/toolResult structure and
repairs it so every call is followed by its results; flatten turns calls and
results into plain text, each result cut to --flatten-max-chars.

Exit codes: 0 written; 1 the input cannot be hydrated, or the output failed
verification (nothing written); 2 usage or I/O failure, or a refused target.

Examples:
  pi-hydrate --session old.jsonl --cwd /sandbox -o new.jsonl
  pi --session "$(pi-hydrate --session old.jsonl --cwd "$PWD" --agent-dir ~/.pi/agent)"
  pi-hydrate --session s.jsonl --cwd /work --label before-refactor --tools flatten -o -
)HELP";

// PH904: the input changed while pi-hydrate read it.
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

int fail_usage(std::ostream& err, const std::string& message) {
  err << "pi-hydrate: error: " << message << "\nRun 'pi-hydrate --help' for the options.\n";
  return kExitUsage;
}

// At most 100 findings of one code are printed; the rest are counted.
// Each report goes to stderr in one write: stderr is unbuffered, and a
// write per piece (a byte at a time for JSON) took milliseconds.
void print_diagnostics(const Diagnostics& diagnostics, std::ostream& err) {
  std::ostringstream text;
  std::map<int, std::size_t> seen;
  for (const Diagnostic& d : diagnostics)
    if (seen[static_cast<int>(d.code)]++ < 100) write_diagnostic_text(d, text);
  for (const auto& [code, count] : seen)
    if (count > 100)
      text << "pi-hydrate: " << (count - 100) << " more " << code_name(static_cast<Code>(code)) << " findings not listed\n";
  err << text.str();
}

void print_summary_text(const HydrateReport& r, const std::string& target, std::ostream& err) {
  std::ostringstream text;
  text << "pi-hydrate: wrote " << target << ": " << r.entries_written << " lines from " << r.entries_read
       << " entries read (session " << r.session_id << ")";
  if (r.lines_pi_drops) text << "; pi would have dropped " << r.lines_pi_drops << " line(s)";
  text << "\n";
  if (!r.repairs.empty()) {
    text << "pi-hydrate: repairs:";
    for (const auto& [kind, count] : r.repairs) text << " " << kind << "=" << count;
    text << "\n";
  }
  err << text.str();
}

void print_summary_json(const HydrateReport& r, const std::string& target, bool ok, std::ostream& err) {
  std::ostringstream text;
  rapidjson::OStreamWrapper os(text);
  JsonWriter w(os);
  w.StartObject();
  w.Key("ok");
  w.Bool(ok);
  w.Key("output");
  w.String(target.c_str(), static_cast<rapidjson::SizeType>(target.size()));
  w.Key("sessionId");
  w.String(r.session_id.c_str(), static_cast<rapidjson::SizeType>(r.session_id.size()));
  w.Key("entriesRead");
  w.Uint64(r.entries_read);
  w.Key("linesWritten");
  w.Uint64(r.entries_written);
  w.Key("linesPiWouldDrop");
  w.Uint64(r.lines_pi_drops);
  w.Key("repairs");
  w.StartObject();
  for (const auto& [kind, count] : r.repairs) {
    w.Key(kind.c_str());
    w.Uint64(count);
  }
  w.EndObject();
  w.Key("diagnostics");
  w.StartArray();
  for (const Diagnostic& d : r.diagnostics) write_diagnostic_json(d, w);
  w.EndArray();
  w.EndObject();
  os.Flush();
  text << "\n";
  err << text.str();
}

// An unlinked temporary file in $TMPDIR (or /tmp): nothing is left behind,
// whatever happens to the process.
int make_unlinked_temp(const std::string& what) {
  const char* tmp = std::getenv("TMPDIR");
  std::string path = std::string(tmp && *tmp ? tmp : "/tmp") + "/pi-hydrate-spool-XXXXXX";
  int fd = ::mkstemp(path.data());
  if (fd < 0) throw IoError("cannot create a temporary file for " + what + ": " + std::strerror(errno));
  ::unlink(path.c_str());
  return fd;
}

// Standard input is read twice (index, then copy), so it is spooled first to
// an unlinked temporary file.
int spool_stdin(std::istream& in) {
  int fd = make_unlinked_temp("standard input");
  struct Closer {
    int& fd;
    bool armed = true;
    ~Closer() {
      if (armed) ::close(fd);
    }
  } closer{fd};
  std::vector<char> chunk(1 << 20);
  while (in.read(chunk.data(), static_cast<std::streamsize>(chunk.size())) || in.gcount() > 0) {
    const char* p = chunk.data();
    std::size_t left = static_cast<std::size_t>(in.gcount());
    while (left > 0) {
      ssize_t n = ::write(fd, p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw IoError(std::string("cannot spool standard input: ") + std::strerror(errno));
      p += n;
      left -= static_cast<std::size_t>(n);
    }
  }
  if (::lseek(fd, 0, SEEK_SET) < 0) throw IoError(std::string("cannot rewind spooled input: ") + std::strerror(errno));
  closer.armed = false;
  return fd;
}

std::string read_all(int fd, const std::string& name) {
  std::string bytes;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) bytes.reserve(static_cast<std::size_t>(st.st_size) + 1);
  std::vector<char> chunk(1 << 20);
  for (;;) {
    ssize_t n = ::read(fd, chunk.data(), chunk.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw IoError("cannot read " + name + ": " + std::strerror(errno));
    if (n == 0) break;
    bytes.append(chunk.data(), static_cast<std::size_t>(n));
  }
  return bytes;
}

// Directories pi-hydrate creates for its output are removed again, if still
// empty, when nothing is written: a failed run leaves the tree as it was.
class CreatedDirectories {
 public:
  // Creates `dir` and its missing parents; false with `ec` set on failure.
  bool create(const fs::path& dir, boost::system::error_code& ec) {
    fs::path missing = dir;
    std::vector<fs::path> chain;
    while (!missing.empty() && !fs::exists(missing, ec)) {
      chain.push_back(missing);
      missing = missing.parent_path();
    }
    fs::create_directories(dir, ec);
    if (!ec) created_ = std::move(chain);  // deepest first
    return !ec;
  }
  void keep() { created_.clear(); }
  const std::vector<fs::path>& created() const { return created_; }  // deepest first
  ~CreatedDirectories() {
    boost::system::error_code ignored;
    for (const fs::path& dir : created_)
      if (fs::is_empty(dir, ignored)) fs::remove(dir, ignored);
  }

 private:
  std::vector<fs::path> created_;
};

// A mapped input that shrinks while it is read raises SIGBUS on the next
// access to a page past its new end. That is the input changing mid-read
// (PH904), reported as such (in the --report format), not a crash. The
// handler may only use signal-safe calls: it writes the prepared message,
// removes the directories made for the output (still empty: nothing is
// written while the export is converted) and exits, once, whichever of the
// threads reading the export faulted first.
char g_sigbus_message[4096];
std::size_t g_sigbus_message_size = 0;
char g_sigbus_dirs[8192];  // NUL-separated paths, deepest first, ending with an empty one
std::atomic<bool> g_sigbus_reported{false};  // lock-free, so signal-safe
static_assert(std::atomic<bool>::is_always_lock_free);
extern "C" void report_truncated_input(int) {
  // Two threads reading the export may both fault: one reports and exits,
  // the other waits for that exit.
  if (g_sigbus_reported.exchange(true))
    for (;;) ::pause();
  ssize_t ignored = ::write(2, g_sigbus_message, g_sigbus_message_size);
  (void)ignored;
  for (const char* dir = g_sigbus_dirs; *dir; dir += std::strlen(dir) + 1) ::rmdir(dir);
  ::_exit(kExitFindings);
}

class TruncationGuard {
 public:
  TruncationGuard(const std::string& display, bool json, const CreatedDirectories& dirs) {
    const Diagnostic d = input_changed(display, kInputShrank);
    std::ostringstream message;
    if (json) {
      HydrateReport failed;
      failed.diagnostics.push_back(d);
      print_summary_json(failed, "", false, message);
    } else {
      write_diagnostic_text(d, message);
      message << "pi-hydrate: nothing written\n";
    }
    const std::string text = message.str();
    g_sigbus_message_size = std::min(text.size(), sizeof g_sigbus_message);
    std::memcpy(g_sigbus_message, text.data(), g_sigbus_message_size);
    std::size_t used = 0;
    for (const fs::path& dir : dirs.created()) {
      const std::string path = dir.string();
      if (used + path.size() + 2 > sizeof g_sigbus_dirs) break;  // the rest stays (very deep paths only)
      std::memcpy(g_sigbus_dirs + used, path.c_str(), path.size() + 1);
      used += path.size() + 1;
    }
    g_sigbus_dirs[used] = '\0';
    struct sigaction sa {};
    sa.sa_handler = report_truncated_input;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGBUS, &sa, &previous_);
  }
  ~TruncationGuard() { ::sigaction(SIGBUS, &previous_, nullptr); }
  TruncationGuard(const TruncationGuard&) = delete;
  TruncationGuard& operator=(const TruncationGuard&) = delete;

 private:
  struct sigaction previous_ {};
};

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// A hydration builds an index, a plan and a verification index one after
// another, each freed before the next is built. glibc hands the free top of
// its heap back to the kernel at once, and gives each thread an arena of its
// own: the next phase's memory then comes back a page fault at a time, and
// faults are what a busy virtual machine slows most. One arena keeping 16 MiB
// free at its top: a 256 MiB thread hydration took 27,000 page faults instead
// of 40,600 and about 6% less time, and the 1 GiB peaks stayed within their
// bounds. Not for validate, whose 1 GiB peak would pass 64 MiB.
void keep_freed_memory_for_the_next_phase() {
#if defined(__GLIBC__)
  mallopt(M_ARENA_MAX, 1);
  mallopt(M_TOP_PAD, 16 << 20);
#endif
}

}  // namespace

int run_hydrate(const std::vector<std::string>& args, std::istream& in, std::ostream& out, std::ostream& err) {
  keep_freed_memory_for_the_next_phase();  // before any thread is started
  cxxopts::Options options("pi-hydrate", "Hydrate a pi session into a linear v3 session for a new working directory.");
  options.custom_help("(--thread FILE|- | --session FILE|-) --cwd DIR (-o FILE|- | --session-dir DIR | --agent-dir DIR) [options]");
  options.add_options("Input and output")
      ("thread", "Thread export to hydrate (docs/thread-export.md), or - for stdin", cxxopts::value<std::string>())
      ("session", "pi session to hydrate (v1, v2 or v3), or - for stdin", cxxopts::value<std::string>())
      ("cwd", "Working directory for the new session (made absolute)", cxxopts::value<std::string>())
      ("o,output", "Output file, or - for stdout", cxxopts::value<std::string>())
      ("session-dir", "Write DIR/<timestamp>_<session id>.jsonl and print its path", cxxopts::value<std::string>())
      ("agent-dir", "Write into pi's layout under DIR/sessions and print the path", cxxopts::value<std::string>())
      ("force", "Replace an existing output file")
      ("allow-missing-cwd", "Do not require --cwd to exist")
      ("no-verify", "Do not check the output with the validator before writing it")
      ("report", "Summary on stderr: text or json", cxxopts::value<std::string>()->default_value("text"));
  options.add_options("Conversation")
      ("leaf", "Write the branch ending at this entry id instead of pi's leaf", cxxopts::value<std::string>())
      ("label", "Write the branch ending at the entry with this label", cxxopts::value<std::string>())
      ("tools", "Tool calls: pair or flatten", cxxopts::value<std::string>()->default_value("pair"))
      ("flatten-max-chars", "With --tools flatten: longest result text kept", cxxopts::value<std::size_t>()->default_value("4000"))
      ("thinking", "Thinking blocks: keep or drop", cxxopts::value<std::string>()->default_value("keep"))
      ("prune-compacted", "Leave out entries the latest compaction hides from the context")
      ("session-id", "Session id of the output (pi's session-id rule)", cxxopts::value<std::string>())
      ("timestamp", "Header timestamp of the output (ISO-8601)", cxxopts::value<std::string>())
      ("partial", "Thread: an interrupted chunk stream is dropped, kept (aborted) or kept as text: drop|keep|text", cxxopts::value<std::string>()->default_value("drop"))
      ("no-trailer", "Thread: do not append session_info / model_change / thinking_level_change")
      ("pi-version", "Read the input as this pi version does: 0.78 or 1.5", cxxopts::value<std::string>()->default_value("1.5"))
      ("h,help", "Print this help");
  // The same memory caps as validate (docs/reliability.md); they apply to the
  // input, to a thread's converted session and to the verified output.
  options.add_options("Limits")
      ("max-line-bytes", "Longest session line read, in bytes", cxxopts::value<std::size_t>()->default_value("268435456"))
      ("max-depth", "Deepest JSON nesting read", cxxopts::value<std::size_t>()->default_value("512"))
      ("max-entries", "Most entries read", cxxopts::value<std::size_t>()->default_value("50000000"));

  std::vector<const char*> argv{"pi-hydrate"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  cxxopts::ParseResult parsed;
  try {
    parsed = options.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const cxxopts::exceptions::exception& e) {
    return fail_usage(err, e.what());
  }
  if (parsed.count("help")) {
    out << options.help() << kHydrateHelp;
    return kExitOk;
  }
  if (!parsed.unmatched().empty()) return fail_usage(err, "unexpected argument '" + parsed.unmatched()[0] + "'");
  if (parsed.count("session") + parsed.count("thread") != 1)
    return fail_usage(err, "give exactly one input: --thread FILE (a thread export) or --session FILE (a pi session)");
  const bool is_thread = parsed.count("thread") > 0;
  ThreadOptions to;
  const std::string partial = parsed["partial"].as<std::string>();
  if (partial == "drop") to.partial = PartialPolicy::kDrop;
  else if (partial == "keep") to.partial = PartialPolicy::kKeep;
  else if (partial == "text") to.partial = PartialPolicy::kText;
  else return fail_usage(err, "--partial must be drop, keep or text, not '" + partial + "'");
  to.trailer = parsed.count("no-trailer") == 0;
  if (!parsed.count("cwd")) return fail_usage(err, "--cwd DIR is required: the working directory of the new session");
  int outputs = static_cast<int>(parsed.count("output") + parsed.count("session-dir") + parsed.count("agent-dir"));
  if (outputs != 1) return fail_usage(err, "give exactly one of -o FILE, --session-dir DIR, --agent-dir DIR");

  HydrateOptions ho;
  const std::string tools = parsed["tools"].as<std::string>();
  if (tools == "pair") ho.tools = ToolPolicy::kPair;
  else if (tools == "flatten") ho.tools = ToolPolicy::kFlatten;
  else return fail_usage(err, "--tools must be pair or flatten, not '" + tools + "'");
  const std::string thinking = parsed["thinking"].as<std::string>();
  if (thinking == "keep") ho.thinking = ThinkingPolicy::kKeep;
  else if (thinking == "drop") ho.thinking = ThinkingPolicy::kDrop;
  else return fail_usage(err, "--thinking must be keep or drop, not '" + thinking + "'");
  const std::string report_format = parsed["report"].as<std::string>();
  if (report_format != "text" && report_format != "json")
    return fail_usage(err, "--report must be text or json, not '" + report_format + "'");
  auto version = parse_pi_version(parsed["pi-version"].as<std::string>());
  if (!version) return fail_usage(err, "--pi-version must be 0.78 or 1.5");
  ho.pi_version = *version;
  ho.flatten_max_chars = parsed["flatten-max-chars"].as<std::size_t>();
  ho.index.reader.max_line_bytes = parsed["max-line-bytes"].as<std::size_t>();
  if (ho.index.reader.max_line_bytes > kMaxLineBytesLimit)
    return fail_usage(err, "--max-line-bytes must be at most " + std::to_string(kMaxLineBytesLimit) + " (512 MiB)");
  ho.index.max_depth = std::max<std::size_t>(1, parsed["max-depth"].as<std::size_t>());
  ho.index.max_entries = parsed["max-entries"].as<std::size_t>();
  to.max_depth = ho.index.max_depth;
  ho.prune_compacted = parsed.count("prune-compacted") > 0;
  if (parsed.count("leaf") && parsed.count("label")) return fail_usage(err, "give --leaf or --label, not both");
  if (parsed.count("leaf")) ho.leaf_id = parsed["leaf"].as<std::string>();
  if (parsed.count("label")) ho.label = parsed["label"].as<std::string>();
  if (parsed.count("session-id")) {
    ho.session_id = parsed["session-id"].as<std::string>();
    if (!is_valid_session_id(*ho.session_id))
      return fail_usage(err, "--session-id '" + *ho.session_id +
                                 "' must be non-empty, contain only alphanumeric characters, '-', '_' and '.', and "
                                 "start and end with an alphanumeric character (pi's rule)");
  }
  if (parsed.count("timestamp")) {
    ho.timestamp = parsed["timestamp"].as<std::string>();
    if (!is_iso8601(*ho.timestamp)) return fail_usage(err, "--timestamp must be ISO-8601, e.g. 2026-01-02T03:04:05.678Z");
  }
  const bool force = parsed.count("force") > 0;
  const bool allow_missing_cwd = parsed.count("allow-missing-cwd") > 0;

  boost::system::error_code ec;
  fs::path cwd = fs::absolute(parsed["cwd"].as<std::string>()).lexically_normal();
  std::string cwd_text = cwd.string();
  // lexically_normal keeps ".." above the root ("/../x"); the kernel and pi
  // read it as "/x", and so does the header.
  while (cwd_text.rfind("/..", 0) == 0 && (cwd_text.size() == 3 || cwd_text[3] == '/'))
    cwd_text.erase(0, 3);
  if (cwd_text.empty()) cwd_text = "/";
  cwd = cwd_text;
  if (cwd_text.size() > 1 && cwd_text.back() == '/') cwd_text.pop_back();
  if (cwd_text.size() > 2 && cwd_text.substr(cwd_text.size() - 2) == "/.") cwd_text.resize(cwd_text.size() - 2);
  ho.cwd = cwd_text;
  if (!allow_missing_cwd && !fs::is_directory(cwd, ec))
    return fail_usage(err, "--cwd " + cwd_text + " is not an existing directory (pass --allow-missing-cwd to write it anyway)");

  // The input.
  const std::string input = parsed[is_thread ? "thread" : "session"].as<std::string>();
  Fd input_fd;
  if (input == "-") {
    input_fd.fd = spool_stdin(in);
  } else {
    input_fd.fd = ::open(input.c_str(), O_RDONLY | O_CLOEXEC);
    if (input_fd.fd < 0) {
      err << "pi-hydrate: error: cannot open " << input << ": " << std::strerror(errno) << "\n";
      return kExitUsage;
    }
    struct stat st {};
    if (::fstat(input_fd.fd, &st) == 0 && S_ISDIR(st.st_mode)) {
      err << "pi-hydrate: error: " << input << " is a directory\n";
      return kExitUsage;
    }
  }
  const std::string display = input == "-" ? "<stdin>" : input;
  // The input must not change while it is read: a session's pass 2 copies
  // lines by the offsets of pass 1 (pi itself rewrites v1/v2 files when it
  // loads them), and a thread export is read in place. The verification
  // trusts the long strings pass 1 checked, too. Size, mtime and ctime are
  // compared (ctime cannot be set back, as mtime can).
  struct stat before {};
  const bool check_unchanged = input != "-" && ::fstat(input_fd.fd, &before) == 0;
  // Where the output goes: its directory now, its name once the session id is known.
  std::string out_dir, out_file;
  bool print_path = false, to_stdout = false;
  if (parsed.count("output")) {
    std::string o = parsed["output"].as<std::string>();
    if (o == "-") {
      to_stdout = true;
      const char* tmp = std::getenv("TMPDIR");
      out_dir = tmp && *tmp ? tmp : "/tmp";
    } else {
      out_dir = fs::absolute(o).parent_path().string();
      out_file = o;  // as given: messages and the summary name it the way the user did
      check_output_target(out_file, input, force);
    }
  } else if (parsed.count("session-dir")) {
    out_dir = fs::absolute(parsed["session-dir"].as<std::string>()).lexically_normal().string();
    print_path = true;
  } else {
    fs::path agent = fs::absolute(parsed["agent-dir"].as<std::string>()).lexically_normal();
    out_dir = (agent / "sessions" / encode_cwd_for_agent_dir(cwd_text)).string();
    print_path = true;
  }
  CreatedDirectories created_dirs;
  if (!to_stdout) {
    created_dirs.create(out_dir, ec);
    if (ec) {
      err << "pi-hydrate: error: cannot create " << out_dir << ": " << ec.message() << "\n";
      return kExitUsage;
    }
  }

  // The input's long strings are noted, so verifying the output can step
  // over those it carries unchanged (HydrateReport::carried).
  const bool verify = parsed.count("no-verify") == 0;
  IndexOptions input_index = ho.index;
  input_index.record_long_strings = verify;
  // A thread export becomes a session first; both then take the same path.
  SessionIndex index;
  std::unique_ptr<LineSource> lines;
  ConvertedThread thread;
  Fd spool;
  if (is_thread) {
    // The converted session goes to a temporary file, and the export's bytes
    // are freed before the session is read: a big export is never held twice.
    spool.fd = make_unlinked_temp("the converted thread");
    // Page drops the indexer's thread carries out (below): declared before
    // the indexer, so it outlives the thread, which may call it to the end.
    std::unique_ptr<DeferredRelease> deferred;
    // The converter keeps one core busy; the other writes and indexes what it converts.
    SpoolIndexer spool_indexer(spool.fd, display, input_index);
    to.spool = [&spool_indexer](SpoolBlock& block) { spool_indexer.append(block); };
    if (auto mapped = MappedFile::map(input_fd.fd)) {
      // What a line copies unchanged from the export is read from the
      // export's file again instead of from the spool: the spool holds only
      // the rest. (An export read whole, from a pipe say, cannot be read twice.)
      to.borrow_from_export = true;
      // Strings borrowed from the export were checked once: the indexer steps over them.
      to.export_strings = [&spool_indexer](const LongValues& strings) { spool_indexer.know_export_strings(strings); };
      // Read in place: pages the converter is done with leave memory, so
      // the peak does not follow the export's size.
      TruncationGuard guard(display, report_format == "json", created_dirs);
      to.residency = mapped.get();
      // While the converter builds lines, the indexer drops the pages; it
      // stops before the export is unmapped, however this block is left.
      deferred = std::make_unique<DeferredRelease>(*mapped);
      spool_indexer.after_each_block([released = deferred.get()] { released->carry_out(); });
      struct StopBeforeUnmap {
        DeferredRelease& released;
        ~StopBeforeUnmap() { released.stop(); }
      } stop_before_unmap{*deferred};
      to.lines_residency = deferred.get();
      thread = convert_thread_export(mapped->data(), mapped->size(), display, to);
      to.residency = to.lines_residency = nullptr;
    } else {
      std::string bytes = read_all(input_fd.fd, display);
      thread = convert_thread_export(bytes, display, to);
    }
    if (!thread.ok()) {
      if (report_format == "json") {
        HydrateReport failed;
        failed.diagnostics = thread.diagnostics;
        print_summary_json(failed, "", false, err);
      } else {
        print_diagnostics(thread.diagnostics, err);
        err << "pi-hydrate: nothing written\n";
      }
      return kExitFindings;
    }
    if (!ho.session_id) ho.session_id = thread.session_id;
    if (!ho.timestamp) ho.timestamp = thread.timestamp;
    index = spool_indexer.finish();
    to.spool = nullptr;
    lines = make_spool_line_source(spool.fd, input_fd.fd, spool_indexer.take_layout(), display);
  } else {
    index = build_file_index(input_fd.fd, display, input_index);
    lines = make_fd_line_source(input_fd.fd, display);
  }
  OutputFile output(out_dir);
  HydrateReport report;
  bool ok;
  try {
    ok = hydrate_session(index, *lines, ho, output, report);
  } catch (const InputShrankError&) {
    // Cut short between the index and the second read of its lines.
    report.diagnostics.push_back(input_changed(display, kInputShrank));
    ok = false;
  }
  struct stat after {};
  if (ok && check_unchanged && ::fstat(input_fd.fd, &after) == 0 &&
      (after.st_size != before.st_size || after.st_mtim.tv_sec != before.st_mtim.tv_sec ||
       after.st_mtim.tv_nsec != before.st_mtim.tv_nsec || after.st_ctim.tv_sec != before.st_ctim.tv_sec ||
       after.st_ctim.tv_nsec != before.st_ctim.tv_nsec)) {
    report.diagnostics.push_back(
        input_changed(display, "the input changed while it was being read; nothing written (run again)"));
    ok = false;
  }
  if (is_thread) {
    // Point messages at the thread entries the converted lines came from.
    for (Diagnostic& d : report.diagnostics) {
      if (d.line == 0 || d.line > thread.origins.size()) continue;
      const ThreadOrigin& o = thread.origins[d.line - 1];
      const std::string_view id = thread.id_of(o);
      d.message = ConvertedThread::path_of(o) + (id.empty() ? "" : " (id " + quote_for_message(std::string(id)) + ")") + ": " + d.message;
      d.line = o.line;
      d.column = o.column;
    }
    Diagnostics all = thread.diagnostics;
    all.insert(all.end(), report.diagnostics.begin(), report.diagnostics.end());
    report.diagnostics = std::move(all);
    for (const auto& [kind, count] : thread.repairs) report.repairs[kind] += count;
    report.entries_read = thread.entry_count;
  }
  if (ok && print_path) {
    // A crafted session id or timestamp must not leave the directory.
    std::string name = session_file_name(report.timestamp, report.session_id);
    if (name.find('/') != std::string::npos || name.find('\\') != std::string::npos || name.rfind("..", 0) == 0)
      throw IoError("refusing the file name '" + name + "' derived from the input");
    out_file = (fs::path(out_dir) / name).string();
    check_output_target(out_file, input, force);
  }
  // The input's index is not needed any more: it is released before the
  // output is indexed, so the two are never in memory at once.
  index = SessionIndex();
  const LongStrings carried_strings = std::move(report.carried);
  const KnownLongStrings carried(carried_strings);
  lines.reset();
  if (ok) {
    output.flush();
    if (verify) {
      // The file is synced to disk while it is verified: the fsync mostly
      // waits for the disk, and the verification needs the cores. A file
      // that fails verification is removed all the same.
      std::exception_ptr sync_error;
      run_beside(
          [&] {
            try {
              output.finish();
            } catch (...) {
              sync_error = std::current_exception();
            }
          },
          [&] {
            // The written file is read back (from the page cache) and
            // validated as pi would load it.
            ValidateOptions vo;
            vo.pi_version = ho.pi_version;
            vo.check_cwd = !allow_missing_cwd;
            IndexOptions output_index = ho.index;
            output_index.known_strings = &carried;
            SessionIndex written = build_file_index(output.fd(), to_stdout ? "<output>" : out_file, output_index);
            FileReport verdict = validate_index(written, vo);
            for (Diagnostic& d : verdict.diagnostics) {
              if (d.severity != Severity::kError) continue;
              d.message = "output failed verification: " + d.message;
              report.diagnostics.push_back(d);
              ok = false;
            }
          });
      // A file that failed verification is not written: how its sync went does not matter.
      if (sync_error && ok) std::rethrow_exception(sync_error);
    }
  }
  if (ok) {
    if (to_stdout) {
      output.copy_to(out);
    } else {
      output.commit(out_file, force);
      created_dirs.keep();
    }
  }
  if (report_format == "json") {
    print_summary_json(report, to_stdout ? "-" : out_file, ok, err);
  } else {
    print_diagnostics(report.diagnostics, err);
    if (ok) print_summary_text(report, to_stdout ? "standard output" : out_file, err);
    else err << "pi-hydrate: nothing written\n";
  }
  if (!ok) return kExitFindings;
  if (print_path) out << out_file << "\n";
  return kExitOk;
}

}  // namespace pihydrate
