// The validator: runs the rule families over a session's pi view and sorts what they report.
#include "pihydrate/validator.h"

#include <algorithm>
#include <stdexcept>
#include <tuple>

#include "validate/rules.h"

namespace pihydrate {

void RuleContext::report(Code code, Severity severity, std::uint64_t line, std::uint64_t column, std::string message,
                         std::string hint) {
  report_at_level(code, severity, code_info(code).level, line, column, std::move(message), std::move(hint));
}

void RuleContext::report_at_level(Code code, Severity severity, Level level, std::uint64_t line, std::uint64_t column,
                                  std::string message, std::string hint) {
  Diagnostic d;
  d.code = code;
  d.severity = severity;
  d.level = level;
  d.file = index.file;
  d.line = line;
  d.column = line == 0 ? 0 : std::max<std::uint64_t>(column, 1);
  d.message = std::move(message);
  d.hint = std::move(hint);
  out_.add(std::move(d));
}

std::string quoted(std::string_view text) { return quote_for_message(text); }

FileReport validate_index(const SessionIndex& index, const ValidateOptions& options) {
  return validate_index(index, build_pi_view(index, options.pi_version), options);
}

namespace {

// The report of what `findings` gathered: verdicts and counts from all of
// them; listed, the findings kept (sorted by position when `by_position`),
// then a summary per code of those not listed.
FileReport report_of(const std::string& file, std::uint64_t lines, std::uint64_t entries, Findings& findings,
                     bool by_position) {
  FileReport report;
  report.file = file;
  report.lines = lines;
  report.entries = entries;
  report.complete = !findings.limit_hit();
  report.loadable = !findings.any_error_at(Level::kLoad);
  report.resumable = report.loadable && !findings.any_error_at(Level::kResume);
  report.errors = findings.errors();
  report.warnings = findings.warnings();
  report.diagnostics = findings.take_kept();
  if (by_position) {
    std::stable_sort(report.diagnostics.begin(), report.diagnostics.end(),
                     [](const Diagnostic& a, const Diagnostic& b) {
                       return std::make_tuple(a.line, a.column, static_cast<int>(a.code)) <
                              std::make_tuple(b.line, b.column, static_cast<int>(b.code));
                     });
  }
  findings.append_summaries(report.diagnostics);
  return report;
}

}  // namespace

FileReport validate_index(const SessionIndex& index, const PiView& view, const ValidateOptions& options) {
  // Every finding counts; at most kListedPerCode of one code are kept, the
  // first by position, so a file of a million bad entries costs a hundred.
  Findings findings(options.level);
  RuleContext ctx(index, view, options, findings);
  check_file_rules(ctx);
  check_tree_rules(ctx);
  if (options.content_rules) {
    check_message_rules(ctx);
    // Every lint finding is at lint level: below it none would be reported.
    // Lint rules read the timestamps' text, which an index may leave out.
    if (options.level == Level::kLint) {
      if (!index.timestamps_kept)
        throw std::logic_error("validate_index: lint level on an index built without keep_timestamps");
      check_lint_rules(ctx);
    }
  }
  return report_of(index.file, index.line_count, view.nodes.size(), findings, /*by_position=*/true);
}

FileReport summarize_findings(const std::string& file, std::uint64_t lines, std::uint64_t entries, Diagnostics all,
                              Level level) {
  Findings findings(level);
  findings.add_all(std::move(all));
  return report_of(file, lines, entries, findings, /*by_position=*/false);
}

IndexOptions index_options_for(const ValidateOptions& options) {
  IndexOptions index = options.index;
  index.keep_timestamps = options.level == Level::kLint && options.content_rules;
  return index;
}

FileReport validate_source(ByteSource& source, const std::string& display_name, const ValidateOptions& options) {
  SessionIndex index = build_session_index(source, display_name, index_options_for(options));
  return validate_index(index, options);
}

}  // namespace pihydrate
