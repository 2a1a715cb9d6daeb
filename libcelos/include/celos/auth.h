// Bearer tokens with roles (SPEC §13, §16). The tokens file (--auth-tokens) holds SHA-256
// hashes only:
//
//   {"tokens": [{"name": "jenkins", "role": "operator", "sha256": "<64 hex digits>"}]}
//
// A request presents `Authorization: Bearer <token>`; the token is hashed and compared with
// every entry in constant time. Tokens themselves are never stored or logged.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "celos/clock.h"
#include "celos/error.h"
#include "celos/http_client.h"
#include "celos/http_server.h"
#include "celos/mutex.h"
#include "celos/route_table.h"

namespace celos {

using Sha256 = std::array<std::uint8_t, 32>;
Sha256 sha256(std::string_view data);
std::string to_hex(const Sha256& hash);

struct Token {
  std::string name;
  Role role = Role::kViewer;
  Sha256 hash{};
};

// "viewer", "operator", "admin"; kInvalid otherwise.
[[nodiscard]] Result<Role> parse_role(std::string_view text);
// Parses a tokens file's text; kInvalid with a message that names the entry and the problem.
[[nodiscard]] Result<std::vector<Token>> parse_tokens(std::string_view json);

// The tokens of a file, re-read when the file changes (checked at most once a second, on
// requests) or when reload() is called (SIGHUP). Thread-safe; lookups take no lock.
class TokenStore {
 public:
  // Reads the file: kInvalid naming the file if it is missing or malformed (exit 2 at start).
  // `clock` paces the checks for a changed file (its monotonic()).
  [[nodiscard]] static Result<std::unique_ptr<TokenStore>> open(std::string path,
                                                                Clock& clock = system_clock());

  // Re-reads the file. On failure the previous tokens stay and the error is logged & returned.
  Result<void> reload() EXCLUDES(reload_mutex_);
  // reload() if the file's size, mtime or inode changed since the last read.
  void reload_if_changed() EXCLUDES(reload_mutex_);

  // The token whose hash matches `token`, if any (constant time in the token's content).
  std::optional<Token> find(std::string_view token) const;
  const std::string& path() const { return path_; }

 private:
  TokenStore(std::string path, Clock& clock) : path_(std::move(path)), clock_(clock) {}
  std::string stamp() const;
  std::int64_t monotonic_ms() const;

  std::string path_;
  Clock& clock_;
  std::atomic<std::shared_ptr<const std::vector<Token>>> tokens_;
  std::atomic<std::int64_t> next_check_ms_{0};
  Mutex reload_mutex_;                           // reloads are rare and never on the lookups' path
  std::string stamp_ GUARDED_BY(reload_mutex_);  // of the last read
};

// An HttpClient that adds `Authorization: Bearer <token>` to every request (celos-ui's
// --celos-token-file). The token is never logged.
std::shared_ptr<HttpClient> with_bearer_token(std::shared_ptr<HttpClient> inner, std::string token);

struct AuthOptions {
  TokenStore* tokens = nullptr;  // null: no authentication (SPEC §13: nothing changes)
  bool auth_reads = false;       // --auth-reads: reads need a viewer token too
};

struct AuthResult {
  std::optional<HttpServerResponse> refusal;  // 401 (with WWW-Authenticate) or 403
  std::string token_name;                     // of the authenticated token, if any
};
// The token of an `Authorization: Bearer <token>` header; the scheme's case does not matter
// (RFC 7235: bearer, BEARER). Nothing for another scheme or an empty token.
std::optional<std::string_view> bearer_credentials(std::string_view header);

// Decides whether `request` may use a route needing `role` (mutating routes: `role` as given;
// reads need a token only with auth_reads; kPublic never). Re-reads a changed tokens file.
AuthResult authorize(const AuthOptions& options, Role role, bool mutates,
                     const HttpServerRequest& request);

}  // namespace celos
