// read_session_tree: pi's view of a file, with a short description of each
// node read back from its line.
#include "pihydrate/session_tree.h"

#include <cmath>
#include <memory>
#include <unordered_map>

#include <rapidjson/document.h>

#include "core/json_value.h"
#include "core/read_ahead_lines.h"
#include "pihydrate/hydrate.h"
#include "pihydrate/session_index.h"
#include "pihydrate/validator.h"

namespace pihydrate {
namespace {

constexpr std::size_t kTextBytes = 400;  // enough for any terminal line

// White space runs as one space, cut to kTextBytes (at a UTF-8 boundary).
std::string one_line(const std::string& text) {
  std::string out;
  bool space = false;
  for (char c : text) {
    if (c == '\n' || c == '\r' || c == '\t' || c == ' ') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
    if (out.size() >= kTextBytes) break;
  }
  while (out.size() >= kTextBytes && (static_cast<unsigned char>(out.back()) & 0xC0) == 0x80) out.pop_back();
  if (out.size() >= kTextBytes && !out.empty() && (static_cast<unsigned char>(out.back()) & 0x80)) out.pop_back();
  return out;
}

// The first non-blank text of a content string or array; tool calls are
// listed apart, images and thinking named when there is no text.
void describe_content(const rapidjson::Value& content, TreeNode& node) {
  if (content.IsString()) {
    node.text = one_line(std::string(content.GetString(), content.GetStringLength()));
    return;
  }
  if (!content.IsArray()) return;
  std::string other;
  for (const auto& block : content.GetArray()) {
    const std::string type = json_string(block, "type");
    if (type == "text" && node.text.empty()) node.text = one_line(json_string(block, "text"));
    if (type == "toolCall") node.tool_calls.push_back(json_string(block, "name"));
    if (other.empty() && (type == "image" || type == "thinking" || type == "redacted_thinking"))
      other = "[" + type + "]";
  }
  if (node.text.empty()) node.text = other;
}

void describe(const std::string& line, const Entry& e, TreeNode& node) {
  rapidjson::Document doc;
  doc.Parse(line.c_str(), line.size());
  if (doc.HasParseError() || !doc.IsObject()) return;
  switch (e.type) {
    case EntryType::kMessage: {
      const JsonValue* message = json_member(doc, "message");
      if (message == nullptr || !message->IsObject()) return;
      const JsonValue& m = *message;
      if (e.role == Role::kBashExecution) {
        node.text = "$ " + one_line(json_string(m, "command"));
        return;
      }
      if (e.role == Role::kToolResult) node.text = json_string(m, "toolName") + ": ";
      if (const JsonValue* content = json_member(m, "content")) {
        TreeNode inner;
        describe_content(*content, inner);
        node.text += inner.text;
        node.tool_calls = std::move(inner.tool_calls);
      }
      if (e.role == Role::kBranchSummary || e.role == Role::kCompactionSummary)
        node.text = one_line(json_string(m, "summary"));
      if (e.stop_reason == StopReason::kError || e.stop_reason == StopReason::kAborted)
        node.stop_reason = json_string(m, "stopReason");
      return;
    }
    case EntryType::kCompaction:
    case EntryType::kBranchSummary: node.text = one_line(json_string(doc, "summary")); return;
    case EntryType::kModelChange: node.text = json_string(doc, "provider") + "/" + json_string(doc, "modelId"); return;
    case EntryType::kThinkingLevelChange: node.text = json_string(doc, "thinkingLevel"); return;
    case EntryType::kLabel:
      node.text = json_string(doc, "label").empty() ? "(removes the label of " + json_string(doc, "targetId") + ")"
                                                    : json_string(doc, "label") + " -> " + json_string(doc, "targetId");
      return;
    case EntryType::kSessionInfo: node.text = one_line(json_string(doc, "name")); return;
    case EntryType::kCustom: node.text = json_string(doc, "customType"); return;
    case EntryType::kCustomMessage: {
      node.text = json_string(doc, "customType");
      if (const JsonValue* content = json_member(doc, "content")) {
        TreeNode inner;
        describe_content(*content, inner);
        if (!inner.text.empty()) node.text += ": " + inner.text;
      }
      return;
    }
    default: return;
  }
}

std::string kind_of(const Entry& e) {
  if (e.type == EntryType::kMessage) {
    switch (e.role) {
      case Role::kUser: return "user";
      case Role::kAssistant: return "assistant";
      case Role::kToolResult: return "toolResult";
      case Role::kBashExecution: return "bashExecution";
      case Role::kCustom: return "custom";
      case Role::kHookMessage: return "hookMessage";
      case Role::kBranchSummary: return "branchSummary";
      case Role::kCompactionSummary: return "compactionSummary";
      case Role::kSystem: return "system";
      default: return "message";
    }
  }
  const std::string_view type = e.type_text();
  return type.empty() ? "(no type)" : std::string(type);
}

}  // namespace

// What node(i) needs: pi's view of the index, the labels, and where to read
// the lines again.
struct SessionTree::Nodes {
  std::shared_ptr<const void> owner;  // keeps index and lines alive
  const SessionIndex* index = nullptr;
  PiView view;
  std::unique_ptr<ReadAheadLines> lines;                          // nodes are mostly asked in file order
  std::unordered_map<std::string_view, std::string_view> labels;  // target id -> label, in the index's arena
  std::vector<std::uint8_t> flags;                                // kOnPath | kCompacted per node
  std::string scratch;
  static constexpr std::uint8_t kOnPath = 1, kCompacted = 2;
};

std::size_t SessionTree::size() const { return nodes_ ? nodes_->view.nodes.size() : 0; }
std::int64_t SessionTree::parent(std::size_t i) const { return nodes_->view.parent[i]; }
bool SessionTree::on_path(std::size_t i) const { return nodes_->flags[i] & Nodes::kOnPath; }
std::uint64_t SessionTree::line(std::size_t i) const {
  return nodes_->view.entry(*nodes_->index, static_cast<std::uint32_t>(i)).line;
}

TreeNode SessionTree::node(std::size_t i) const {
  Nodes& n = *nodes_;
  const Entry& e = n.view.entry(*n.index, static_cast<std::uint32_t>(i));
  TreeNode node;
  if (!n.view.migrates_v1 && e.id.is_string()) node.id = std::string(e.id.text());
  node.parent = n.view.parent[i];
  node.dangling_parent = n.view.link[i] == ParentLink::kDangling;
  node.line = e.line;
  node.kind = kind_of(e);
  if (!node.id.empty()) {
    auto label = n.labels.find(e.id.text());
    if (label != n.labels.end()) node.label = std::string(label->second);
  }
  node.on_path = n.flags[i] & Nodes::kOnPath;
  node.compacted = n.flags[i] & Nodes::kCompacted;
  describe(std::string(n.lines->read(e.offset, e.length, n.scratch)), e, node);
  return node;
}

SessionTree build_session_tree(const SessionIndex& index, LineSource& lines, PiVersion version,
                               std::shared_ptr<const void> owner) {
  auto nodes = std::make_shared<SessionTree::Nodes>();
  nodes->view = build_pi_view(index, version);
  const PiView& view = nodes->view;

  SessionTree tree;
  tree.file = index.file;
  tree.version = version;
  tree.loads = view.loads();
  tree.failure = view.failure;
  ValidateOptions options;
  options.level = Level::kResume;  // lines pi skips are resume-level findings
  options.pi_version = version;
  options.check_cwd = false;
  options.content_rules = false;
  tree.diagnostics = validate_index(index, view, options).diagnostics;
  if (view.header >= 0) {
    const Entry& header = index.entries[static_cast<std::size_t>(view.header)];
    tree.session_id = header.id.is_string() ? std::string(header.id.text()) : "";
    tree.cwd = header.details().cwd.is_string() ? std::string(header.details().cwd.text()) : "";
  }
  tree.format_version = std::isnan(view.header_version) ? "?" : std::to_string(static_cast<int>(view.header_version));
  tree.migrated = view.migrates_v1 || view.migrates_v2;
  tree.random_ids = view.migrates_v1;
  if (!view.loads()) return tree;

  for (std::uint32_t node = 0; node < view.nodes.size(); ++node) {
    const Entry& e = view.entry(index, node);
    if (e.type != EntryType::kLabel || !e.details().target_id.is_string()) continue;
    const Field& label = e.details().label;
    if (label.is_string() && !label.text().empty())
      nodes->labels[e.details().target_id.text()] = label.text();
    else
      nodes->labels.erase(e.details().target_id.text());
  }
  nodes->flags.assign(view.nodes.size(), 0);
  for (std::uint32_t node : view.path) nodes->flags[node] |= SessionTree::Nodes::kOnPath;
  if (view.compaction >= 0) {
    // Messages before the compaction that the context leaves out.
    std::vector<std::uint8_t> in_context(view.nodes.size(), 0);
    for (const ContextItem& item : view.context) in_context[item.node] = 1;
    for (std::uint32_t node : view.path) {
      if (static_cast<std::int64_t>(node) == view.compaction) break;
      const Entry& e = view.entry(index, node);
      if ((e.type == EntryType::kMessage || e.type == EntryType::kCustomMessage ||
           e.type == EntryType::kBranchSummary) &&
          !in_context[node])
        nodes->flags[node] |= SessionTree::Nodes::kCompacted;
    }
  }
  tree.leaf = view.path.empty() ? -1 : static_cast<std::int64_t>(view.path.back());
  // The tree does not show the context: its items go.
  nodes->view.context = {};
  nodes->owner = std::move(owner);
  nodes->index = &index;
  nodes->lines = std::make_unique<ReadAheadLines>(lines, index.file_size);
  tree.nodes_ = std::move(nodes);
  return tree;
}

}  // namespace pihydrate
