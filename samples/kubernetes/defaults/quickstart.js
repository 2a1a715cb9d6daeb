// Paths of the quickstart's celos home and how to reach Kubernetes. scripts/quickstart.sh writes
// this file into the home's defaults directory with @CELOS_HOME@ and @START_TIME@ replaced;
// every workflow file that needs them calls importDefaults("quickstart").

// Hourly input buckets arrive under INPUT/<dc>/<yyyy-mm-dd>/<HH>00/, each with a _READY file
// written last; outputs go to OUTPUT/<dc>/<yyyy-mm-dd>/<HH>00/. On a real cluster these would be
// a volume every pod mounts; the sample's API server runs pods as local processes.
var QUICKSTART_HOME = "@CELOS_HOME@";
var INPUT = QUICKSTART_HOME + "/data/input";
var OUTPUT = QUICKSTART_HOME + "/data/output";

// Only the last few hours run: the quickstart generated input for them.
var START_TIME = "@START_TIME@";

// hdfsCheckTrigger without a file system argument checks the local disk.
var CELOS_DEFAULT_HDFS = "file:///";

// What every Job of the sample shares: the kubeconfig run.sh wrote (its current-context names
// the API server, the token and the CA), the namespace and the image.
var KUBE = {
    "kubeconfig": QUICKSTART_HOME + "/kube/kubeconfig",
    "namespace": "wordcount",
    "image": "debian:12",
    "resources": {"cpu": "250m", "memory": "128Mi"},
    "labels": {"app.kubernetes.io/part-of": "celos-quickstart"},
    "ttlSecondsAfterFinished": 86400
};

// KUBE with the fields of `extra` added (a Job's command and environment).
function kubeJob(extra) {
    var options = {};
    var key;
    for (key in KUBE) { options[key] = KUBE[key]; }
    for (key in extra) { options[key] = extra[key]; }
    return celos.kubernetesExternalService(options);
}
