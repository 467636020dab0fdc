// The pi versions pi-hydrate knows, as data: one profile per version, whose
// fields name what that version does differently when it loads a session and
// builds the request it sends. Code asks a profile's fields, never which
// version it is; adding a version is a row in pi_profile.cc (and a value
// here), with the differences read from that version's dist/ code.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pihydrate {

// A row of the profile table (pi_profiles()), in release order.
enum class PiVersion : std::uint8_t { k0_78, k1_5, k1_6 };

struct PiProfile {
  PiVersion version;
  const char* name;     // "1.5": what --pi-version takes and what messages say ("pi 1.5")
  const char* release;  // "1.5.2": the release this profile was read from and is tested against

  // Reading the lines (loadEntriesFromFile).
  // The whole file is trimmed before it is split, so a UTF-8 BOM goes (0.78);
  // otherwise each line is parsed as it is, and a BOM spoils line 1 (1.x).
  bool trims_file_before_parsing;
  // Every parsed value is an entry, null, false, 0 and "" included (0.78);
  // otherwise only truthy values are (1.x).
  bool keeps_falsy_lines;
  // A file whose last line is cut off gets a newline appended on load (1.x).
  bool appends_missing_newline;

  // The header and the entries (SessionManager.open).
  // A file without a valid header is truncated and started afresh (0.78);
  // otherwise it is refused: "Session file is not a valid pi session" (1.x).
  bool replaces_file_without_header;
  // A `null` line throws "Cannot read properties of null (reading 'type')" (0.78).
  bool crashes_on_null_line;
  // A header cwd that is not a string throws in startsWith (0.78); 1.x reads it as missing.
  bool crashes_on_non_string_cwd;
  // A parentId cycle loops forever (0.78); 1.x grows an array until V8 throws RangeError.
  bool hangs_on_parent_cycle;

  // The request (buildSessionContext, convertToLlm, pi-ai's transformMessages).
  // Messages of role "system" are sent (1.x); 0.78's convertToLlm leaves them out.
  bool sends_system_messages;
  // A message whose content is null or missing is read as [] (1.x); 0.78 crashes on it.
  bool reads_missing_content_as_empty;
  // context_edit entries replace or remove earlier messages (1.x).
  bool applies_context_edits;
  // A compaction's systemMessage is sent before its summary (1.x).
  bool sends_compaction_system_message;
  // Thinking of another model is dropped, and signed or redacted thinking of
  // the same model is sent as it is (1.x); 0.78 turns another model's
  // unsigned thinking into text.
  bool drops_other_models_thinking;
};

const std::vector<PiProfile>& pi_profiles();
const PiProfile& pi_profile(PiVersion version);
// The newest version: what every command assumes unless --pi-version says otherwise.
PiVersion newest_pi_version();
// "1.5" or a release of it ("1.5.2", "1.5.0"): its row; none for a version pi-hydrate does not know.
std::optional<PiVersion> parse_pi_version(std::string_view text);
const char* pi_version_name(PiVersion version);  // "1.5"
// "0.78, 1.5, 1.6": what --pi-version takes, for help and errors.
std::string known_pi_versions();

}  // namespace pihydrate
