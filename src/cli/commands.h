// The commands behind run_cli, and the report formats they share.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include <rapidjson/ostreamwrapper.h>
#include <rapidjson/writer.h>

#include "pihydrate/validator.h"

namespace pihydrate {

// `own_process`: run_cli's Process::kOwned (the command may install signal handlers).
int run_hydrate(const std::vector<std::string>& args, std::istream& in, std::ostream& out, std::ostream& err,
                bool own_process);
int run_validate(const std::vector<std::string>& args, std::istream& in, std::ostream& out, std::ostream& err,
                 bool own_process);
int run_tree(const std::vector<std::string>& args, std::istream& in, std::ostream& out, std::ostream& err,
             bool own_process);
int run_context(const std::vector<std::string>& args, std::istream& in, std::ostream& out, std::ostream& err,
                bool own_process);

// The options every command shares (shared_options.cc), from the tables
// behind them. --pi-version: its help, and its value; false, with the
// message a usage error prints, when it names no version pi-hydrate knows.
std::string pi_version_option_help(const char* reads);
bool read_pi_version_option(const std::string& text, PiVersion& version, std::string& error);
// --from: its help, and whether a reader has that name (false: the message lists them).
std::string from_option_help();
bool read_from_option(const std::string& text, std::string& error);
// The readers for --help: name, title, where the tool keeps them, their doc.
std::string input_formats_help();
// "Claude Code transcript" for "claude-code".
std::string format_title(const std::string& name);
// For tree and context of an input that is not a pi session: what it was
// read as, and what converting it found.
void write_conversion_text(const std::string& file, const std::string& format, const Diagnostics& conversion,
                           bool converted, std::ostream& out);
// --list-formats and --list-pi-versions: one per line, tab-separated, for
// scripts and the shell completions.
void list_formats(std::ostream& out);
void list_pi_versions(std::ostream& out);

enum class ReportFormat { kText, kJson, kGithub };

struct ValidateRun {
  std::vector<FileReport> reports;
  PiVersion pi_version = newest_pi_version();
  Level level = Level::kResume;
};

using JsonWriter = rapidjson::Writer<rapidjson::OStreamWrapper>;

// One diagnostic as a JSON object, the same in every JSON report.
void write_diagnostic_json(const Diagnostic& d, JsonWriter& w);

// FILE:LINE:COL: severity: message [PHnnn] and its hint line.
void write_diagnostic_text(const Diagnostic& d, std::ostream& out);

void write_text_report(const ValidateRun& run, std::ostream& out);
void write_json_report(const ValidateRun& run, std::ostream& out);
void write_github_report(const ValidateRun& run, std::ostream& out);

}  // namespace pihydrate
