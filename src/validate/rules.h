// Shared plumbing for the rule families. Each family looks at the index and
// the pi view and reports Diagnostics; none of them reads the file again.
#pragma once

#include <string>

#include "pihydrate/findings.h"
#include "pihydrate/pi_view.h"
#include "pihydrate/validator.h"

namespace pihydrate {

class RuleContext {
 public:
  RuleContext(const SessionIndex& index_in, const PiView& view_in, const ValidateOptions& options_in, Findings& out)
      : index(index_in), view(view_in), options(options_in), out_(out) {}

  const SessionIndex& index;
  const PiView& view;
  const ValidateOptions& options;

  // What the pi version validated against does differently, and how messages name it ("pi 1.5").
  const PiProfile& pi() const { return pi_profile(options.pi_version); }
  std::string pi_name() const { return std::string("pi ") + pi().name; }
  const Entry& node_entry(std::int64_t node) const { return view.entry(index, static_cast<std::uint32_t>(node)); }
  std::uint64_t node_line(std::int64_t node) const { return node_entry(node).line; }

  void report(Code code, Severity severity, std::uint64_t line, std::uint64_t column, std::string message,
              std::string hint);
  // Same, with the level overridden (a code whose level depends on pi's version).
  void report_at_level(Code code, Severity severity, Level level, std::uint64_t line, std::uint64_t column,
                       std::string message, std::string hint);

 private:
  Findings& out_;
};

// Quotes a value for a message, shortened so one diagnostic stays one line.
std::string quoted(std::string_view text);

void check_file_rules(RuleContext& ctx);     // lines, encoding, header, cwd, version
void check_tree_rules(RuleContext& ctx);     // ids, parents, cycles, leaf
void check_message_rules(RuleContext& ctx);  // messages, context, tool pairing
void check_lint_rules(RuleContext& ctx);     // fixture conventions; every finding at lint level (run only then)

}  // namespace pihydrate
