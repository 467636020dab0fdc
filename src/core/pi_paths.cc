// find_pi_session_dir: pi's session folder, from its environment variables,
// its settings files and its default layout.
#include "pihydrate/pi_paths.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <rapidjson/document.h>
#include <boost/filesystem.hpp>

#include "core/json_value.h"
#include "pihydrate/formats.h"

namespace pihydrate {
namespace {

namespace fs = boost::filesystem;

std::optional<std::string> variable(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

// pi's normalizePath + resolvePath: "~" and "~/..." start at the home
// directory; a relative path starts at `base`. No symlink is followed.
std::optional<std::string> resolve_like_pi(const std::string& path, const std::string& base, const PiEnvironment& env,
                                           std::string& why) {
  std::string expanded = path;
  if (path == "~" || path.rfind("~/", 0) == 0) {
    if (!env.home || env.home->empty()) {
      why = "'" + path + "' starts with ~ but HOME is not set";
      return std::nullopt;
    }
    expanded = *env.home + path.substr(1);
  }
  fs::path p(expanded);
  if (p.is_relative()) p = fs::path(base) / p;
  std::string text = p.lexically_normal().string();
  while (text.size() > 1 && text.back() == '/') text.pop_back();
  if (text.size() > 2 && text.compare(text.size() - 2, 2, "/.") == 0) text.resize(text.size() - 2);
  return text;
}

// The "sessionDir" string of a settings file, if the file is a JSON object
// that has one. pi reports a broken settings file and goes on without it.
std::optional<std::string> session_dir_setting(const fs::path& file) {
  std::ifstream in(file.string(), std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  rapidjson::Document doc;
  doc.Parse(text.str().c_str(), text.str().size());
  if (doc.HasParseError() || !doc.IsObject()) return std::nullopt;
  std::string dir = json_string(doc, "sessionDir");
  if (dir.empty()) return std::nullopt;
  return dir;
}

}  // namespace

PiEnvironment PiEnvironment::from_process() {
  PiEnvironment env;
  env.session_dir = variable("PI_CODING_AGENT_SESSION_DIR");
  env.agent_dir = variable("PI_CODING_AGENT_DIR");
  env.home = variable("HOME");
  return env;
}

std::optional<PiSessionDir> find_pi_session_dir(const std::string& cwd, const PiEnvironment& env, std::string& why) {
  // pi tests these variables for truthiness: an empty one counts as unset.
  if (env.session_dir && !env.session_dir->empty()) {
    auto dir = resolve_like_pi(*env.session_dir, cwd, env, why);
    if (!dir) return std::nullopt;
    return PiSessionDir{*dir, "PI_CODING_AGENT_SESSION_DIR", true};
  }
  std::string agent_dir;
  if (env.agent_dir && !env.agent_dir->empty()) {
    auto dir = resolve_like_pi(*env.agent_dir, cwd, env, why);
    if (!dir) return std::nullopt;
    agent_dir = *dir;
  } else {
    auto dir = resolve_like_pi("~/.pi/agent", cwd, env, why);
    if (!dir) {
      why = "HOME is not set, so pi's agent dir (~/.pi/agent) is unknown";
      return std::nullopt;
    }
    agent_dir = *dir;
  }
  const fs::path project_settings = fs::path(cwd) / ".pi" / "settings.json";
  const fs::path global_settings = fs::path(agent_dir) / "settings.json";
  for (const fs::path& settings : {project_settings, global_settings}) {
    if (auto setting = session_dir_setting(settings)) {
      auto dir = resolve_like_pi(*setting, cwd, env, why);
      if (!dir) return std::nullopt;
      return PiSessionDir{*dir, "\"sessionDir\" in " + settings.string(), true};
    }
  }
  const std::string source = env.agent_dir && !env.agent_dir->empty() ? "PI_CODING_AGENT_DIR" : "~/.pi/agent";
  return PiSessionDir{(fs::path(agent_dir) / "sessions" / encode_cwd_for_agent_dir(cwd)).string(), source, false};
}

}  // namespace pihydrate
