// The text format of /metrics shared by the files that render parts of it (metrics.cc,
// metrics_limits.cc). Internal to web/.
#pragma once

#include <string>
#include <string_view>

namespace celos {

// The "# HELP" and "# TYPE" lines of a metric.
void metric_header(std::string& out, std::string_view name, std::string_view type,
                   std::string_view help);

// A label value with backslash, double quote and newline escaped.
std::string metric_label(std::string_view value);

}  // namespace celos
