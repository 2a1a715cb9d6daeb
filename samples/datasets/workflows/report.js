// An hourly report over the cleaned clicks: clicks per page.
importDefaults("datasets");

celos.defineWorkflow({
    "id": "clicks-report",
    "schedule": celos.hourlySchedule(),
    "schedulingStrategy": celos.serialSchedulingStrategy(),
    "externalService": localCommand(
        "mkdir -p \"$OUT\" && awk '{ n[$1] += $2 } END { for (p in n) print p, n[p] }' " +
        "\"$CELOS_INPUT_CLICKS_CLEAN/part\" | sort > \"$OUT/report.txt\"",
        CLICKS_REPORT.path),
    "inputs": ["clicks-clean"],
    "outputs": [CLICKS_REPORT],
    "startTime": START_TIME,
});
