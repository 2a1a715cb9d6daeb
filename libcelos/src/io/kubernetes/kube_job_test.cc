// Job names, label values, quantities, the Job body and what Job conditions and pods mean.
#include "io/kubernetes/kube_job.h"

#include <catch2/catch.hpp>

#include "celos/time.h"

using namespace celos;
namespace json = boost::json;

namespace {

const SlotId kSlot{"wordcount", make_time(2015, 9, 12, 20, 0, 0)};

bool dns_1123(const std::string& name) { return is_dns_label(name); }

}  // namespace

TEST_CASE("a Job name is the workflow, the slot time and the attempt") {
  CHECK(kubernetes_job_name(kSlot, 1) == "wordcount-20150912t200000-1");
  CHECK(kubernetes_job_name(kSlot, 12) == "wordcount-20150912t200000-12");
  CHECK(kubernetes_job_name({"wordcount", make_time(2015, 9, 12, 20, 0, 30)}, 1) ==
        "wordcount-20150912t200030-1");
}

TEST_CASE("workflow ids that are not DNS labels get a hash, so names stay unique") {
  const std::string a = kubernetes_job_name({"Word_Count", kSlot.time}, 1);
  const std::string b = kubernetes_job_name({"word-count", kSlot.time}, 1);
  const std::string c = kubernetes_job_name({"word.count", kSlot.time}, 1);
  CHECK(b == "word-count-20150912t200000-1");
  CHECK(a.starts_with("word-count-"));
  CHECK(a != b);
  CHECK(a != c);
  CHECK(kubernetes_job_name({"Word_Count", kSlot.time}, 1) == a);  // deterministic
  for (const std::string& id :
       {std::string(200, 'x'), std::string("@@@"), std::string("-a-"), std::string(70, 'y') + "_",
        std::string("ünïcödé/ids"), std::string("UPPER")}) {
    const std::string name = kubernetes_job_name({id, kSlot.time}, 100);
    INFO(id << " -> " << name);
    CHECK(name.size() <= 63);
    CHECK(dns_1123(name));
    CHECK(name.ends_with("-20150912t200000-100"));
  }
  CHECK(kubernetes_job_name({std::string(200, 'x'), kSlot.time}, 1) !=
        kubernetes_job_name({std::string(201, 'x'), kSlot.time}, 1));
}

TEST_CASE("label values keep what Kubernetes allows and hash the rest") {
  CHECK(kubernetes_label_value("wordcount") == "wordcount");
  CHECK(kubernetes_label_value("Word.Count_2") == "Word.Count_2");
  const std::string changed = kubernetes_label_value("team/word count");
  CHECK(changed.starts_with("team_word_count-"));
  CHECK(validate_kube_label("celos.workflow", changed));
  const std::string long_value = kubernetes_label_value(std::string(100, 'a'));
  CHECK(long_value.size() <= 63);
  CHECK(validate_kube_label("k", long_value));
  CHECK(validate_kube_label("k", kubernetes_label_value("@@")));
}

TEST_CASE("quantities and labels are checked as Kubernetes does") {
  for (const char* ok : {"500m", "2", "1Gi", "1.5G", "128974848", "1e3", "0.5", "100Ki", "+1"}) {
    CHECK(validate_kube_quantity(ok));
  }
  for (const char* bad : {"", "1 Gi", "two", "1GB", "-1", "1.2.3", "m"}) {
    INFO(bad);
    CHECK(!validate_kube_quantity(bad));
  }
  CHECK(validate_kube_label("app", "etl"));
  CHECK(validate_kube_label("example.com/team", ""));
  CHECK(!validate_kube_label("bad key", "x"));
  CHECK(!validate_kube_label("Example_.com/team", "x"));
  CHECK(!validate_kube_label("app", "-x"));
  CHECK(!validate_kube_label("app", std::string(64, 'a')));
}

TEST_CASE("the Job body: suspended, no retries, labels, annotations, env and resources") {
  KubernetesServiceOptions o;
  o.image = "debian:12";
  o.command = {"sh", "-c"};
  o.args = {"wc -l /in/${year}/${month}"};
  o.cpu = "500m";
  o.memory = "1Gi";
  o.service_account = "etl";
  o.node_selector = {{"disk", "ssd"}};
  o.labels = {{"team", "data"}};
  o.ttl_seconds_after_finished = 3600;
  const auto env = kube::job_environment(kSlot, {{"IN", "/in/${day}"}});
  CHECK(env.at("CELOS_SLOT_TIME") == "2015-09-12T20:00:00.000Z");
  CHECK(env.at("CELOS_HOUR") == "20");
  CHECK(env.at("IN") == "/in/12");
  const json::object body = kube::job_body(o, kSlot, "wordcount-20150912t200000-1", env);
  const json::value expected_meta = json::parse(R"({"name":"wordcount-20150912t200000-1",
    "labels":{"celos.slot":"20150912T200000Z","celos.workflow":"wordcount","team":"data"},
    "annotations":{"celos.workflow":"wordcount","celos.slot":"2015-09-12T20:00:00.000Z"}})");
  CHECK(body.at("metadata") == expected_meta);
  const json::object& spec = body.at("spec").as_object();
  CHECK(spec.at("suspend") == true);
  CHECK(spec.at("backoffLimit") == 0);
  CHECK(spec.at("ttlSecondsAfterFinished") == 3600);
  const json::value& pod = spec.at("template");
  CHECK(pod.at("metadata").at("labels") == expected_meta.at("labels"));
  CHECK(pod.at("spec").at("restartPolicy") == "Never");
  CHECK(pod.at("spec").at("serviceAccountName") == "etl");
  CHECK(pod.at("spec").at("nodeSelector") == json::parse(R"({"disk":"ssd"})"));
  const json::value& c = pod.at("spec").at("containers").at(0);
  CHECK(c.at("image") == "debian:12");
  CHECK(c.at("command") == json::parse(R"(["sh","-c"])"));
  CHECK(c.at("args") == json::parse(R"(["wc -l /in/2015/09"])"));
  CHECK(c.at("resources") == json::parse(R"({"requests":{"cpu":"500m","memory":"1Gi"},
                                             "limits":{"cpu":"500m","memory":"1Gi"}})"));
  CHECK(c.at("env").at(0) == json::parse(R"({"name":"CELOS_DAY","value":"12"})"));
  CHECK(kube::belongs_to(json::value(body), kSlot));
  CHECK(!kube::belongs_to(json::value(body), {"wordcount", make_time(2015, 9, 12, 21, 0, 0)}));
}

TEST_CASE("Job conditions map to slot states") {
  auto job = [](const std::string& status, bool suspend = false) {
    return json::parse(R"({"spec":{"suspend":)" + std::string(suspend ? "true" : "false") +
                       R"(},"status":)" + status + "}");
  };
  const std::string id = "etl/wc-1";
  CHECK(kube::job_status(job("{}", true), id) == JobState::kSubmitted);
  CHECK(kube::job_status(job(R"({"active":1})"), id) == JobState::kRunning);
  CHECK(kube::job_status(job(R"({"conditions":[{"type":"Complete","status":"True"}]})"), id) ==
        JobState::kSuccess);
  CHECK(kube::job_status(job(R"({"conditions":[{"type":"Complete","status":"False"}]})"), id) ==
        JobState::kRunning);
  const ExternalStatus failed = kube::job_status(
      job(R"({"conditions":[{"type":"Failed","status":"True","reason":"DeadlineExceeded",)"
          R"("message":"Job was active longer than specified deadline"}]})"),
      id);
  CHECK(failed.state == JobState::kFailure);
  CHECK(failed.message ==
        "Kubernetes Job etl/wc-1 failed: DeadlineExceeded (Job was active longer than specified "
        "deadline)");
  CHECK(kube::job_status(job(R"({"conditions":[{"type":"Failed","status":"True",)"
                             R"("reason":"BackoffLimitExceeded"}]})"),
                         id)
            .message == "Kubernetes Job etl/wc-1 failed: BackoffLimitExceeded");
  CHECK(kube::waits_for_pods(job(R"({"active":1})")));
  CHECK(!kube::waits_for_pods(job(R"({"active":1,"ready":1})")));
}

TEST_CASE("a pod Pending as Unschedulable says why") {
  const json::value pod = json::parse(R"({"metadata":{"name":"wc-1-abcde",
    "labels":{"batch.kubernetes.io/job-name":"wc-1"}},
    "status":{"phase":"Pending","conditions":[{"type":"PodScheduled","status":"False",
    "reason":"Unschedulable","message":"0/1 nodes are available: 1 Insufficient cpu."}]}})");
  CHECK(kube::pending_reason(pod) ==
        "pod wc-1-abcde is Unschedulable: 0/1 nodes are available: 1 Insufficient cpu.");
  CHECK(kube::job_of_pod(pod) == "wc-1");
  const json::value pulling = json::parse(R"({"metadata":{"name":"p"},"status":{"phase":"Pending",
    "containerStatuses":[{"state":{"waiting":{"reason":"ImagePullBackOff","message":"nope"}}}]}})");
  CHECK(kube::pending_reason(pulling) == "pod p waits: ImagePullBackOff: nope");
  CHECK(!kube::pending_reason(json::parse(R"({"status":{"phase":"Running"}})")));
  CHECK(kube::status_message(R"({"kind":"Status","message":"jobs.batch \"x\" not found"})") ==
        "jobs.batch \"x\" not found");
}
