// celos-ci's command line. Parsing lives here rather than in main() so that every rejection
// (the contract's "one clear line and a non-zero exit") is unit-tested.
#include <sstream>

#include <boost/program_options.hpp>
#include <fmt/format.h>

#include "celos/deploy.h"

namespace celos {
namespace po = boost::program_options;

namespace {

constexpr const char* kCiUsage =
    "Usage: celos-ci --mode deploy|undeploy --workflowName NAME --target URL\n"
    "                [--deployDir DIR] [--hdfsRoot PATH] [--accept-new-host-key] [--plan]\n"
    "\n"
    "Deploys a workflow project (workflow.js, defaults.js, hdfs/) to the Celos installation\n"
    "described by a target file, or removes it again.\n";

po::options_description describe_options() {
  po::options_description options("Options");
  options.add_options()("help,h", "print this help and exit")("mode", po::value<std::string>(),
                                                              "deploy or undeploy")(
      "workflowName", po::value<std::string>(), "name of the workflow project")(
      "target", po::value<std::string>(), "target file URL (file: or sftp:)")(
      "deployDir", po::value<std::string>()->default_value("."),
      "deployment directory with workflow.js, defaults.js and hdfs/")(
      "hdfsRoot", po::value<std::string>()->default_value("/user/celos/app"),
      "HDFS directory under which hdfs/ is placed as NAME")(
      "accept-new-host-key", "add unknown SSH host keys to ~/.ssh/known_hosts")(
      "plan",
      "with --mode deploy: show which slots of the next 7 days the deploy adds, removes "
      "or moves, and what else changes; deploy nothing");
  return options;
}

Result<void> check_workflow_name(const std::string& name) {
  if (name.empty()) return fail("--workflowName must not be empty", ErrorCode::kInvalid);
  if (name == "." || name == ".." || name.find('/') != std::string::npos || name.front() == '.') {
    return fail(fmt::format("--workflowName '{}' must be a plain name (no '/', not starting "
                            "with '.')",
                            name),
                ErrorCode::kInvalid);
  }
  for (char c : name) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      return fail("--workflowName must not contain control characters", ErrorCode::kInvalid);
    }
  }
  return {};
}

Result<void> check_hdfs_root(const std::string& root) {
  if (root.empty() || root.front() != '/') {
    return fail(fmt::format("--hdfsRoot '{}' must be an absolute path", root), ErrorCode::kInvalid);
  }
  if (root.size() > 1 && root.back() == '/') {
    return fail(fmt::format("--hdfsRoot '{}' must not end in '/'", root), ErrorCode::kInvalid);
  }
  if (root == "/") return fail("--hdfsRoot must not be '/'", ErrorCode::kInvalid);
  return {};
}

Result<CiOptions> options_from(const po::variables_map& vm) {
  CiOptions options;
  if (!vm.count("mode")) return fail("missing --mode (deploy or undeploy)", ErrorCode::kInvalid);
  const std::string mode = vm["mode"].as<std::string>();
  if (mode == "deploy") {
    options.mode = DeployMode::kDeploy;
  } else if (mode == "undeploy") {
    options.mode = DeployMode::kUndeploy;
  } else {
    return fail(fmt::format("unknown --mode '{}' (deploy or undeploy)", mode), ErrorCode::kInvalid);
  }
  if (!vm.count("workflowName")) return fail("missing --workflowName", ErrorCode::kInvalid);
  options.workflow_name = vm["workflowName"].as<std::string>();
  if (auto ok = check_workflow_name(options.workflow_name); !ok) return tl::unexpected(ok.error());
  if (!vm.count("target"))
    return fail("missing --target (a file: or sftp: URL)", ErrorCode::kInvalid);
  options.target_url = vm["target"].as<std::string>();
  if (auto location = parse_location(options.target_url); !location) {
    return fail("--target: " + location.error().message, ErrorCode::kInvalid);
  }
  options.deploy_dir = vm["deployDir"].as<std::string>();
  if (options.deploy_dir.empty()) return fail("--deployDir must not be empty", ErrorCode::kInvalid);
  options.hdfs_root = vm["hdfsRoot"].as<std::string>();
  if (auto ok = check_hdfs_root(options.hdfs_root); !ok) return tl::unexpected(ok.error());
  options.accept_new_host_key = vm.count("accept-new-host-key") > 0;
  options.plan = vm.count("plan") > 0;
  if (options.plan && options.mode != DeployMode::kDeploy) {
    return fail("--plan goes with --mode deploy", ErrorCode::kInvalid);
  }
  return options;
}

}  // namespace

Result<CiCommandLine> parse_ci_command_line(int argc, const char* const* argv) {
  const po::options_description description = describe_options();
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(description).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    return fail(e.what(), ErrorCode::kInvalid);
  }
  CiCommandLine result;
  if (vm.count("help")) {
    std::ostringstream help;
    help << kCiUsage << "\n" << description;
    result.help = help.str();
    return result;
  }
  auto options = options_from(vm);
  if (!options) return tl::unexpected(options.error());
  result.options = std::move(*options);
  return result;
}

}  // namespace celos
