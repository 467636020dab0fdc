// The session tree as pi reads it: every entry pi keeps, with its parent,
// labels, what it is, and the branch pi resumes. `pi-hydrate tree` prints it;
// its ids are the ones `--leaf` takes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pihydrate/diagnostic.h"
#include "pihydrate/hydrate.h"
#include "pihydrate/pi_view.h"

namespace pihydrate {

// One node as `tree` shows it. SessionTree::node reads it back from the
// entry's line when asked: a tree holds only its nodes' links.
struct TreeNode {
  std::string id;                       // the entry's id as --leaf takes it; empty when pi gives it a random one (v1)
  std::int64_t parent = -1;             // position in the tree, or -1
  bool dangling_parent = false;         // its parentId names no entry: pi makes it a root
  std::uint64_t line = 0;               // 1-based line in the file
  std::string kind;                     // "user", "assistant", "toolResult", "bashExecution", "compaction",
                                        // "branch_summary", "model_change", "label", ... (the role of a message)
  std::string text;                     // one line: the first text, the summary, the model, the level, ...
  std::vector<std::string> tool_calls;  // tool names an assistant calls
  std::string stop_reason;              // an assistant's, when it is "error" or "aborted"
  std::string label;                    // pi's label for this entry (the latest label entry naming it)
  bool on_path = false;                 // on the branch pi resumes (root to leaf)
  bool compacted = false;               // on that branch, but the latest compaction's summary stands in for it
};

struct SessionTree {
  std::string file;
  std::string format = "pi";   // what the input was read as; another format is converted first
  Diagnostics conversion;      // what converting it found, at the input's positions
  bool not_converted = false;  // it could not be converted (conversion says why): there is no tree
  PiVersion version = newest_pi_version();
  bool loads = false;
  std::string failure;         // why pi does not load it
  std::string session_id;      // the header's id
  std::string cwd;             // the header's cwd
  std::string format_version;  // "1", "2" or "3" as pi reads it (before migration)
  bool migrated = false;       // pi migrates it to v3 on load
  bool random_ids = false;     // v1: pi gives every entry a new random id, so --leaf cannot name one
  std::int64_t leaf = -1;      // the node pi resumes from, or -1 for an empty conversation
  Diagnostics diagnostics;     // what pi skips or changes on load (validate --level load)

  // The nodes, in file order: every entry pi keeps. A tree keeps pi's view
  // of the index (links, the path, labels), not the nodes' texts, so a
  // million entries cost little more than the index: node(i) parses the
  // entry's line again. Not for two threads at once (one read-ahead window).
  std::size_t size() const;
  std::int64_t parent(std::size_t i) const;  // position of its parent, or -1
  bool on_path(std::size_t i) const;
  std::uint64_t line(std::size_t i) const;
  TreeNode node(std::size_t i) const;

  struct Nodes;                   // session_tree.cc
  std::shared_ptr<Nodes> nodes_;  // none when pi does not load the file
};

// The tree `version` of pi reads from an indexed session (whose lines
// `lines` reads again). `index` and `lines` must outlive the tree, or
// `owner` keep them. read_session_tree (pihydrate.h) reads an input of any format.
SessionTree build_session_tree(const SessionIndex& index, LineSource& lines, PiVersion version,
                               std::shared_ptr<const void> owner = nullptr);

}  // namespace pihydrate
