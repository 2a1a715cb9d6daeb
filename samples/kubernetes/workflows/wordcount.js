// The wordcount story of the quickstart (samples/quickstart/local), run as Kubernetes Jobs: one
// workflow per data center; each hourly slot waits for its input bucket's _READY file, then a
// Job counts the words. The slot's time is in ${year}... (replaced by celos in command, args
// and env) and in the CELOS_* variables of the container; the paths come through env. The
// pod's log is the slot's log (GET /api/v1/slot-log, the UI's slot page).
importDefaults("quickstart");

var HOUR_DIR = "${year}-${month}-${day}/${hour}00";

// Counts into a temporary file first, so that a reader never sees half an output; _SUCCESS
// marks a finished bucket, as Hadoop jobs do.
var COUNT_WORDS = [
    "set -e",
    "echo \"counting $CELOS_WORKFLOW_ID $CELOS_SLOT_TIME in pod $HOSTNAME\"",
    "mkdir -p \"$OUT\"",
    "cat \"$IN\"/*.txt | tr -cs '[:alnum:]' '\\n' | tr '[:upper:]' '[:lower:]' | " +
        "grep -v '^$' | sort | uniq -c | sort -k1,1nr -k2 > \"$OUT/part-00000.tmp\"",
    "mv \"$OUT/part-00000.tmp\" \"$OUT/part-00000\"",
    "touch \"$OUT/_SUCCESS\""
].join("\n");

function defineWordCountWorkflow(dc) {
    var input = INPUT + "/" + dc + "/" + HOUR_DIR;
    var output = OUTPUT + "/" + dc + "/" + HOUR_DIR;
    celos.defineWorkflow({
        "id": "wordcount-" + dc,
        "schedule": celos.hourlySchedule(),
        "schedulingStrategy": celos.serialSchedulingStrategy(),
        "trigger": celos.hdfsCheckTrigger(input + "/_READY", "file:///"),
        "externalService": kubeJob({
            "command": ["/bin/sh", "-c", COUNT_WORDS],
            "env": {"IN": input, "OUT": output}
        }),
        "startTime": START_TIME,
        "maxRetryCount": 2,
        "url": "file://" + OUTPUT + "/" + dc,
        "contacts": [{"name": "Quickstart", "email": "quickstart@example.com"}],
    });
}

defineWordCountWorkflow("nyc");
defineWordCountWorkflow("lax");
