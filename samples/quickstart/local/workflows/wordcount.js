// The wordcount story of the Celos manual, run on the local disk with no Hadoop: one helper
// function defines a workflow per data center. Each hourly slot waits for its input bucket's
// _READY file, then counts the words of the bucket with a shell pipeline.
importDefaults("quickstart");

var HOUR_DIR = "${year}-${month}-${day}/${hour}00";

function defineWordCountWorkflow(dc) {
    var input = INPUT + "/" + dc + "/" + HOUR_DIR;
    var output = OUTPUT + "/" + dc + "/" + HOUR_DIR;
    celos.defineWorkflow({
        "id": "wordcount-" + dc,
        "schedule": celos.hourlySchedule(),
        "schedulingStrategy": celos.serialSchedulingStrategy(),
        "trigger": celos.hdfsCheckTrigger(input + "/_READY", "file:///"),
        // Counts into a temporary file first, so that a reader never sees half an output;
        // _SUCCESS marks a finished bucket, as Hadoop jobs do.
        "externalService": celos.commandExternalService(
            "mkdir -p \"$OUT\" && " +
            "cat \"$IN\"/*.txt | tr -cs '[:alnum:]' '\\n' | tr '[:upper:]' '[:lower:]' | " +
            "grep -v '^$' | sort | uniq -c | sort -k1,1nr -k2 > \"$OUT/part-00000.tmp\" && " +
            "mv \"$OUT/part-00000.tmp\" \"$OUT/part-00000\" && touch \"$OUT/_SUCCESS\"",
            {"env": {"IN": input, "OUT": output}}),
        "startTime": START_TIME,
        "maxRetryCount": 2,
        // Informational: shown by the API and the UI.
        "url": "file://" + OUTPUT + "/" + dc,
        "contacts": [{"name": "Quickstart", "email": "quickstart@example.com"}],
    });
}

defineWordCountWorkflow("nyc");
defineWordCountWorkflow("lax");
