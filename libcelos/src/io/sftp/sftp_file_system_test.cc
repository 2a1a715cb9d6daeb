// SFTP (libssh2) against a private OpenSSH sshd on 127.0.0.1 (testing/sshd_server.h): the
// FileSystem contract (testing/file_system_contract.h, also run for memory, the local disk and
// WebHDFS).
#include <catch2/catch.hpp>

#include "celos/sftp.h"
#include "testing/file_system_contract.h"
#include "testing/sshd_server.h"

namespace celos {
namespace {

TEST_CASE("The file system contract holds for SFTP against a private sshd") {
  std::string why_not;
  auto sshd = testing::SshdServer::start(why_not);
  if (!sshd) {
    WARN("skipped: " << why_not);
    return;
  }
  auto fs =
      connect_sftp_file_system({sshd->user(), "127.0.0.1", sshd->port()}, {.home = sshd->home()});
  INFO((fs ? "" : fs.error().message));
  REQUIRE(fs);
  testing::check_file_system_contract(
      **fs, sshd->files() + "/a b",
      {.rename_replaces_file = false, .mtimes = false, .prefers_listing = true});
}

}  // namespace
}  // namespace celos
