// Cleans an hour of raw clicks. No trigger: with inputs, celos derives one that waits until
// clicks-import's slot of the same hour is SUCCESS. The input's path arrives as
// $CELOS_INPUT_CLICKS_RAW.
importDefaults("datasets");

celos.defineWorkflow({
    "id": "clicks-clean",
    "schedule": celos.hourlySchedule(),
    "schedulingStrategy": celos.serialSchedulingStrategy(),
    "externalService": localCommand(
        "mkdir -p \"$OUT\" && grep -v '^#' \"$CELOS_INPUT_CLICKS_RAW/part\" > \"$OUT/part\"",
        CLICKS_CLEAN.path),
    "inputs": [CLICKS_RAW],
    "outputs": [CLICKS_CLEAN],
    "startTime": START_TIME,
});
