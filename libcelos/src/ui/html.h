// Pieces every page and fragment of celos-ui shares (private to ui/): the HTML response, and
// the text of an error answer of celos-server.
#pragma once

#include <string>

#include "celos/http_client.h"
#include "celos/http_server.h"

namespace celos {

// An HTML answer (UTF-8) that no cache keeps: the UI shows live state.
HttpServerResponse html_response(int status, std::string body);

// celos-server's {"error": "..."} or, failing that, "HTTP <status> <the first 200 bytes>".
std::string celos_error_text(const HttpResponse& response);

}  // namespace celos
