// A downstream workflow: once both data centers' counts of an hour succeeded, add them up in a
// Job too. Shows successTrigger and andTrigger, and a workflow depending on others.
importDefaults("quickstart");

var HOUR_DIR = "${year}-${month}-${day}/${hour}00";

celos.defineWorkflow({
    "id": "wordcount-total",
    "schedule": celos.hourlySchedule(),
    "schedulingStrategy": celos.serialSchedulingStrategy(),
    "trigger": celos.andTrigger(celos.successTrigger("wordcount-nyc"),
                                celos.successTrigger("wordcount-lax")),
    "externalService": kubeJob({
        "command": ["/bin/sh", "-c",
                    "set -e; mkdir -p \"$OUT\"; " +
                    "cat \"$NYC\"/part-00000 \"$LAX\"/part-00000 | " +
                    "awk '{ n[$2] += $1 } END { for (w in n) print n[w], w }' | " +
                    "sort -k1,1nr -k2 > \"$OUT/part-00000.tmp\"; " +
                    "mv \"$OUT/part-00000.tmp\" \"$OUT/part-00000\"; touch \"$OUT/_SUCCESS\""],
        "env": {"NYC": OUTPUT + "/nyc/" + HOUR_DIR,
                "LAX": OUTPUT + "/lax/" + HOUR_DIR,
                "OUT": OUTPUT + "/total/" + HOUR_DIR}
    }),
    "startTime": START_TIME,
});
