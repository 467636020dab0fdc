// The validator: runs the rule families over a session's pi view and sorts what they report.
#include "pihydrate/validator.h"

#include <algorithm>
#include <map>
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
  out_.push_back(std::move(d));
}

std::string quoted(std::string_view text) { return quote_for_message(text); }

FileReport validate_index(const SessionIndex& index, const ValidateOptions& options) {
  return validate_index(index, build_pi_view(index, options.pi_version), options);
}

FileReport validate_index(const SessionIndex& index, const PiView& view, const ValidateOptions& options) {
  Diagnostics all;
  RuleContext ctx(index, view, options, all);
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

  std::stable_sort(all.begin(), all.end(), [](const Diagnostic& a, const Diagnostic& b) {
    return std::make_tuple(a.line, a.column, static_cast<int>(a.code)) <
           std::make_tuple(b.line, b.column, static_cast<int>(b.code));
  });

  return summarize_findings(index.file, index.line_count, view.nodes.size(), std::move(all), options.level);
}

FileReport summarize_findings(const std::string& file, std::uint64_t lines, std::uint64_t entries, Diagnostics all,
                              Level level) {
  FileReport report;
  report.file = file;
  report.lines = lines;
  report.entries = entries;
  bool load_error = false, resume_error = false;
  for (const Diagnostic& d : all) {
    if (static_cast<int>(d.code) >= 900) report.complete = false;
    if (d.severity != Severity::kError) continue;
    load_error = load_error || d.level == Level::kLoad;
    resume_error = resume_error || d.level == Level::kResume;
  }
  report.loadable = !load_error;
  report.resumable = !load_error && !resume_error;
  // Every finding counts; at most kListedPerCode of one code are listed.
  constexpr std::size_t kListedPerCode = 100;
  std::map<int, std::size_t> listed, unlisted;
  for (Diagnostic& d : all) {
    if (static_cast<int>(d.level) > static_cast<int>(level)) continue;
    (d.severity == Severity::kError ? report.errors : report.warnings)++;
    if (listed[static_cast<int>(d.code)]++ >= kListedPerCode) {
      ++unlisted[static_cast<int>(d.code)];
      continue;
    }
    report.diagnostics.push_back(std::move(d));
  }
  for (const auto& [code, count] : unlisted) {
    Diagnostic d;
    d.code = static_cast<Code>(code);
    d.severity = Severity::kWarning;
    d.level = code_info(d.code).level;
    d.file = file;
    d.message = std::to_string(count) + " more " + code_name(d.code) + " findings like the ones above are not listed";
    report.diagnostics.push_back(std::move(d));
  }
  return report;
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
