// UTF-8 validation and Duktape's CESU-8 (celos/utf8.h).
#include "celos/utf8.h"

#include <fmt/format.h>

namespace celos {
namespace {

constexpr const char* kReplacement = "\xEF\xBF\xBD";  // U+FFFD

unsigned byte_at(std::string_view text, std::size_t i) {
  return static_cast<unsigned char>(text[i]);
}

bool is_continuation(std::string_view text, std::size_t i) {
  return i < text.size() && (byte_at(text, i) & 0xC0U) == 0x80U;
}

// The length of the valid UTF-8 sequence at `i`, or 0.
std::size_t valid_sequence_at(std::string_view text, std::size_t i) {
  const unsigned b = byte_at(text, i);
  if (b < 0x80) return 1;
  std::size_t length = 0;
  unsigned low = 0x80, high = 0xBF;  // allowed range of the second byte
  if (b >= 0xC2 && b <= 0xDF) {
    length = 2;
  } else if (b >= 0xE0 && b <= 0xEF) {
    length = 3;
    if (b == 0xE0) low = 0xA0;   // overlong
    if (b == 0xED) high = 0x9F;  // surrogates
  } else if (b >= 0xF0 && b <= 0xF4) {
    length = 4;
    if (b == 0xF0) low = 0x90;   // overlong
    if (b == 0xF4) high = 0x8F;  // above U+10FFFF
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  const unsigned second = byte_at(text, i + 1);
  if (second < low || second > high) return 0;
  for (std::size_t k = 2; k < length; ++k) {
    if (!is_continuation(text, i + k)) return 0;
  }
  return length;
}

// A 3-byte encoded surrogate at `i` (ED A0..BF xx): its value, or 0.
unsigned surrogate_at(std::string_view text, std::size_t i) {
  if (i + 3 > text.size() || byte_at(text, i) != 0xED) return 0;
  const unsigned second = byte_at(text, i + 1);
  if (second < 0xA0 || second > 0xBF || !is_continuation(text, i + 2)) return 0;
  return 0xD000U | ((second & 0x3FU) << 6) | (byte_at(text, i + 2) & 0x3FU);
}

void append_code_point(std::string& out, unsigned cp) {
  out += static_cast<char>(0xF0U | (cp >> 18));
  out += static_cast<char>(0x80U | ((cp >> 12) & 0x3FU));
  out += static_cast<char>(0x80U | ((cp >> 6) & 0x3FU));
  out += static_cast<char>(0x80U | (cp & 0x3FU));
}

}  // namespace

bool is_valid_utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t length = valid_sequence_at(text, i);
    if (length == 0) return false;
    i += length;
  }
  return true;
}

std::string cesu8_to_utf8(std::string_view text) {
  if (is_valid_utf8(text)) return std::string(text);
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const unsigned high = surrogate_at(text, i);
    if (high >= 0xD800 && high <= 0xDBFF) {
      const unsigned low = surrogate_at(text, i + 3);
      if (low >= 0xDC00 && low <= 0xDFFF) {
        append_code_point(out, 0x10000U + ((high - 0xD800U) << 10) + (low - 0xDC00U));
        i += 6;
        continue;
      }
    }
    if (high != 0) {  // a lone surrogate
      out += kReplacement;
      i += 3;
      continue;
    }
    const std::size_t length = valid_sequence_at(text, i);
    if (length == 0) {
      out += kReplacement;
      ++i;
      continue;
    }
    out.append(text.substr(i, length));
    i += length;
  }
  return out;
}

std::string printable_ascii(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto b = static_cast<unsigned char>(c);
    if (b >= 0x20 && b < 0x7F && c != '\\') {
      out += c;
    } else {
      out += fmt::format("\\x{:02X}", b);
    }
  }
  return out;
}

std::string clipped(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  std::size_t cut = max_bytes;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // mid-char
  std::string out(text.substr(0, cut));
  out += "...";
  return out;
}

}  // namespace celos
