#include "celos/auth.h"

#include <fstream>
#include <thread>

#include <catch2/catch.hpp>
#include <sys/stat.h>

#include "testing/temp_dir.h"

namespace {

using namespace celos;
using celos::testing::TempDir;

std::string tokens_json(const std::string& entries) { return R"({"tokens":[)" + entries + "]}"; }
std::string entry(const std::string& name, const std::string& role, const std::string& token) {
  return R"({"name":")" + name + R"(","role":")" + role + R"(","sha256":")" +
         to_hex(sha256(token)) + R"("})";
}

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

HttpServerRequest with_token(const std::string& token) {
  HttpServerRequest request;
  request.method = "POST";
  if (!token.empty()) request.headers["authorization"] = "Bearer " + token;
  return request;
}

TEST_CASE("sha256 matches the FIPS 180-4 examples") {
  CHECK(to_hex(sha256("")) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(to_hex(sha256("abc")) ==
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(to_hex(sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")) ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(to_hex(sha256(std::string(1000, 'a'))) ==
        "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3");
}

TEST_CASE("A malformed tokens file is refused with a message naming the entry and the problem") {
  CHECK(parse_tokens("not json").error().message.find("not valid JSON") != std::string::npos);
  CHECK(parse_tokens(R"({"tokenz":[]})").error().message.find("expected") != std::string::npos);
  const auto bad_role =
      parse_tokens(tokens_json(entry("a", "viewer", "x") + "," + entry("b", "root", "y")));
  REQUIRE_FALSE(bad_role);
  CHECK(bad_role.error().message.find("tokens[1]") != std::string::npos);
  CHECK(bad_role.error().message.find("root") != std::string::npos);
  const auto bad_hash = parse_tokens(R"({"tokens":[{"name":"a","role":"admin","sha256":"abc"}]})");
  REQUIRE_FALSE(bad_hash);
  CHECK(bad_hash.error().message.find("64 hex") != std::string::npos);
  CHECK(parse_tokens(tokens_json(entry("a", "admin", "t")))->at(0).role == Role::kAdmin);
}

TEST_CASE("Roles nest: no token 401, unknown 401, too low 403, enough passes") {
  TempDir dir;
  const std::string path = dir / "tokens.json";
  write(path, tokens_json(entry("v", "viewer", "vvv") + "," + entry("o", "operator", "ooo") + "," +
                          entry("a", "admin", "aaa")));
  auto store = TokenStore::open(path);
  REQUIRE(store);
  const AuthOptions options{store->get(), false};
  auto status = [&](const std::string& token, Role role, bool mutates = true) {
    const auto result = authorize(options, role, mutates, with_token(token));
    return result.refusal ? result.refusal->status : 200;
  };
  CHECK(status("", Role::kOperator) == 401);
  CHECK(authorize(options, Role::kOperator, true, with_token(""))
            .refusal->headers.at("WWW-Authenticate")
            .rfind("Bearer", 0) == 0);
  CHECK(status("nope", Role::kOperator) == 401);
  CHECK(status("vvv", Role::kOperator) == 403);
  CHECK(status("ooo", Role::kOperator) == 200);
  CHECK(status("aaa", Role::kOperator) == 200);
  CHECK(status("ooo", Role::kAdmin) == 403);
  CHECK(status("aaa", Role::kAdmin) == 200);
  CHECK(authorize(options, Role::kOperator, true, with_token("ooo")).token_name == "o");
  SECTION("reads need no token unless --auth-reads; public routes never") {
    CHECK(status("", Role::kViewer, false) == 200);
    CHECK(status("", Role::kAdmin, false) == 401);  // /api/v1/audit
    const AuthOptions reads{store->get(), true};
    CHECK(authorize(reads, Role::kViewer, false, with_token("")).refusal->status == 401);
    CHECK_FALSE(authorize(reads, Role::kViewer, false, with_token("vvv")).refusal);
    CHECK_FALSE(authorize(reads, Role::kPublic, false, with_token("")).refusal);
  }
  SECTION("the scheme's case does not matter (RFC 7235), another scheme is refused") {
    auto with_header = [](const std::string& value) {
      HttpServerRequest request;
      request.method = "POST";
      request.headers["authorization"] = value;
      return request;
    };
    for (const char* header : {"bearer ooo", "BEARER ooo", "bEaReR ooo", "Bearer  ooo"}) {
      INFO(header);
      const auto result = authorize(options, Role::kOperator, true, with_header(header));
      CHECK_FALSE(result.refusal);
      CHECK(result.token_name == "o");
    }
    for (const char* header : {"Basic ooo", "Bearerooo", "bearer ", "bearer", "Bear ooo"}) {
      INFO(header);
      CHECK(authorize(options, Role::kOperator, true, with_header(header)).refusal->status == 401);
    }
  }
  SECTION("without a tokens file nothing is checked") {
    CHECK_FALSE(authorize(AuthOptions{}, Role::kAdmin, true, with_token("")).refusal);
  }
}

TEST_CASE("A changed tokens file is re-read, a malformed one keeps the previous tokens") {
  TempDir dir;
  const std::string path = dir / "tokens.json";
  write(path, tokens_json(entry("one", "admin", "first")));
  auto store = TokenStore::open(path);
  REQUIRE(store);
  write(path, "{broken");
  CHECK_FALSE((*store)->reload());
  CHECK((*store)->find("first"));
  write(path, tokens_json(entry("two", "admin", "second")));
  REQUIRE((*store)->reload());
  CHECK_FALSE((*store)->find("first"));
  CHECK((*store)->find("second")->name == "two");
  CHECK_FALSE(TokenStore::open(dir / "missing.json"));
}

TEST_CASE("A tokens file others may write is refused, naming the file and its mode") {
  TempDir dir;
  const std::string path = dir / "tokens.json";
  write(path, tokens_json(entry("one", "admin", "first")));
  ::chmod(path.c_str(), 0666);
  auto open = TokenStore::open(path);
  REQUIRE_FALSE(open);
  CHECK_THAT(open.error().message, Catch::Contains(path) && Catch::Contains("mode 0666") &&
                                       Catch::Contains("writable by everyone"));
  ::chmod(path.c_str(), 0620);
  CHECK_THAT(TokenStore::open(path).error().message, Catch::Contains("writable by its group"));
  ::chmod(path.c_str(), 0640);
  auto store = TokenStore::open(path);
  REQUIRE(store);
  ::chmod(path.c_str(), 0646);  // a reload keeps the tokens it had
  CHECK_FALSE((*store)->reload());
  CHECK((*store)->find("first"));
}

}  // namespace
