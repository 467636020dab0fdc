// `pi-hydrate tree FILE`: the session tree pi reads, as text that fits a
// terminal or as JSON. The tree itself is the library's (read_session_tree).
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>
#include <ostream>
#include <vector>

#include <cxxopts.hpp>

#include "cli/commands.h"
#include "pihydrate/cli.h"
#include "pihydrate/pihydrate.h"
#include "pihydrate/session_tree.h"

namespace pihydrate {
namespace {

const char* kTreeHelp = R"HELP(
Shows the session tree as pi reads FILE: every entry pi keeps (after the
v1/v2 migration), how they branch, labels, compactions, branch summaries,
model and thinking level changes, and the branch pi resumes. Lines pi skips
or changes on load are reported first, as `validate --level load` does.

Text: one line per entry, `ID  KIND: TEXT`, with a branch drawn where an
entry has more than one child. `*` marks the branch pi resumes and `<- leaf`
its last entry; `[compacted]` an entry on it that pi replaces with the
latest compaction's summary. The IDs are what --leaf takes (pi-hydrate --leaf ID, and
context --leaf ID); a v1 file has none (pi gives its entries random ids on
load), so its entries are named by line. Lines are cut to the terminal's
width (--width, else $COLUMNS, else 120 when not a terminal).

--format json prints one object: {"file", "piVersion", "loads", "failure",
"sessionId", "cwd", "version", "migrated", "leaf", "diagnostics", "nodes":
[{"id", "parent", "line", "kind", "text", "toolCalls", "label", "onPath",
"danglingParent", "stopReason", "compacted"}]}; "parent" and "leaf" are node positions.

Exit codes: 0 shown; 1 pi does not load the file (the reason is printed);
2 usage or I/O failure.

FILE `-` reads standard input. A file of another format (see pi-hydrate
--session --help) is converted first, as pi-hydrate --session converts it: the
tree is the converted session's, and what converting found is listed before
it. --from names the format instead of finding it from the first lines.

Examples:
  pi-hydrate tree s.jsonl
  cat s.jsonl | pi-hydrate tree -
  pi-hydrate tree ~/.claude/projects/-home-me-repo/<session id>.jsonl
  pi-hydrate tree --format json s.jsonl | jq -r '.nodes[] | select(.label != "") | .id'
)HELP";

int fail_usage(std::ostream& err, const std::string& message) {
  err << "pi-hydrate tree: error: " << message << "\nRun 'pi-hydrate tree --help' for the options.\n";
  return kExitUsage;
}

std::size_t terminal_width(bool own_process) {
  if (own_process && ::isatty(STDOUT_FILENO)) {
    winsize size{};
    if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col >= 20) return size.ws_col;
  }
  if (const char* columns = std::getenv("COLUMNS")) {
    const long n = std::strtol(columns, nullptr, 10);
    if (n >= 20 && n <= 10000) return static_cast<std::size_t>(n);
  }
  return 120;
}

// `text` cut to `width` terminal columns (one per UTF-8 code point), with
// "…" where it was cut.
std::string fit(const std::string& text, std::size_t width) {
  if (width == 0) return text;
  std::size_t columns = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) continue;
    if (++columns == width) {
      std::size_t rest = i;
      std::size_t more = 0;
      for (; rest < text.size(); ++rest)
        if ((static_cast<unsigned char>(text[rest]) & 0xC0) != 0x80) ++more;
      if (more <= 1) return text;
      return text.substr(0, i) + "\u2026";
    }
  }
  return text;
}

std::string describe(const SessionTree& tree, std::size_t i) {
  const TreeNode n = tree.node(i);
  std::string line = n.id.empty() ? "line " + std::to_string(n.line) : n.id;
  line += "  " + n.kind;
  if (!n.text.empty()) line += ": " + n.text;
  if (!n.tool_calls.empty()) {
    line += " [calls";
    for (const std::string& name : n.tool_calls) line += " " + name;
    line += "]";
  }
  if (!n.stop_reason.empty()) line += " [" + n.stop_reason + "]";
  if (n.compacted) line += " [compacted]";
  if (!n.label.empty()) line += " [label: " + n.label + "]";
  if (n.dangling_parent) line += " [parent not found: a root]";
  if (static_cast<std::int64_t>(i) == tree.leaf) line += " <- leaf";
  return line;
}

// Each node's children, in file order, as positions into one array (a
// vector per node would cost more than the tree itself on a long chain).
struct Children {
  explicit Children(const SessionTree& tree) : first(tree.size() + 1, 0), all(tree.size()) {
    for (std::size_t i = 0; i < tree.size(); ++i)
      if (tree.parent(i) >= 0) ++first[static_cast<std::size_t>(tree.parent(i)) + 1];
    for (std::size_t i = 0; i < tree.size(); ++i) first[i + 1] += first[i];
    std::vector<std::uint32_t> next(first.begin(), first.end() - 1);
    for (std::size_t i = 0; i < tree.size(); ++i) {
      if (tree.parent(i) >= 0)
        all[next[static_cast<std::size_t>(tree.parent(i))]++] = static_cast<std::uint32_t>(i);
      else
        roots.push_back(static_cast<std::uint32_t>(i));
    }
  }
  std::size_t count(std::size_t node) const { return first[node + 1] - first[node]; }
  std::uint32_t of(std::size_t node, std::size_t k) const { return all[first[node] + k]; }

  std::vector<std::uint32_t> first;  // node -> where its children start in `all`
  std::vector<std::uint32_t> all;
  std::vector<std::uint32_t> roots;
};

void print_text(const SessionTree& tree, std::size_t width, std::ostream& out) {
  write_conversion_text(tree.file, tree.format, tree.conversion, !tree.not_converted, out);
  if (tree.not_converted) return;
  out << tree.file << ": session " << (tree.session_id.empty() ? "(no id)" : tree.session_id) << ", cwd "
      << (tree.cwd.empty() ? "(none)" : tree.cwd) << ", v" << tree.format_version;
  if (tree.migrated) out << " (pi migrates it to v3 on load)";
  out << "\n";
  for (const Diagnostic& d : tree.diagnostics) write_diagnostic_text(d, out);
  if (!tree.loads) {
    out << "pi " << pi_version_name(tree.version) << " does not load it: " << tree.failure << "\n";
    return;
  }
  out << "pi " << pi_version_name(tree.version) << " reads " << tree.size() << " entries; ";
  if (tree.leaf < 0)
    out << "it resumes with an empty conversation\n";
  else
    out << "it resumes at line " << tree.line(static_cast<std::size_t>(tree.leaf)) << " (marked *)\n";
  if (tree.random_ids) out << "v1 file: pi gives its entries random ids, so they are named by line here\n";
  out << "\n";

  const Children children(tree);
  // Depth first without recursion (a session is one long chain): a chain
  // goes on at the same indentation, a fork draws one branch per child.
  struct Frame {
    std::size_t node;
    std::string prefix;     // what is drawn before this entry's connector
    const char* connector;  // "", "├─ " or "└─ "
  };
  std::vector<Frame> stack;
  auto push_children = [&](std::size_t count, auto child, const std::string& prefix) {
    if (count == 1) {
      stack.push_back({child(0), prefix, ""});
      return;
    }
    for (std::size_t k = count; k-- > 0;)
      stack.push_back({child(k), prefix, k + 1 == count ? "\u2514\u2500 " : "\u251c\u2500 "});
  };
  push_children(
      children.roots.size(), [&](std::size_t k) { return children.roots[k]; }, "");
  while (!stack.empty()) {
    Frame f = std::move(stack.back());
    stack.pop_back();
    const char* mark = tree.on_path(f.node) ? "* " : "  ";
    out << fit(mark + f.prefix + f.connector + describe(tree, f.node), width) << "\n";
    std::string below = f.prefix;
    if (std::string(f.connector) == "\u251c\u2500 ") below += "\u2502  ";
    if (std::string(f.connector) == "\u2514\u2500 ") below += "   ";
    push_children(
        children.count(f.node), [&, node = f.node](std::size_t k) { return children.of(node, k); }, below);
  }
}

void string_member(JsonWriter& w, const char* key, const std::string& value) {
  w.Key(key);
  w.String(value.c_str(), static_cast<rapidjson::SizeType>(value.size()));
}

void print_json(const SessionTree& tree, std::ostream& out) {
  rapidjson::OStreamWrapper os(out);
  JsonWriter w(os);
  w.StartObject();
  string_member(w, "file", tree.file);
  string_member(w, "format", tree.format);
  w.Key("conversion");
  w.StartArray();
  for (const Diagnostic& d : tree.conversion) write_diagnostic_json(d, w);
  w.EndArray();
  string_member(w, "piVersion", pi_version_name(tree.version));
  w.Key("loads");
  w.Bool(tree.loads);
  string_member(w, "failure", tree.failure);
  string_member(w, "sessionId", tree.session_id);
  string_member(w, "cwd", tree.cwd);
  string_member(w, "version", tree.format_version);
  w.Key("migrated");
  w.Bool(tree.migrated);
  w.Key("leaf");
  if (tree.leaf < 0)
    w.Null();
  else
    w.Int64(tree.leaf);
  w.Key("diagnostics");
  w.StartArray();
  for (const Diagnostic& d : tree.diagnostics) write_diagnostic_json(d, w);
  w.EndArray();
  w.Key("nodes");
  w.StartArray();
  for (std::size_t i = 0; i < tree.size(); ++i) {
    const TreeNode n = tree.node(i);
    w.StartObject();
    w.Key("id");
    if (n.id.empty())
      w.Null();
    else
      w.String(n.id.c_str(), static_cast<rapidjson::SizeType>(n.id.size()));
    w.Key("parent");
    if (n.parent < 0)
      w.Null();
    else
      w.Int64(n.parent);
    w.Key("line");
    w.Uint64(n.line);
    string_member(w, "kind", n.kind);
    string_member(w, "text", n.text);
    w.Key("toolCalls");
    w.StartArray();
    for (const std::string& name : n.tool_calls) w.String(name.c_str(), static_cast<rapidjson::SizeType>(name.size()));
    w.EndArray();
    string_member(w, "label", n.label);
    w.Key("onPath");
    w.Bool(n.on_path);
    w.Key("danglingParent");
    w.Bool(n.dangling_parent);
    string_member(w, "stopReason", n.stop_reason);
    w.Key("compacted");
    w.Bool(n.compacted);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  os.Flush();
  out << "\n";
}

}  // namespace

int run_tree(const std::vector<std::string>& args, std::istream& in, std::ostream& out, std::ostream& err,
             bool own_process) {
  cxxopts::Options options("pi-hydrate tree", "Show the session tree pi reads.");
  options.custom_help("[options]");
  options.positional_help("FILE");
  options.add_options()("pi-version", pi_version_option_help("Read FILE"),
                        cxxopts::value<std::string>()->default_value(pi_version_name(newest_pi_version())))(
      "format", "Output: text or json", cxxopts::value<std::string>()->default_value("text"))(
      "width", "Cut text lines to N columns, 0 for never (default: the terminal's)", cxxopts::value<std::size_t>())(
      "from", from_option_help(), cxxopts::value<std::string>())(
      "file", "Session file", cxxopts::value<std::vector<std::string>>())("h,help", "Print this help");
  options.parse_positional({"file"});
  std::vector<const char*> argv{"pi-hydrate tree"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  cxxopts::ParseResult parsed;
  try {
    parsed = options.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const cxxopts::exceptions::exception& e) {
    return fail_usage(err, e.what());
  }
  if (parsed.count("help")) {
    out << options.help() << kTreeHelp;
    return kExitOk;
  }
  PiVersion version_read = newest_pi_version();
  std::string version_error;
  if (!read_pi_version_option(parsed["pi-version"].as<std::string>(), version_read, version_error))
    return fail_usage(err, version_error);
  const std::optional<PiVersion> version = version_read;
  const std::string format = parsed["format"].as<std::string>();
  if (format != "text" && format != "json")
    return fail_usage(err, "--format must be text or json, not '" + format + "'");
  std::string from;
  if (parsed.count("from")) {
    std::string error;
    if (!read_from_option(parsed["from"].as<std::string>(), error)) return fail_usage(err, error);
    from = parsed["from"].as<std::string>();
  }
  if (!parsed.count("file") || parsed["file"].as<std::vector<std::string>>().size() != 1)
    return fail_usage(err, "give one session FILE, or - for standard input");
  const std::string path = parsed["file"].as<std::vector<std::string>>()[0];
  const SessionTree tree =
      read_session_tree(path == "-" ? Input::stream(in, "<stdin>") : Input::file(path), *version, from);
  if (format == "json")
    print_json(tree, out);
  else
    print_text(tree, parsed.count("width") ? parsed["width"].as<std::size_t>() : terminal_width(own_process), out);
  if (!tree.loads) {
    if (format == "json" && tree.not_converted)
      err << "pi-hydrate tree: " << tree.file << " could not be converted\n";
    else if (format == "json")
      err << "pi-hydrate tree: pi " << pi_version_name(*version) << " does not load it: " << tree.failure << "\n";
    return kExitFindings;
  }
  return kExitOk;
}

}  // namespace pihydrate
