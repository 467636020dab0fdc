// --pi-version, shared by every command: the versions come from the profile
// table (pihydrate/pi_profile.h), so a new row is a new value here.
#include "cli/commands.h"

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

}  // namespace pihydrate
