// validate_input and validate_file (pihydrate.h): a pi session indexed and
// validated as pi loads it; an input of another format judged by what
// converting it finds.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/files.h"
#include "jobs/session_of_input.h"
#include "pihydrate/errors.h"
#include "pihydrate/pihydrate.h"

namespace pihydrate {

FileReport validate_file(const std::string& path, const ValidateOptions& options) {
  Fd file;
  file.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (file.fd < 0) throw IoError("cannot open " + path + ": " + std::strerror(errno));
  return validate_index(build_file_index(file.fd, path, index_options_for(options)), options);
}

FileReport validate_input(const Input& input, const ValidateOptions& options, const std::string& from) {
  const SessionOfInput of = read_session_of(input, from, options.pi_version, nullptr, KeepSession::kNo);
  if (!of.converted) {
    if (of.session.kind() == Input::Kind::kFile) return validate_file(of.session.name(), options);
    if (of.session.kind() == Input::Kind::kSpooled)
      return validate_index(build_file_index(of.session.fd(), of.session.name(), index_options_for(options)), options);
    return validate_source(*make_memory_source(of.session.data()), of.session.name(), options);
  }
  // Loadable and resumable when it converts and the session written passes
  // the verification; the findings are the conversion's, at the input's positions.
  const HydrateReport& r = of.conversion.report;
  FileReport report = summarize_findings(input.name(), r.entries_read, r.entries_read, r.diagnostics, options.level);
  report.loadable = report.resumable = of.conversion.ok;
  return report;
}

}  // namespace pihydrate
