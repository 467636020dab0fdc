// The options every command shares, from the tables behind them: --pi-version
// from the pi profiles (pihydrate/pi_profile.h), --from and the list of
// input formats from the reader registry (pihydrate/reader.h). A new profile
// or reader is a new value here, with nothing to edit.
#include <ostream>

#include "cli/commands.h"
#include "pihydrate/reader.h"

namespace pihydrate {

std::string pi_version_option_help(const char* reads) {
  return std::string(reads) + " as this pi version does: " + known_pi_versions() + " (X.Y.Z: a release of one)";
}

bool read_pi_version_option(const std::string& text, PiVersion& version, std::string& error) {
  if (auto parsed = parse_pi_version(text)) {
    version = *parsed;
    return true;
  }
  error = "--pi-version must be one of " + known_pi_versions() + " (or a release of one, such as " +
          pi_profile(newest_pi_version()).release + "), not '" + text + "'";
  return false;
}

std::string from_option_help() {
  return "What the input is: " + ReaderRegistry::standard().names(" | ") + " (default: found from its first lines)";
}

bool read_from_option(const std::string& text, std::string& error) {
  if (ReaderRegistry::standard().find(text) != nullptr) return true;
  error = "--from must be one of " + ReaderRegistry::standard().names() + ", not '" + text + "'";
  return false;
}

std::string input_formats_help() {
  std::string text =
      "\nInput formats (--from NAME; without it, the one that recognises the input's\n"
      "first lines reads it):\n";
  for (const Reader* r : ReaderRegistry::standard().readers()) {
    const ReaderInfo& info = r->info();
    std::string name = info.name;
    name.resize(std::max<std::size_t>(name.size() + 2, 15), ' ');
    text += "  " + name + info.title + " (" + info.doc + ")\n";
    if (*info.kept_at != '\0') text += std::string(17, ' ') + info.kept_at + "\n";
  }
  return text;
}

std::string format_title(const std::string& name) {
  const Reader* reader = ReaderRegistry::standard().find(name);
  return reader != nullptr ? reader->info().title : name;
}

void write_conversion_text(const std::string& file, const std::string& format, const Diagnostics& conversion,
                           bool converted, std::ostream& out) {
  if (format == "pi" || format.empty()) return;
  const std::string title = format_title(format);
  out << file << (title.find_first_of("AEIOU") == 0 ? ": an " : ": a ") << title << ", "
      << (converted ? "converted as pi-hydrate --session converts it; lines and ids below are the converted session's"
                    : "which could not be converted")
      << "\n";
  for (const Diagnostic& d : conversion) write_diagnostic_text(d, out);
}

void list_formats(std::ostream& out) {
  for (const Reader* r : ReaderRegistry::standard().readers()) {
    const ReaderInfo& info = r->info();
    out << info.name << '\t' << info.title << '\t' << info.kept_at << '\t' << info.doc << '\n';
  }
}

void list_pi_versions(std::ostream& out) {
  for (const PiProfile& p : pi_profiles()) out << p.name << '\t' << p.release << '\n';
}

}  // namespace pihydrate
