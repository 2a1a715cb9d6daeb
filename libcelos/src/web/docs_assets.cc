#include "docs_assets.h"

// CELOS_SWAGGER_DIR is set by CMake; CELOS_SWAGGER_HASH (the files' hash) is only there so that
// ccache sees a change of the embedded files, which the preprocessor does not read.
#ifndef CELOS_SWAGGER_DIR
#error "CELOS_SWAGGER_DIR must name third_party/swagger-ui"
#endif

#define CELOS_EMBED(symbol, file)             \
  __asm__(                                    \
      ".section .rodata\n"                    \
      ".balign 16\n"                          \
      ".globl " #symbol "\n" #symbol          \
      ":\n"                                   \
      ".incbin \"" CELOS_SWAGGER_DIR "/" file \
      "\"\n"                                  \
      ".globl " #symbol "_end\n" #symbol      \
      "_end:\n"                               \
      ".byte 0\n"                             \
      ".previous\n");                         \
  extern "C" const char symbol[];             \
  extern "C" const char symbol##_end[];

CELOS_EMBED(celos_swagger_bundle_js, "swagger-ui-bundle.js")
CELOS_EMBED(celos_swagger_css, "swagger-ui.css")
CELOS_EMBED(celos_swagger_favicon, "favicon-32x32.png")
CELOS_EMBED(celos_swagger_license, "LICENSE")
CELOS_EMBED(celos_swagger_bundle_license, "swagger-ui-bundle.js.LICENSE.txt")

namespace celos {
namespace {

std::string_view between(const char* begin, const char* end) {
  return {begin, static_cast<std::size_t>(end - begin)};
}

}  // namespace

const std::vector<DocsAsset>& docs_assets() {
  static const std::vector<DocsAsset> assets{
      {"swagger-ui-bundle.js", "application/javascript; charset=utf-8",
       between(celos_swagger_bundle_js, celos_swagger_bundle_js_end)},
      {"swagger-ui.css", "text/css; charset=utf-8",
       between(celos_swagger_css, celos_swagger_css_end)},
      {"favicon-32x32.png", "image/png", between(celos_swagger_favicon, celos_swagger_favicon_end)},
      {"LICENSE", "text/plain; charset=utf-8",
       between(celos_swagger_license, celos_swagger_license_end)},
      {"swagger-ui-bundle.js.LICENSE.txt", "text/plain; charset=utf-8",
       between(celos_swagger_bundle_license, celos_swagger_bundle_license_end)},
  };
  return assets;
}

}  // namespace celos
