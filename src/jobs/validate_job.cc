// validate_file (pihydrate.h): one file indexed and validated, as
// `pi-hydrate validate FILE` does.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "jobs/job_files.h"
#include "pihydrate/errors.h"
#include "pihydrate/pihydrate.h"

namespace pihydrate {

FileReport validate_file(const std::string& path, const ValidateOptions& options) {
  Fd file;
  file.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (file.fd < 0) throw IoError("cannot open " + path + ": " + std::strerror(errno));
  return validate_index(build_file_index(file.fd, path, options.index), options);
}

}  // namespace pihydrate
