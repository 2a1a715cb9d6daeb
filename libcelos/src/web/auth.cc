#include "celos/auth.h"

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>

#include <boost/json.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>

namespace celos {
namespace {

namespace json = boost::json;

// FIPS 180-4 SHA-256; small enough to carry rather than link a crypto library for it.
constexpr std::array<std::uint32_t, 64> kK{
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

constexpr std::uint32_t rotr(std::uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

void compress(std::array<std::uint32_t, 8>& h, const std::uint8_t* block) {
  std::array<std::uint32_t, 64> w{};
  for (std::size_t i = 0; i < 16; ++i) {
    w[i] = std::uint32_t{block[4 * i]} << 24 | std::uint32_t{block[4 * i + 1]} << 16 |
           std::uint32_t{block[4 * i + 2]} << 8 | std::uint32_t{block[4 * i + 3]};
  }
  for (std::size_t i = 16; i < 64; ++i) {
    const std::uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
    const std::uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  std::array<std::uint32_t, 8> v = h;
  for (std::size_t i = 0; i < 64; ++i) {
    const std::uint32_t s1 = rotr(v[4], 6) ^ rotr(v[4], 11) ^ rotr(v[4], 25);
    const std::uint32_t ch = (v[4] & v[5]) ^ (~v[4] & v[6]);
    const std::uint32_t t1 = v[7] + s1 + ch + kK[i] + w[i];
    const std::uint32_t s0 = rotr(v[0], 2) ^ rotr(v[0], 13) ^ rotr(v[0], 22);
    const std::uint32_t maj = (v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]);
    v = {t1 + s0 + maj, v[0], v[1], v[2], v[3] + t1, v[4], v[5], v[6]};
  }
  for (std::size_t i = 0; i < 8; ++i) h[i] += v[i];
}

Result<Sha256> parse_hex_hash(std::string_view hex) {
  Sha256 out{};
  if (hex.size() != 64) return fail("must be 64 hex digits", ErrorCode::kInvalid);
  for (std::size_t i = 0; i < 64; ++i) {
    const char c = hex[i];
    const int v = c >= '0' && c <= '9'   ? c - '0'
                  : c >= 'a' && c <= 'f' ? c - 'a' + 10
                  : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                         : -1;
    if (v < 0) return fail("must be 64 hex digits", ErrorCode::kInvalid);
    out[i / 2] = static_cast<std::uint8_t>(out[i / 2] | (v << (i % 2 == 0 ? 4 : 0)));
  }
  return out;
}

Result<Token> parse_token(const json::value& entry, std::size_t index) {
  auto where = [index](std::string what) {
    return fail(fmt::format("tokens[{}]: {}", index, what), ErrorCode::kInvalid);
  };
  if (!entry.is_object()) return where("not an object");
  const json::object& o = entry.get_object();
  Token token;
  for (const char* key : {"name", "role", "sha256"}) {
    const json::value* v = o.if_contains(key);
    if (v == nullptr || !v->is_string() || v->get_string().empty()) {
      return where(fmt::format("\"{}\" must be a non-empty string", key));
    }
  }
  token.name = std::string(o.at("name").get_string());
  auto role = parse_role(std::string_view(o.at("role").get_string()));
  if (!role) return where(role.error().message);
  token.role = *role;
  auto hash = parse_hex_hash(std::string_view(o.at("sha256").get_string()));
  if (!hash) return where("\"sha256\" " + hash.error().message);
  token.hash = *hash;
  return token;
}

std::string read_token_file(const std::string& path, bool& ok) {
  std::ifstream in(path, std::ios::binary);
  ok = static_cast<bool>(in);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Like ssh with its keys: a tokens file others may write is a way to become admin.
Result<void> check_tokens_file_mode(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    return fail(std::string("cannot stat the file: ") + std::strerror(errno));
  }
  if ((info.st_mode & (S_IWGRP | S_IWOTH)) == 0) return {};
  return fail(
      fmt::format("is writable by {} (mode {:04o}): anyone who can write it can make "
                  "themselves admin; run chmod go-w {}",
                  (info.st_mode & S_IWOTH) ? "everyone" : "its group", info.st_mode & 07777, path));
}

HttpServerResponse unauthorized(std::string message) {
  auto response = json_error(401, message);
  response.headers["WWW-Authenticate"] = "Bearer realm=\"celos\"";
  return response;
}

}  // namespace

Sha256 sha256(std::string_view data) {
  std::array<std::uint32_t, 8> h{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  std::string padded(data);
  padded += static_cast<char>(0x80);
  while (padded.size() % 64 != 56) padded += '\0';
  const std::uint64_t bits = static_cast<std::uint64_t>(data.size()) * 8;
  for (int i = 7; i >= 0; --i) padded += static_cast<char>((bits >> (8 * i)) & 0xff);
  for (std::size_t off = 0; off < padded.size(); off += 64) {
    compress(h, reinterpret_cast<const std::uint8_t*>(padded.data() + off));
  }
  Sha256 out{};
  for (std::size_t i = 0; i < 32; ++i)
    out[i] = static_cast<std::uint8_t>(h[i / 4] >> (24 - 8 * (i % 4)));
  return out;
}

std::string to_hex(const Sha256& hash) {
  std::string out;
  for (std::uint8_t b : hash) out += fmt::format("{:02x}", b);
  return out;
}

Result<Role> parse_role(std::string_view text) {
  for (Role role : {Role::kViewer, Role::kOperator, Role::kAdmin}) {
    if (text == to_string(role)) return role;
  }
  return fail("role must be viewer, operator or admin, not \"" + std::string(text) + "\"",
              ErrorCode::kInvalid);
}

Result<std::vector<Token>> parse_tokens(std::string_view text) {
  boost::system::error_code ec;
  const json::value doc = json::parse(text, ec);
  if (ec) return fail("not valid JSON: " + ec.message(), ErrorCode::kInvalid);
  const json::value* list = doc.is_object() ? doc.get_object().if_contains("tokens") : nullptr;
  if (list == nullptr || !list->is_array()) {
    return fail("expected {\"tokens\": [...]}", ErrorCode::kInvalid);
  }
  std::vector<Token> tokens;
  for (std::size_t i = 0; i < list->get_array().size(); ++i) {
    auto token = parse_token(list->get_array()[i], i);
    if (!token) return tl::unexpected(token.error());
    tokens.push_back(std::move(*token));
  }
  return tokens;
}

std::int64_t TokenStore::monotonic_ms() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             clock_.monotonic().time_since_epoch())
      .count();
}

Result<std::unique_ptr<TokenStore>> TokenStore::open(std::string path, Clock& clock) {
  std::unique_ptr<TokenStore> store(new TokenStore(std::move(path), clock));
  if (auto ok = store->reload(); !ok) return tl::unexpected(ok.error());
  return store;
}

std::string TokenStore::stamp() const {
  struct stat info {};
  if (::stat(path_.c_str(), &info) != 0) return "";
  return fmt::format("{}:{}:{}:{}", info.st_ino, info.st_size, info.st_mtim.tv_sec,
                     info.st_mtim.tv_nsec);
}

Result<void> TokenStore::reload() {
  MutexLock lock(reload_mutex_);
  const std::string before = stamp();
  bool ok = false;
  const std::string text = read_token_file(path_, ok);
  const int read_errno = errno;
  auto tokens = ok ? parse_tokens(text)
                   : Result<std::vector<Token>>(
                         fail(std::string("cannot read the file: ") + std::strerror(read_errno)));
  if (tokens) {
    if (auto safe = check_tokens_file_mode(path_); !safe) tokens = tl::unexpected(safe.error());
  }
  stamp_ = before;
  if (!tokens) {
    const std::string message = "tokens file " + path_ + ": " + tokens.error().message;
    if (tokens_.load()) spdlog::error("{}; keeping the previous tokens", message);
    return fail(message, ErrorCode::kInvalid);
  }
  const bool first = !tokens_.load();
  spdlog::info("tokens file {} {}: {} tokens", path_, first ? "read" : "re-read", tokens->size());
  tokens_.store(std::make_shared<const std::vector<Token>>(std::move(*tokens)));
  return {};
}

void TokenStore::reload_if_changed() {
  const std::int64_t now = monotonic_ms();
  std::int64_t due = next_check_ms_.load(std::memory_order_relaxed);
  if (now < due || !next_check_ms_.compare_exchange_strong(due, now + 1000)) return;
  std::string current = stamp();
  {
    MutexLock lock(reload_mutex_);
    if (current == stamp_) return;
  }
  (void)reload();
}

std::optional<Token> TokenStore::find(std::string_view token) const {
  const auto tokens = tokens_.load();
  const Sha256 hash = sha256(token);
  std::optional<Token> found;
  for (const Token& candidate : *tokens) {
    std::uint8_t diff = 0;  // every byte of every entry, whatever matches: constant time
    for (std::size_t i = 0; i < hash.size(); ++i)
      diff |= static_cast<std::uint8_t>(hash[i] ^ candidate.hash[i]);
    if (diff == 0 && !found) found = candidate;
  }
  return found;
}

namespace {

class BearerClient final : public HttpClient {
 public:
  BearerClient(std::shared_ptr<HttpClient> inner, std::string token)
      : inner_(std::move(inner)), header_("Bearer " + std::move(token)) {}
  Result<HttpResponse> send(const HttpRequest& request) override {
    HttpRequest with = request;
    with.headers.emplace_back("Authorization", header_);
    return inner_->send(with);
  }

 private:
  std::shared_ptr<HttpClient> inner_;
  std::string header_;
};

}  // namespace

std::shared_ptr<HttpClient> with_bearer_token(std::shared_ptr<HttpClient> inner,
                                              std::string token) {
  return std::make_shared<BearerClient>(std::move(inner), std::move(token));
}

std::optional<std::string_view> bearer_credentials(std::string_view header) {
  // RFC 7235: the scheme is a token compared without regard to case, then one or more spaces.
  constexpr std::string_view kBearer = "bearer";
  if (header.size() <= kBearer.size() || header[kBearer.size()] != ' ') return std::nullopt;
  for (std::size_t i = 0; i < kBearer.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(header[i])) != kBearer[i]) return std::nullopt;
  }
  std::string_view rest = header.substr(kBearer.size());
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  if (rest.empty()) return std::nullopt;
  return rest;
}

AuthResult authorize(const AuthOptions& options, Role role, bool mutates,
                     const HttpServerRequest& request) {
  AuthResult result;
  if (options.tokens == nullptr || role == Role::kPublic) return result;
  if (!mutates && !options.auth_reads && role == Role::kViewer) return result;
  options.tokens->reload_if_changed();
  const auto header = request.headers.find("authorization");
  const std::optional<std::string_view> sent =
      header == request.headers.end() ? std::nullopt : bearer_credentials(header->second);
  if (!sent) {
    result.refusal = unauthorized("authentication required: send Authorization: Bearer <token>");
    return result;
  }
  const auto token = options.tokens->find(*sent);
  if (!token) {
    result.refusal = unauthorized("unknown token");
    return result;
  }
  result.token_name = token->name;
  if (token->role < role) {
    result.refusal = json_error(403, fmt::format("token {} has role {}, this needs {}", token->name,
                                                 to_string(token->role), to_string(role)));
  }
  return result;
}

}  // namespace celos
