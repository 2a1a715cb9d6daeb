// open_state_database(): the one door to both backends (SPEC §11, §16).
#include <filesystem>

#include <fmt/format.h>
#include <libpq-fe.h>

#include "celos/file_system.h"
#include "celos/state_db.h"
#include "celos/state_db_open.h"
#include "io/postgres/postgres.h"

namespace celos {
namespace {

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

bool is_postgres(std::string_view uri) {
  return starts_with(uri, "postgresql://") || starts_with(uri, "postgres://");
}

// The password of a URI's user info (postgresql://user:password@host…), to keep it out of
// messages: libpq quotes the whole URI when it cannot parse it.
std::string uri_password(std::string_view uri) {
  const auto scheme_end = uri.find("://");
  if (scheme_end == std::string_view::npos) return "";
  const std::string_view rest = uri.substr(scheme_end + 3);
  const auto at = rest.rfind('@', rest.find('/'));
  if (at == std::string_view::npos) return "";
  const std::string_view user_info = rest.substr(0, at);
  const auto colon = user_info.find(':');
  return colon == std::string_view::npos ? "" : std::string(user_info.substr(colon + 1));
}

std::string redacted(std::string message, std::string_view uri) {
  const std::string password = uri_password(uri);
  if (password.empty()) return message;
  for (auto at = message.find(password); at != std::string::npos; at = message.find(password)) {
    message.replace(at, password.size(), "***");
  }
  return message;
}

}  // namespace

std::optional<std::string> file_state_database_dir(std::string_view uri) {
  if (!starts_with(uri, "file:")) return std::nullopt;
  std::string_view rest = uri.substr(5);
  if (starts_with(rest, "///")) return std::string(rest.substr(2));  // file:///abs
  if (starts_with(rest, "//")) return std::nullopt;                  // file://host/… : no
  return std::string(rest);                                          // file:/abs, file:rel
}

std::string describe_postgres_uri(std::string_view uri) {
  char* error = nullptr;
  PQconninfoOption* options = PQconninfoParse(std::string(uri).c_str(), &error);
  if (error) PQfreemem(error);
  if (!options) return "(malformed URI)";
  std::string host = "(default)", port = "5432", db = "(default)";
  for (PQconninfoOption* o = options; o->keyword; ++o) {
    if (!o->val || !*o->val) continue;
    const std::string_view key = o->keyword;
    if (key == "host" || (key == "hostaddr" && host == "(default)")) host = o->val;
    if (key == "port") port = o->val;
    if (key == "dbname") db = o->val;
  }
  PQconninfoFree(options);
  return fmt::format("host {} port {} database {}", host, port, db);
}

Result<std::unique_ptr<StateDatabase>> open_state_database(std::string_view uri,
                                                           const StateDatabaseOptions& options) {
  if (auto dir = file_state_database_dir(uri)) {
    if (dir->empty())
      return fail(fmt::format("state database URI {}: no directory", uri), ErrorCode::kInvalid);
    std::error_code ec;
    if (!std::filesystem::is_directory(*dir, ec)) {
      if (!options.create) {
        return fail(fmt::format("state database directory {} does not exist", *dir),
                    ErrorCode::kInvalid);
      }
      std::filesystem::create_directory(*dir, ec);
      if (ec) {
        return fail(
            fmt::format("cannot create state database directory {}: {}", *dir, ec.message()));
      }
    }
    if (options.fs) return make_file_state_database(options.fs, *dir);  // tests: no lock
    return open_file_state_database(make_local_file_system(), *dir);
  }
  if (!is_postgres(uri)) {
    return fail(fmt::format("state database URI must start with file: or postgresql:// "
                            "(got {})",
                            starts_with(uri, "postgres") ? "a malformed one" : std::string(uri)),
                ErrorCode::kInvalid);
  }
  char* error = nullptr;
  PQconninfoOption* parsed = PQconninfoParse(std::string(uri).c_str(), &error);
  if (!parsed) {
    std::string why = error ? error : "cannot parse";
    if (error) PQfreemem(error);
    while (!why.empty() && why.back() == '\n') why.pop_back();
    return fail(redacted("malformed PostgreSQL URI for the state database: " + why, uri),
                ErrorCode::kInvalid);
  }
  PQconninfoFree(parsed);
  return open_postgres_state_database(std::string(uri), options);
}

}  // namespace celos
