// The wordcount story of the Celos manual on Hadoop: one workflow per data center, each hourly
// slot waiting for its input bucket's _READY file in HDFS, then running the Oozie workflow in
// hdfs/workflow.xml (a MapReduce word count) on that bucket.
importDefaults("wordcount");

var HOUR_DIR = "${year}-${month}-${day}/${hour}00";

function defineWordCountWorkflow(dc) {
    celos.defineWorkflow({
        "id": "wordcount-" + dc,
        "schedule": celos.hourlySchedule(),
        "schedulingStrategy": celos.serialSchedulingStrategy(),
        "trigger": celos.hdfsCheckTrigger(INPUT + "/" + dc + "/" + HOUR_DIR + "/_READY"),
        "externalService": celos.oozieExternalService({
            "oozie.wf.application.path": WORDCOUNT_APP + "/workflow.xml",
            "inputPath": INPUT + "/" + dc + "/" + HOUR_DIR,
            "outputPath": OUTPUT + "/" + dc + "/" + HOUR_DIR,
        }),
        "startTime": "2015-09-01T00:00Z",
        "maxRetryCount": 2,
        "contacts": [{"name": "Data team", "email": "data@example.com"}],
    });
}

defineWordCountWorkflow("nyc");
defineWordCountWorkflow("lax");
