// The files of swagger-ui-dist (third_party/swagger-ui), embedded into libcelos at build time so
// that celos-server serves its docs page without a CDN or an installed asset directory.
#pragma once

#include <string_view>
#include <vector>

namespace celos {

struct DocsAsset {
  std::string_view name;          // "swagger-ui-bundle.js"
  std::string_view content_type;  // "application/javascript; charset=utf-8"
  std::string_view data;
};

const std::vector<DocsAsset>& docs_assets();

}  // namespace celos
