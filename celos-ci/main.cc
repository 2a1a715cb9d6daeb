// celos-ci: deploys a workflow project to a Celos installation, or removes it (SPEC §8).
// Everything but the wiring is in libcelos (celos/deploy.h).
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include <fmt/format.h>
#include <pwd.h>
#include <unistd.h>

#include "celos/deploy.h"
#include "celos/file_system.h"

namespace {

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

// $HOME, or the password database when it is unset (cron jobs, some CI agents).
std::string home_directory() {
  std::string home = env("HOME");
  if (home.empty()) {
    if (const passwd* pw = ::getpwuid(::getuid()); pw != nullptr && pw->pw_dir != nullptr) {
      home = pw->pw_dir;
    }
  }
  return home;
}

// The login name: $USER, or the password database.
std::string login_name() {
  std::string user = env("USER");
  if (user.empty()) {
    if (const passwd* pw = ::getpwuid(::getuid()); pw != nullptr && pw->pw_name != nullptr) {
      user = pw->pw_name;
    }
  }
  return user;
}

int run(int argc, char** argv) {
  auto command_line = celos::parse_ci_command_line(argc, argv);
  if (!command_line) {
    fmt::print(stderr, "celos-ci: {} (see --help)\n", command_line.error().message);
    return 2;
  }
  if (!command_line->options) {
    fmt::print("{}", command_line->help);
    return 0;
  }
  const celos::CiOptions& options = *command_line->options;

  // CELOS_CI_USERNAME names the SSH user of sftp: URLs without one (and the WebHDFS user).
  std::string user = env("CELOS_CI_USERNAME");
  if (user.empty()) user = login_name();

  auto opener = celos::make_location_opener(home_directory(), user, options.accept_new_host_key);
  auto local = celos::make_local_file_system();
  auto reporter = ::isatty(STDOUT_FILENO) ? celos::make_terminal_reporter(stdout)
                                          : celos::make_log_reporter(stdout);
  auto result = celos::run_ci(options, *opener, *local, user, *reporter);
  if (!result) {
    std::fflush(stdout);
    fmt::print(stderr, "celos-ci: {}\n", result.error().message);
    return result.error().code == celos::ErrorCode::kInvalid ? 2 : 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fflush(stdout);
    fmt::print(stderr, "celos-ci: internal error: {}\n", e.what());
    return 1;
  }
}
