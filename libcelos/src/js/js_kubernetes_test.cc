// celos.kubernetesExternalService: the options reach the Job (through a fake HTTP client), and
// every bad option is a load error naming the function and the field; the file and line come
// from the loader.
#include <fstream>

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include "celos/time.h"
#include "js/js_api.h"
#include "testing/fakes.h"
#include "testing/temp_dir.h"

namespace celos {
namespace {

namespace json = boost::json;

struct KubernetesLoaded {
  testing::TempDir dir;
  std::shared_ptr<testing::FakeHttpClient> http = std::make_shared<testing::FakeHttpClient>();
  js::FileEvaluation result;

  explicit KubernetesLoaded(const std::string& options) {
    std::ofstream(dir.path() + "/kubeconfig")
        << "current-context: c\nclusters:\n- name: k\n  cluster: {server: \"http://kube\"}\n"
           "contexts:\n- name: c\n  context: {cluster: k, user: u, namespace: team}\n"
           "users:\n- name: u\n  user: {token: abc}\n";
    js::EvalSettings settings;
    settings.db_dir = dir.path();
    settings.kubernetes_http = http;
    http->on([](const HttpRequest& r) -> std::optional<Result<HttpResponse>> {
      return HttpResponse{201, {}, r.body};
    });
    const std::string with_config =
        options[0] != '{' || options.find("kubeconfig") != std::string::npos ||
                options.find("inCluster") != std::string::npos
            ? options
            : "{kubeconfig: '" + dir.path() + "/kubeconfig', " + options.substr(1);
    result = js::evaluate_workflow_file(
        settings, "kube.js",
        "celos.defineWorkflow({id: 'wc', schedule: celos.hourlySchedule(),\n"
        "schedulingStrategy: celos.serialSchedulingStrategy(), trigger: celos.alwaysTrigger(),\n"
        "externalService: celos.kubernetesExternalService(" +
            with_config + ")});\n");
  }
  std::string error() const {
    REQUIRE(result.errors.size() == 1);
    CHECK(result.errors[0].file == "kube.js");
    CHECK(result.errors[0].line == 3);
    return result.errors[0].message;
  }
};

TEST_CASE("kubernetesExternalService hands its options to the Job") {
  KubernetesLoaded loaded(
      "{image: 'debian:12', command: ['sh', '-c'], args: ['wc -l /in/${day}'], "
      "env: {N: 3}, resources: {cpu: '500m', memory: '1Gi'}, serviceAccount: 'etl', "
      "nodeSelector: {disk: 'ssd'}, labels: {team: 'data'}, ttlSecondsAfterFinished: 60}");
  INFO((loaded.result.errors.empty() ? "" : loaded.result.errors[0].message));
  REQUIRE(loaded.result.errors.empty());
  auto service = loaded.result.workflows.at(0).service;
  CHECK(service->kind() == "kubernetes");
  CHECK(loaded.http->requests.empty());  // loading calls no API server
  const SlotId slot{"wc", make_time(2015, 9, 12, 20, 0, 0)};
  CHECK(service->submit(slot).value() == "team/wc-20150912t200000-1");  // the context's namespace
  const json::value job = json::parse(loaded.http->requests.at(0).body);
  const json::value& spec = job.at("spec").at("template").at("spec");
  CHECK(spec.at("containers").at(0).at("args") == json::parse(R"(["wc -l /in/12"])"));
  CHECK(spec.at("serviceAccountName") == "etl");
  CHECK(job.at("spec").at("ttlSecondsAfterFinished") == 60);
  CHECK(job.at("metadata").at("labels").at("team") == "data");
}

TEST_CASE("bad kubernetesExternalService options are load errors naming the field") {
  const std::pair<std::string, std::string> cases[] = {
      {"{image: 'x', colour: 'red'}", "unknown field \"colour\""},
      {"{command: ['true']}", "field \"image\" is required"},
      {"{image: 'x', command: 'echo hi'}", "field \"command\" must be a list of strings"},
      {"{image: 'x', command: ['echo', 3]}", "field \"command[1]\" must be a string"},
      {"{image: 'x', resources: {cpu: 'lots'}}", "field \"resources.cpu\" \"lots\" is not a"},
      {"{image: 'x', resources: {gpu: 1}}", "field \"resources.gpu\" is not known"},
      {"{image: 'x', namespace: 'Team_A'}", "field \"namespace\" \"Team_A\" is not a namespace"},
      {"{image: 'x', labels: {'celos.slot': 'x'}}", "must not set \"celos.slot\""},
      {"{image: 'x', labels: {'bad key': 'x'}}", "\"bad key\" is not a valid label key"},
      {"{image: 'x', ttlSecondsAfterFinished: -1}", "field \"ttlSecondsAfterFinished\""},
      {"{image: 'x', inCluster: 'yes'}", "field \"inCluster\" must be true or false"},
      {"{image: 'x', inCluster: true, kubeconfig: '/k'}", "cannot be true together with"},
      {"{image: 'x', env: {'1X': 'y'}}", "invalid variable name \"1X\""},
  };
  for (const auto& [options, expected] : cases) {
    INFO(options);
    KubernetesLoaded loaded(options);
    const std::string message = loaded.error();
    CHECK(message.find("celos.kubernetesExternalService") != std::string::npos);
    CHECK(message.find(expected) != std::string::npos);
  }
  KubernetesLoaded not_object("'debian:12'");
  CHECK(not_object.error().find("argument options must be an object") != std::string::npos);
}
}  // namespace
}  // namespace celos
