// Lines, encoding, the header and its cwd, the version.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include <boost/filesystem.hpp>

#include "validate/rules.h"

namespace pihydrate {
namespace {

namespace fs = boost::filesystem;

void check_bad_lines(RuleContext& ctx) {
  for (const BadLine& bad : ctx.index.bad_lines) {
    switch (bad.problem) {
      case LineProblem::kTooLong:
        ctx.report(Code::kLineTooLong, Severity::kError, bad.line, 1,
                   "line is " + bad.reason + ", longer than the --max-line-bytes cap (" +
                       std::to_string(std::min(ctx.options.index.reader.max_line_bytes, kMaxLineBytesLimit)) +
                       "); it was not checked",  // the reader clamps the cap to this limit
                   "raise --max-line-bytes if the line is meant to be there");
        break;
      case LineProblem::kTooDeep:
        ctx.report(Code::kNestingTooDeep, Severity::kError, bad.line, bad.column,
                   "JSON nests deeper than the --max-depth cap (" + std::to_string(ctx.options.index.max_depth) +
                       "); the line was not checked",
                   "raise --max-depth if such nesting is meant to be there");
        break;
      case LineProblem::kNulByte:
        ctx.report(Code::kNulByte, Severity::kError, bad.line, bad.column,
                   "NUL byte: the line is not valid JSON, and pi skips it silently",
                   "remove the NUL byte, or the line if it is debris");
        break;
      case LineProblem::kGlued:
        ctx.report(Code::kGluedRecords, Severity::kError, bad.line, bad.column,
                   "a second JSON record starts here, on the same line: pi skips the whole line and loses both "
                   "records",
                   "insert a newline before this column");
        break;
      case LineProblem::kMalformed:
        if (bad.is_last_without_newline) {
          ctx.report(Code::kTruncatedLastLine, Severity::kWarning, bad.line, bad.column,
                     "the last line is incomplete (" + bad.reason + "): pi skips it" +
                         (ctx.pi().appends_missing_newline ? " and appends a newline to the file" : ""),
                     "delete the partial record; it was never completely written");
        } else {
          ctx.report(Code::kMalformedLine, Severity::kError, bad.line, bad.column,
                     "invalid JSON (" + bad.reason + "): pi skips this line silently",
                     "repair the record or delete the line");
        }
        break;
    }
  }
  for (std::size_t i = 0; i < ctx.index.invalid_utf8_lines.size(); ++i) {
    ctx.report(Code::kInvalidUtf8, Severity::kWarning, ctx.index.invalid_utf8_lines[i],
               ctx.index.invalid_utf8_columns[i],
               "invalid UTF-8: pi decodes these bytes as U+FFFD, so the text it resumes with differs from the file",
               "re-encode the file as UTF-8");
  }
  if (ctx.index.bad_line_count > ctx.index.bad_lines.size()) {
    const std::uint64_t more = ctx.index.bad_line_count - ctx.index.bad_lines.size();
    ctx.report(Code::kMalformedLine, Severity::kError, 0, 0,
               std::to_string(more) +
                   " more lines that pi skips (malformed, glued, NUL bytes or over a cap) after the first " +
                   std::to_string(ctx.index.bad_lines.size()) + " shown",
               "this is not a session file, or one damaged beyond repair by line");
  }
  if (ctx.index.invalid_utf8_count > ctx.index.invalid_utf8_lines.size()) {
    ctx.report(Code::kInvalidUtf8, Severity::kWarning, 0, 0,
               std::to_string(ctx.index.invalid_utf8_count - ctx.index.invalid_utf8_lines.size()) +
                   " more lines with invalid UTF-8 after the first " +
                   std::to_string(ctx.index.invalid_utf8_lines.size()) + " shown",
               "re-encode the file as UTF-8");
  }
  if (ctx.index.crlf_lines > 0) {
    ctx.report(Code::kCrlf, Severity::kWarning, ctx.index.first_crlf_line, 1,
               std::to_string(ctx.index.crlf_lines) +
                   " line(s) end in CRLF: pi accepts them, but writes LF when it rewrites the file",
               "convert the file to LF line endings");
  }
  if (ctx.index.entry_cap_hit) {
    ctx.report(Code::kTooManyEntries, Severity::kError, 0, 0,
               "more than " + std::to_string(ctx.options.index.max_entries) +
                   " entries (--max-entries): the rest of the file was not checked",
               "raise --max-entries");
  }
}

void check_non_object_lines(RuleContext& ctx) {
  const PiProfile& pi = ctx.pi();
  for (std::size_t i = 0; i < ctx.index.entries.size(); ++i) {
    const Entry& e = ctx.index.entries[i];
    if (e.root == JsonKind::kObject) continue;
    if (ctx.view.header >= 0 && static_cast<std::size_t>(ctx.view.header) == i) continue;
    if (e.root == JsonKind::kNull) {
      if (pi.crashes_on_null_line) {
        ctx.report_at_level(Code::kNullLine, Severity::kError, Level::kLoad, e.line, 1,
                            "the line is `null`: " + ctx.pi_name() +
                                " crashes while loading (TypeError: Cannot read properties of null (reading 'type'))",
                            "delete the line");
      } else {
        ctx.report_at_level(Code::kNullLine, Severity::kWarning, Level::kResume, e.line, 1,
                            "the line is `null`: " + ctx.pi_name() + " skips it (pi 0.78 crashes on it)",
                            "delete the line");
      }
      continue;
    }
    const bool skipped = e.falsy && !pi.keeps_falsy_lines;
    if (ctx.view.migrates_v1 && !skipped) {
      ctx.report(Code::kNonObjectInV1, Severity::kError, e.line, 1,
                 std::string("the line is ") + json_kind_name(e.root) +
                     ", not an object: migrating this v1 file crashes pi (TypeError: Cannot create property 'id')",
                 "delete the line");
      continue;
    }
    std::string what = std::string("the line is ") + json_kind_name(e.root) + ", not an object: ";
    bool becomes_leaf = false;
    if (skipped) {
      what += ctx.pi_name() + " skips it (pi 0.78 keeps it as an entry without type or id)";
    } else {
      what += "pi keeps it as an entry without type or id";
      becomes_leaf = !ctx.view.nodes.empty() && ctx.view.nodes.back() == i;
      if (becomes_leaf) what += ", and as the last entry it becomes the leaf: pi resumes an empty conversation";
    }
    if (becomes_leaf) {
      ctx.report(Code::kNonObjectLine, Severity::kError, e.line, 1, what, "delete the line");
      continue;
    }
    ctx.report(Code::kNonObjectLine, Severity::kWarning, e.line, 1, what, "delete the line");
  }
}

// Why no header was accepted, in pi's words and ours.
void check_header(RuleContext& ctx) {
  const PiView& v = ctx.view;
  const std::string reaction =
      ctx.pi().replaces_file_without_header
          ? ctx.pi_name() + " truncates the file and starts a fresh session (the content is lost)"
          : ctx.pi_name() + " refuses it: \"Session file is not a valid pi session\"";
  if (v.outcome == LoadOutcome::kFreshSession) {
    ctx.report(Code::kEmptyFile, Severity::kError, 0, 0,
               "the file is empty: pi writes a fresh session header into it and starts a new conversation",
               "hydrate a real session into this path");
    return;
  }
  if (v.outcome != LoadOutcome::kReplaced && v.outcome != LoadOutcome::kRefused) return;
  if (ctx.index.entries.empty() && ctx.index.bad_line_count == 0) {
    ctx.report(Code::kEmptyFile, Severity::kError, 0, 0, "the file holds only whitespace: " + reaction,
               "hydrate a real session into this path");
    return;
  }
  // A BOM before an otherwise valid header, which a pi that parses line 1 as it is cannot read.
  if (!ctx.pi().trims_file_before_parsing && ctx.index.starts_with_bom && !ctx.index.entries.empty()) {
    const Entry& first = ctx.index.entries[0];
    if (first.line == 1 && first.root == JsonKind::kObject && first.type == EntryType::kSession &&
        first.id.is_string()) {
      ctx.report(Code::kByteOrderMark, Severity::kError, 1, 1,
                 "the file starts with a UTF-8 byte order mark: " + ctx.pi_name() +
                     " cannot parse the header line and refuses the file (\"Session file is not a valid pi "
                     "session\"); pi 0.78 tolerates it",
                 "remove the first three bytes (EF BB BF)");
      return;
    }
  }
  if (v.kept.empty()) {
    ctx.report(Code::kNoHeader, Severity::kError, 0, 0,
               "no line parses as JSON, so there is no session header: " + reaction,
               "the first JSON line must be {\"type\":\"session\",\"version\":3,\"id\":\"<string>\",\"cwd\":...}");
    return;
  }
  const Entry& first = ctx.index.entries[v.kept[0]];
  std::string found;
  std::uint64_t column = 1;
  if (first.root != JsonKind::kObject) {
    found = std::string("the first JSON line is ") + json_kind_name(first.root) + ", not a session header";
  } else if (first.type != EntryType::kSession) {
    found = "the first JSON line is not a session header (its type is " +
            (first.type_field.is_string() ? quoted(first.type_text())
                                          : std::string(json_kind_name(first.type_field.kind))) +
            ")";
    column = first.type_field.present() ? first.type_field.column : 1;
  } else {
    found = std::string("the session header's id is ") + json_kind_name(first.id.kind) + ", not a string";
    column = first.id.present() ? first.id.column : 1;
  }
  ctx.report(Code::kNoHeader, Severity::kError, first.line, column, found + ": " + reaction,
             "the first JSON line must be {\"type\":\"session\",\"version\":3,\"id\":\"<string>\",\"cwd\":...}");
}

// pi's resolvePath: "~" expands to $HOME, relative paths resolve against the
// process cwd.
std::string resolve_like_pi(std::string_view cwd, const std::string& process_cwd) {
  std::string path(cwd);
  if (path == "~" || path.rfind("~/", 0) == 0) {
    const char* home = std::getenv("HOME");
    path = std::string(home ? home : "") + path.substr(1);
  }
  if (path.empty() || path[0] != '/')
    path = (process_cwd.empty() ? fs::current_path().string() : process_cwd) + "/" + path;
  // node's path.resolve: "." and ".." segments collapse, ".." stops at the root.
  std::vector<std::string> parts;
  std::size_t pos = 0;
  while (pos <= path.size()) {
    std::size_t next = path.find('/', pos);
    if (next == std::string::npos) next = path.size();
    std::string part = path.substr(pos, next - pos);
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
    } else if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
    pos = next + 1;
  }
  std::string out;
  for (const std::string& part : parts) out += "/" + part;
  return out.empty() ? "/" : out;
}

void check_cwd(RuleContext& ctx) {
  if (ctx.view.header < 0) return;
  const Entry& h = ctx.index.entries[static_cast<std::size_t>(ctx.view.header)];
  const Field& cwd = h.details().cwd;
  if (cwd.kind == JsonKind::kMissing || cwd.kind == JsonKind::kNull || (cwd.is_string() && cwd.text().empty())) {
    ctx.report(Code::kNoCwd, Severity::kWarning, h.line, cwd.present() ? cwd.column : 1,
               std::string("the header has ") +
                   (cwd.is_string() ? "an empty cwd"
                    : cwd.present() ? "a null cwd"
                                    : "no cwd") +
                   ": pi runs in whatever directory it is started from",
               "set \"cwd\" to the project directory (pi-hydrate --cwd does this)");
    return;
  }
  if (cwd.kind != JsonKind::kString) {
    if (ctx.pi().crashes_on_non_string_cwd) {
      ctx.report_at_level(Code::kCwdNotString, Severity::kError, Level::kLoad, h.line, cwd.column,
                          std::string("the header cwd is ") + json_kind_name(cwd.kind) + ": " + ctx.pi_name() +
                              " crashes (TypeError: normalized.startsWith is not a function)",
                          "make \"cwd\" an absolute path string");
    } else {
      ctx.report_at_level(Code::kCwdNotString, Severity::kWarning, Level::kResume, h.line, cwd.column,
                          std::string("the header cwd is ") + json_kind_name(cwd.kind) + ": " + ctx.pi_name() +
                              " ignores it and runs in the directory it is started from (pi 0.78 crashes)",
                          "make \"cwd\" an absolute path string");
    }
    return;
  }
  if (!ctx.options.check_cwd) return;
  std::string resolved = resolve_like_pi(cwd.text(), ctx.options.process_cwd);
  boost::system::error_code ec;
  fs::file_status st = fs::status(resolved, ec);
  if (!fs::exists(st)) {
    std::string shown = quoted(cwd.text());
    if (resolved != cwd.text()) shown += " (" + resolved + ")";
    ctx.report(Code::kCwdMissing, Severity::kError, h.line, cwd.column,
               "the header cwd " + shown +
                   " does not exist: pi exits with \"Stored session working directory does not exist\"",
               "create the directory, or rewrite the header with pi-hydrate --cwd; --no-cwd-check skips this check");
  } else if (!fs::is_directory(st)) {
    ctx.report_at_level(Code::kCwdMissing, Severity::kWarning, Level::kResume, h.line, cwd.column,
                        "the header cwd " + quoted(cwd.text()) +
                            " is a file, not a directory: pi starts, but its tools cannot run there",
                        "point \"cwd\" at a directory");
  }
}

void check_version(RuleContext& ctx) {
  const PiView& v = ctx.view;
  if (v.header < 0) return;
  const Entry& h = ctx.index.entries[static_cast<std::size_t>(v.header)];
  const Field& ver = h.details().version;
  bool known = ver.kind == JsonKind::kMissing ||
               (ver.kind == JsonKind::kNumber && (ver.text() == "1" || ver.text() == "2" || ver.text() == "3"));
  if (!known) {
    std::string what =
        "the header version is " + (ver.is_string()                 ? quoted(ver.text())
                                    : ver.kind == JsonKind::kNumber ? std::string(ver.text())
                                                                    : std::string(json_kind_name(ver.kind)));
    if (std::isnan(v.header_version)) {
      what += ": JavaScript cannot compare it with 3, so pi migrates nothing but rewrites the file";
    } else if (v.header_version >= 3) {
      what += ": pi reads the file as v3";
    } else {
      what += ": pi reads it as " + std::string(v.migrates_v1 ? "v1" : "v2") + " and migrates the file";
    }
    ctx.report(Code::kOddVersion, Severity::kWarning, h.line, ver.column, what, "write \"version\":3");
  }
  if (v.migrates_v1 || v.migrates_v2) {
    std::string from = v.migrates_v1 ? "v1" : "v2";
    std::string what =
        "this is a " + from + " session: pi migrates it to v3 while loading and rewrites the file in place";
    if (v.migrates_v1) what += " (new random entry ids; malformed lines are dropped for good)";
    ctx.report(Code::kMigratedOnLoad, Severity::kWarning, h.line, ver.present() ? ver.column : 1, what,
               "hydrate it with pi-hydrate --session to get a v3 file");
  }
  for (std::uint32_t k = 1; k < v.kept.size(); ++k) {
    const Entry& e = ctx.index.entries[v.kept[k]];
    if (e.root == JsonKind::kObject && e.type == EntryType::kSession) {
      ctx.report(Code::kExtraHeader, Severity::kWarning, e.line, e.type_field.column,
                 "a second session header: pi ignores it (the header on line " + std::to_string(h.line) + " counts)",
                 "delete the line, or split the file into two sessions");
    }
  }
}

void check_bom(RuleContext& ctx) {
  if (!ctx.index.starts_with_bom) return;
  // The fatal case (a BOM before the header, refused) is reported by check_header.
  const bool trims = ctx.pi().trims_file_before_parsing;
  if (!trims && !ctx.view.loads() && ctx.view.outcome == LoadOutcome::kRefused) return;
  ctx.report(
      Code::kByteOrderMark, Severity::kWarning, 1, 1,
      trims
          ? "the file starts with a UTF-8 byte order mark: " + ctx.pi_name() + " tolerates it, pi 1.x refuses the file"
          : "the file starts with a UTF-8 byte order mark: " + ctx.pi_name() + " cannot parse line 1 and skips it",
      "remove the first three bytes (EF BB BF)");
}

}  // namespace

void check_file_rules(RuleContext& ctx) {
  check_bad_lines(ctx);
  check_bom(ctx);
  check_non_object_lines(ctx);
  check_header(ctx);
  check_cwd(ctx);
  check_version(ctx);
}

}  // namespace pihydrate
