// Conventions for hand-written fixtures: the formats pi itself writes.
#include <cctype>
#include <string>

#include "pihydrate/formats.h"
#include "validate/rules.h"

namespace pihydrate {
namespace {

bool is_epoch_ms(std::string_view number) {
  if (number.empty() || number.size() > 16) return false;
  for (char c : number)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

void check_header_lint(RuleContext& ctx) {
  const Entry& h = ctx.index.entries[static_cast<std::size_t>(ctx.view.header)];
  if (!is_valid_session_id(h.id.text())) {
    ctx.report(Code::kSessionIdFormat, Severity::kWarning, h.line, h.id.column,
               "session id " + quoted(h.id.text()) +
                   " fails pi's session-id rule (alphanumerics, '.', '_' and '-', starting and ending alphanumeric): "
                   "pi loads it, but `pi --session-id` could not have made it",
               "use a UUID");
  }
  if (!h.details().version.present()) {
    ctx.report(Code::kVersionMissing, Severity::kWarning, h.line, 1,
               "the header has no version: pi reads the file as v1", "add \"version\":3");
  }
  if (h.timestamp.present() && !(h.timestamp.is_string() && is_iso8601(h.timestamp.text()))) {
    ctx.report(
        Code::kEntryTimestampFormat, Severity::kWarning, h.line, h.timestamp.column,
        "header timestamp " +
            (h.timestamp.is_string() ? quoted(h.timestamp.text()) : std::string(json_kind_name(h.timestamp.kind))) +
            " is not ISO-8601",
        "write it as new Date().toISOString() does: 2026-01-02T03:04:05.678Z");
  }
}

void check_entries_lint(RuleContext& ctx) {
  const PiView& v = ctx.view;
  std::string_view previous_ts;
  std::uint64_t previous_line = 0;
  for (std::uint32_t i = 0; i < v.nodes.size(); ++i) {
    const Entry& e = ctx.node_entry(i);
    if (e.root != JsonKind::kObject) continue;
    if (!v.migrates_v1 && e.id.is_string() && !is_pi_entry_id(e.id.text())) {
      ctx.report(Code::kEntryIdFormat, Severity::kWarning, e.line, e.id.column,
                 "entry id " + quoted(e.id.text()) + " is not 8 lowercase hex digits, the form pi writes",
                 "use ids like \"a1b2c3d4\"");
    }
    if (e.type == EntryType::kNone || e.type == EntryType::kUnknown) {
      ctx.report(Code::kUnknownEntryType, Severity::kWarning, e.line, e.type_field.present() ? e.type_field.column : 1,
                 e.type == EntryType::kNone
                     ? "entry has no string type: pi keeps it, but it adds nothing to the context"
                     : "entry type " + quoted(e.type_text()) + " is unknown to pi: it adds nothing to the context",
                 "use message, compaction, branch_summary, custom_message, custom, label, session_info, model_change "
                 "or thinking_level_change");
    }
    if (!e.timestamp.is_string() || !is_iso8601(e.timestamp.text())) {
      bool derived = e.type == EntryType::kCompaction || e.type == EntryType::kBranchSummary ||
                     e.type == EntryType::kCustomMessage;
      if (derived && !(e.timestamp.is_string())) {
        ctx.report(Code::kDerivedTimestampMissing, Severity::kWarning, e.line,
                   e.timestamp.present() ? e.timestamp.column : 1,
                   "this entry has no string timestamp: the message pi derives from it gets timestamp NaN",
                   "add \"timestamp\":\"2026-01-02T03:04:05.678Z\"");
      } else {
        ctx.report(
            Code::kEntryTimestampFormat, Severity::kWarning, e.line, e.timestamp.present() ? e.timestamp.column : 1,
            e.timestamp.present() ? "timestamp " +
                                        (e.timestamp.is_string() ? quoted(e.timestamp.text())
                                                                 : std::string(json_kind_name(e.timestamp.kind))) +
                                        " is not ISO-8601"
                                  : std::string("entry has no timestamp"),
            "write it as new Date().toISOString() does: 2026-01-02T03:04:05.678Z");
      }
    } else {
      // Same-shaped UTC timestamps compare as strings.
      std::string_view ts = e.timestamp.text();
      if (!previous_ts.empty() && ts.size() == previous_ts.size() && ts.back() == 'Z' && previous_ts.back() == 'Z' &&
          ts < previous_ts) {
        ctx.report(Code::kTimestampBackwards, Severity::kWarning, e.line, e.timestamp.column,
                   "timestamp " + quoted(ts) + " is earlier than " + quoted(previous_ts) + " on line " +
                       std::to_string(previous_line),
                   "entries are appended in time order; check the order of the lines");
      }
      previous_ts = ts;
      previous_line = e.line;
    }
    if (e.type == EntryType::kMessage && e.message.kind == JsonKind::kObject &&
        (e.role == Role::kUser || e.role == Role::kAssistant || e.role == Role::kToolResult)) {
      const Field& mt = e.message_timestamp;
      if (!(mt.kind == JsonKind::kNumber && is_epoch_ms(mt.text()))) {
        ctx.report(
            Code::kMessageTimestampFormat, Severity::kWarning, e.line, mt.present() ? mt.column : e.message.column,
            mt.present() ? "message.timestamp " +
                               (mt.kind == JsonKind::kNumber || mt.is_string() ? quoted(mt.text())
                                                                               : std::string(json_kind_name(mt.kind))) +
                               " is not epoch milliseconds"
                         : std::string("message has no timestamp"),
            "write Date.now() milliseconds, e.g. 1767322245678");
      }
    }
  }
}

}  // namespace

void check_lint_rules(RuleContext& ctx) {
  if (ctx.view.header < 0) return;
  check_header_lint(ctx);
  if (ctx.view.outcome == LoadOutcome::kCrash && ctx.view.migrates_v1) return;
  check_entries_lint(ctx);
}

}  // namespace pihydrate
