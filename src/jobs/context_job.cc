// resume_context (pihydrate.h): a session indexed, pi's view of it, the
// branch asked for, and the request pi builds from it.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iterator>
#include <memory>

#include "hydrate/plan.h"
#include "jobs/job_files.h"
#include "pihydrate/errors.h"
#include "pihydrate/pihydrate.h"

namespace pihydrate {
namespace {

Diagnostic load_error(const SessionIndex& index, const PiView& view, std::string message) {
  Diagnostic d;
  d.code = Code::kMessageMissing;
  d.severity = Severity::kError;
  d.level = Level::kLoad;
  d.file = index.file;
  d.line = view.failure_line;
  d.column = view.failure_line ? 1 : 0;
  d.message = std::move(message);
  return d;
}

}  // namespace

ContextReport resume_context(const Input& input, const ContextOptions& options) {
  // The index keeps positions: the path's lines are read again, from the
  // file or from the bytes.
  Fd file;
  SessionIndex index;
  std::unique_ptr<LineSource> lines;
  if (input.kind() == Input::Kind::kFile) {
    file.fd = ::open(input.name().c_str(), O_RDONLY | O_CLOEXEC);
    if (file.fd < 0) throw IoError("cannot open " + input.name() + ": " + std::strerror(errno));
    index = build_file_index(file.fd, input.name());
    lines = make_fd_line_source(file.fd, input.name());
  } else {
    std::string bytes = input.kind() == Input::Kind::kBytes ? input.data()
                                                            : std::string(std::istreambuf_iterator<char>(*input.in()),
                                                                          std::istreambuf_iterator<char>());
    auto source = make_memory_source(bytes);
    index = build_session_index(*source, input.name());
    lines = make_memory_line_source(bytes);  // a copy: the index was read from `bytes`
  }
  const LineText line_text = [&lines](const Entry& e) {
    std::string scratch;
    return std::string(lines->read(e.offset, e.length, scratch));
  };

  ContextReport report;
  report.file = input.name();
  report.context.version = options.pi_version;
  PiView view = build_pi_view(index, options.pi_version);
  ValidateOptions vo;
  vo.level = Level::kLoad;
  vo.pi_version = options.pi_version;
  vo.check_cwd = false;
  const FileReport verdict = validate_index(index, view, vo);
  for (const Diagnostic& d : verdict.diagnostics)
    if (d.severity == Severity::kError) report.errors.push_back(d);
  const std::string pi = "pi " + std::string(pi_version_name(options.pi_version));

  if (verdict.loadable && view.loads() && (options.leaf_id || options.label)) {
    HydrateOptions branch_options;
    branch_options.pi_version = options.pi_version;
    branch_options.leaf_id = options.leaf_id;
    branch_options.label = options.label;
    HydrateReport branch;
    std::vector<std::uint32_t> branch_path;
    if (!select_path(index, view, branch_options, branch_path, branch)) {
      report.bad_branch = std::move(branch.diagnostics);
      return report;
    }
    view.path = std::move(branch_path);
    rebuild_context(index, view);
    if (!view.loads())
      report.errors.push_back(load_error(index, view, pi + " crashes building this branch's context: " + view.failure));
  }
  if (verdict.loadable && view.loads()) report.context = build_resume_context(index, view, line_text);
  if (!report.context.loads && report.errors.empty())
    report.errors.push_back(load_error(index, view, pi + " does not load this file: " + view.failure));
  return report;
}

}  // namespace pihydrate
