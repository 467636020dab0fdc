// The profile table: what each pi version does when it loads a session
// (docs/conformance.md checks each row against that release of pi).
#include "pihydrate/pi_profile.h"

#include <cstring>

namespace pihydrate {

const std::vector<PiProfile>& pi_profiles() {
  static const std::vector<PiProfile> profiles = {
      {
          PiVersion::k0_78,
          "0.78",
          "0.78.0",
          /*trims_file_before_parsing=*/true,
          /*keeps_falsy_lines=*/true,
          /*appends_missing_newline=*/false,
          /*replaces_file_without_header=*/true,
          /*crashes_on_null_line=*/true,
          /*crashes_on_non_string_cwd=*/true,
          /*hangs_on_parent_cycle=*/true,
          /*sends_system_messages=*/false,
          /*reads_missing_content_as_empty=*/false,
          /*applies_context_edits=*/false,
          /*sends_compaction_system_message=*/false,
          /*drops_other_models_thinking=*/false,
      },
      {
          PiVersion::k1_5,
          "1.5",
          "1.5.2",
          /*trims_file_before_parsing=*/false,
          /*keeps_falsy_lines=*/false,
          /*appends_missing_newline=*/true,
          /*replaces_file_without_header=*/false,
          /*crashes_on_null_line=*/false,
          /*crashes_on_non_string_cwd=*/false,
          /*hangs_on_parent_cycle=*/false,
          /*sends_system_messages=*/true,
          /*reads_missing_content_as_empty=*/true,
          /*applies_context_edits=*/true,
          /*sends_compaction_system_message=*/true,
          /*drops_other_models_thinking=*/true,
      },
      // 1.6.0 loads, migrates and builds its request as 1.5.2 does; what it
      // writes differs (an "Operation aborted" result for each call an abort
      // left unstarted, details.imageUnsupportedByModel, diagnostics[]), in
      // the same schema.
      {
          PiVersion::k1_6,
          "1.6",
          "1.6.0",
          /*trims_file_before_parsing=*/false,
          /*keeps_falsy_lines=*/false,
          /*appends_missing_newline=*/true,
          /*replaces_file_without_header=*/false,
          /*crashes_on_null_line=*/false,
          /*crashes_on_non_string_cwd=*/false,
          /*hangs_on_parent_cycle=*/false,
          /*sends_system_messages=*/true,
          /*reads_missing_content_as_empty=*/true,
          /*applies_context_edits=*/true,
          /*sends_compaction_system_message=*/true,
          /*drops_other_models_thinking=*/true,
      },
  };
  return profiles;
}

const PiProfile& pi_profile(PiVersion version) {
  for (const PiProfile& p : pi_profiles())
    if (p.version == version) return p;
  return pi_profiles().back();  // unreachable: every PiVersion has a row
}

PiVersion newest_pi_version() { return pi_profiles().back().version; }

std::optional<PiVersion> parse_pi_version(std::string_view text) {
  for (const PiProfile& p : pi_profiles()) {
    const std::string_view name = p.name;
    if (text == name) return p.version;
    // X.Y.Z: a release of a known X.Y.
    if (text.size() > name.size() + 1 && text.compare(0, name.size(), name) == 0 && text[name.size()] == '.' &&
        text.find_first_not_of("0123456789", name.size() + 1) == std::string_view::npos)
      return p.version;
  }
  return std::nullopt;
}

const char* pi_version_name(PiVersion version) { return pi_profile(version).name; }

std::string known_pi_versions() {
  std::string list;
  for (const PiProfile& p : pi_profiles()) list += std::string(list.empty() ? "" : ", ") + p.name;
  return list;
}

}  // namespace pihydrate
