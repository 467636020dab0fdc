// resume_context (pihydrate.h): an input as the pi session it stands for,
// indexed, pi's view of it, the branch asked for, and the request pi builds
// from it.
#include <memory>

#include "core/read_ahead_lines.h"
#include "hydrate/plan.h"
#include "jobs/session_of_input.h"
#include "pi/sent_message_spool.h"
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

// Where the messages go: kept in the report (no `each`), or streamed.
struct MessageOutput {
  const std::function<void(const ContextReport&)>* head = nullptr;
  const SentMessageSink* each = nullptr;
};

// The request pi builds from an indexed session.
ContextReport context_of(const SessionIndex& index, LineSource& lines, const ContextOptions& options,
                         const MessageOutput& output) {
  ReadAheadLines read_ahead(lines, index.file_size);  // a path's lines nearly always come in file order
  std::string scratch;
  const LineText line_text = [&](const Entry& e) { return std::string(read_ahead.read(e.offset, e.length, scratch)); };

  ContextReport report;
  report.file = index.file;
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
  if (verdict.loadable && view.loads()) {
    if (!output.each) {
      report.context = build_resume_context(index, view, line_text);
    } else {
      // One pass builds the messages into a spool, counting them and finding
      // whether pi-ai throws; then the head, and the messages from the spool.
      SentMessageSpool spool;
      report.context = build_resume_context(index, view, line_text, [&](SentMessage&& m) { spool.add(m); });
      if (report.context.request_error.empty()) {
        (*output.head)(report);
        spool.replay(*output.each);
      }
    }
  }
  if (!report.context.loads && report.errors.empty())
    report.errors.push_back(load_error(index, view, pi + " does not load this file: " + view.failure));
  return report;
}

}  // namespace

namespace {

ContextReport context_of_input(const Input& input, const ContextOptions& options, const MessageOutput& output) {
  const SessionOfInput of = read_session_of(input, options.from, options.pi_version);
  ContextReport report;
  if (!of.converted || of.conversion.ok) {
    IndexedSession session;
    IndexOptions index_options;
    index_options.keep_timestamps = false;  // no lint rule runs here
    index_session(of.session, index_options, session);
    // The head names the input as the report does, whatever the session is.
    std::function<void(const ContextReport&)> head;
    MessageOutput named = output;
    if (output.head) {
      head = [&](const ContextReport& r) {
        ContextReport copy = r;
        copy.file = input.name();
        copy.format = of.format;
        copy.conversion = of.conversion.report.diagnostics;
        (*output.head)(copy);
      };
      named.head = &head;
    }
    report = context_of(session.index, *session.lines, options, named);
  } else {
    report.context.version = options.pi_version;
    report.not_converted = true;
  }
  report.file = input.name();
  report.format = of.format;
  report.conversion = of.conversion.report.diagnostics;
  return report;
}

}  // namespace

ContextReport resume_context(const Input& input, const ContextOptions& options) {
  return context_of_input(input, options, MessageOutput{});
}

ContextReport resume_context(const Input& input, const ContextOptions& options,
                             const std::function<void(const ContextReport&)>& head, const SentMessageSink& each) {
  return context_of_input(input, options, MessageOutput{&head, &each});
}

}  // namespace pihydrate
