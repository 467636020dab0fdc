// read_session_tree (pihydrate.h): an input of any format, as the session
// tree pi reads from it (build_session_tree, session_tree.h).
#include "jobs/session_of_input.h"
#include "pihydrate/pihydrate.h"
#include "pihydrate/session_tree.h"

namespace pihydrate {

SessionTree read_session_tree(const Input& input, PiVersion version, const std::string& from) {
  const SessionOfInput of = read_session_of(input, from, version);
  SessionTree tree;
  if (!of.converted || of.conversion.ok) {
    // The tree reads its nodes' lines when they are shown: it keeps the index and the file.
    auto session = std::make_shared<IndexedSession>();
    IndexOptions options;
    options.keep_timestamps = false;  // no lint rule runs here
    index_session(of.session, options, *session);
    tree = build_session_tree(session->index, *session->lines, version, session);
  } else {
    tree.version = version;
    tree.not_converted = true;
    tree.failure = "it could not be converted";
  }
  tree.file = input.name();
  tree.format = of.format;
  tree.conversion = of.conversion.report.diagnostics;
  return tree;
}

SessionTree read_session_tree(const std::string& path, PiVersion version) {
  return read_session_tree(Input::file(path), version);
}

}  // namespace pihydrate
