// A map from ids to PiView nodes for a whole session, later nodes replacing
// earlier ones with the same key (pi's byId Map).
#pragma once

#include "core/index_by_key.h"
#include "pihydrate/pi_view.h"

namespace pihydrate {

// `key_of(node)` gives the node's JsMapKey; put() replaces, as pi's Map.set does.
template <typename KeyOfNode>
using NodesById = IndexByKey<KeyOfNode, JsMapKeyHash>;

}  // namespace pihydrate
