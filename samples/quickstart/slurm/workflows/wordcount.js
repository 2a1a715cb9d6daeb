// The wordcount story of the quickstart (samples/quickstart/local), run as Slurm batch jobs:
// one workflow per data center; each hourly slot waits for its input bucket's _READY file, then
// sbatch runs the counting script on the cluster. The script is a plain shell script: the slot's
// time is in ${year}... (replaced by celos) and in CELOS_* variables (set by celos), the paths
// come through options.env. stdout and stderr land in the slot's job directory.
importDefaults("quickstart");

var HOUR_DIR = "${year}-${month}-${day}/${hour}00";

// Counts into a temporary file first, so that a reader never sees half an output; _SUCCESS
// marks a finished bucket, as Hadoop jobs do.
var COUNT_WORDS = [
    "set -e",
    "echo \"counting $CELOS_WORKFLOW_ID $CELOS_SLOT_TIME on $(hostname) as Slurm job $SLURM_JOB_ID\"",
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
        "externalService": celos.slurmExternalService(COUNT_WORDS, {
            "env": {"IN": input, "OUT": output},
            "time": "00:05:00",   // a Slurm time limit: the job is cancelled after 5 minutes
            "cpus": 1
        }),
        "startTime": START_TIME,
        "maxRetryCount": 2,
        "url": "file://" + OUTPUT + "/" + dc,
        "contacts": [{"name": "Quickstart", "email": "quickstart@example.com"}],
    });
}

defineWordCountWorkflow("nyc");
defineWordCountWorkflow("lax");
