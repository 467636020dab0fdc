// The library's request turned into the hydrator's options (hydrate_job.cc),
// for tests and fuzz targets that drive hydrate_session's parts directly.
#pragma once

#include "pihydrate/hydrate.h"
#include "pihydrate/pihydrate.h"

namespace pihydrate {

// Throws std::invalid_argument for what the command refuses as a usage error.
HydrateOptions hydrate_options(const HydrateRequest& request);

}  // namespace pihydrate
