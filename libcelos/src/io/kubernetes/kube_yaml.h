// The part of YAML that kubeconfig files use, read into a JSON value: block mappings and
// sequences, plain, single- and double-quoted scalars, comments, flow collections on one line
// (`{cluster: c, user: u}`, `[a, b]`) and whole JSON documents. Scalars stay strings. Anchors,
// tags and block scalars (`|`, `>`) are refused with the line. Private to io/kubernetes/.
#pragma once

#include <string>

#include <boost/json.hpp>

#include "celos/error.h"

namespace celos::kube {

[[nodiscard]] Result<boost::json::value> parse_yaml(const std::string& text);

}  // namespace celos::kube
