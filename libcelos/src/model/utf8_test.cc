#include "celos/utf8.h"

#include <catch2/catch.hpp>

using namespace celos;

namespace {
const std::string kEmoji = "\xF0\x9F\x98\x80";              // U+1F600 in UTF-8
const std::string kEmojiCesu = "\xED\xA0\xBD\xED\xB8\x80";  // the same as a CESU-8 pair
}  // namespace

TEST_CASE("utf8: valid text is recognised, broken text is not") {
  CHECK(is_valid_utf8(""));
  CHECK(is_valid_utf8("plain ascii"));
  CHECK(is_valid_utf8("caf\xC3\xA9 \xE2\x82\xAC " + kEmoji));
  CHECK_FALSE(is_valid_utf8(kEmojiCesu));          // surrogates are not UTF-8
  CHECK_FALSE(is_valid_utf8("\xC0\xAF"));          // overlong '/'
  CHECK_FALSE(is_valid_utf8("\xE0\x80\xAF"));      // overlong
  CHECK_FALSE(is_valid_utf8("\xF4\x90\x80\x80"));  // above U+10FFFF
  CHECK_FALSE(is_valid_utf8("\xFF"));
  CHECK_FALSE(is_valid_utf8("abc\xE2\x82"));  // truncated
  CHECK_FALSE(is_valid_utf8("\x80"));         // stray continuation
}

TEST_CASE("utf8: Duktape's CESU-8 pairs become 4-byte UTF-8") {
  CHECK(cesu8_to_utf8(kEmojiCesu) == kEmoji);
  CHECK(cesu8_to_utf8("id-" + kEmojiCesu + "-x") == "id-" + kEmoji + "-x");
  CHECK(cesu8_to_utf8(kEmoji) == kEmoji);
  CHECK(cesu8_to_utf8("caf\xC3\xA9") == "caf\xC3\xA9");
}

TEST_CASE("utf8: what cannot be converted becomes U+FFFD and the result is always valid") {
  CHECK(cesu8_to_utf8("\xED\xA0\xBD") == "\xEF\xBF\xBD");    // lone high surrogate
  CHECK(cesu8_to_utf8("\xED\xB8\x80x") == "\xEF\xBF\xBDx");  // lone low surrogate
  CHECK(cesu8_to_utf8("a\xFF"
                      "b") ==
        "a\xEF\xBF\xBD"
        "b");
  for (const std::string& text : {std::string("\xED\xA0"), std::string("\xF0\x9F\x98"),
                                  std::string("\xED\xA0\xBD\xED\xA0\xBD"), std::string("\xC3")}) {
    CHECK(is_valid_utf8(cesu8_to_utf8(text)));
  }
}

TEST_CASE("utf8: messages print bytes, not raw non-ASCII") {
  CHECK(printable_ascii("id=a\xFF\n") == "id=a\\xFF\\x0A");
  CHECK(printable_ascii("back\\slash") == "back\\x5Cslash");
}

TEST_CASE("clipped: short text unchanged, long text cut on a character boundary with ...") {
  CHECK(clipped("abc", 3) == "abc");
  CHECK(clipped("abcd", 3) == "abc...");
  CHECK(clipped("", 0).empty());
  // "é" is two bytes (C3 A9): a cut after its first byte backs off before it.
  CHECK(clipped("ab\xC3\xA9z", 3) == "ab...");
  CHECK(clipped("ab\xC3\xA9z", 4) == "ab\xC3\xA9...");
  CHECK(is_valid_utf8(clipped("\xF0\x9F\x98\x80\xF0\x9F\x98\x80", 6)));
}
