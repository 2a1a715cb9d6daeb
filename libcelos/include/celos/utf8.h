// UTF-8 at the edges: Duktape hands out CESU-8 for characters outside the Basic Multilingual
// Plane (an emoji is two 3-byte surrogates), and HTTP clients may send any bytes. What celos
// stores and prints as JSON is valid UTF-8.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace celos {

// Well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF).
bool is_valid_utf8(std::string_view text);

// Text from Duktape made valid UTF-8: surrogate pairs encoded as two 3-byte sequences (CESU-8)
// become one 4-byte sequence; anything else that is not valid UTF-8 (a lone surrogate, a stray
// byte) becomes U+FFFD. Valid UTF-8 comes back unchanged.
std::string cesu8_to_utf8(std::string_view text);

// `text` for an error message: printable ASCII as is, every other byte as \xNN. Never echoes
// raw bytes into JSON.
std::string printable_ascii(std::string_view text);

// `text` shortened for a message: unchanged when at most `max_bytes` long, otherwise its first
// `max_bytes` bytes or fewer (never half a UTF-8 character) followed by "...".
std::string clipped(std::string_view text, std::size_t max_bytes);

}  // namespace celos
