// A daily roll-up of new data only: each run gets every cleaned hour that no earlier successful
// run consumed (mode "new"), oldest first, as ${inputs.clicks-clean} in the command and
// $CELOS_INPUT_CLICKS_CLEAN in the environment (paths joined by ","). An hour that arrives late
// is rolled up by the next day's run; none is counted twice, even across a crash of celos.
importDefaults("datasets");

celos.defineWorkflow({
    "id": "clicks-rollup",
    "schedule": celos.cronSchedule("0 0 0 * * ?"),
    "schedulingStrategy": celos.serialSchedulingStrategy(),
    "externalService": localCommand(
        "mkdir -p \"$OUT\" && echo '${inputs.clicks-clean}' > \"$OUT/inputs.txt\" && " +
        "for d in $(echo \"$CELOS_INPUT_CLICKS_CLEAN\" | tr , ' '); do cat \"$d/part\"; done | " +
        "awk '{ n[$1] += $2 } END { for (p in n) print p, n[p] }' | sort > \"$OUT/rollup.txt\"",
        CLICKS_DAILY.path),
    "inputs": [{"dataset": CLICKS_CLEAN, "mode": "new"}],
    "outputs": [CLICKS_DAILY],
    "startTime": START_TIME,
});
