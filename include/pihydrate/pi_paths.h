// Where pi keeps its sessions, found the way pi finds it (pi's main.js and
// session-manager.js): so that a session written there is the one
// `pi --continue` run in the session's cwd resumes.
#pragma once

#include <optional>
#include <string>

namespace pihydrate {

// What pi reads to find its session directory. from_process() takes the
// variables of this process; tests set them by hand.
struct PiEnvironment {
  std::optional<std::string> session_dir;  // PI_CODING_AGENT_SESSION_DIR
  std::optional<std::string> agent_dir;    // PI_CODING_AGENT_DIR
  std::optional<std::string> home;         // HOME
  static PiEnvironment from_process();
};

struct PiSessionDir {
  std::string path;    // absolute
  std::string source;  // what chose it, for messages: "PI_CODING_AGENT_SESSION_DIR", a settings file, ...
  bool flat = false;   // sessions directly in `path`, not in a per-cwd folder under it
};

// The folder pi started in `cwd` (absolute) writes new sessions to and
// searches for --continue, in pi's order:
//   1. PI_CODING_AGENT_SESSION_DIR, flat;
//   2. "sessionDir" of the settings, flat: <cwd>/.pi/settings.json over
//      <agent dir>/settings.json (a file that is not a JSON object is skipped,
//      as pi skips it);
//   3. <agent dir>/sessions/--<encoded cwd>--/, the agent dir being
//      PI_CODING_AGENT_DIR or ~/.pi/agent.
// A leading "~" is the home directory, and a relative path is taken from
// `cwd`, where pi runs. Returns nothing when a path needs HOME and it is
// unset; `why` then says so.
std::optional<PiSessionDir> find_pi_session_dir(const std::string& cwd, const PiEnvironment& env, std::string& why);

}  // namespace pihydrate
