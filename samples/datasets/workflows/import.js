// Imports an hour of clicks (here: makes them up). It declares what it writes: clean.js does
// not need to know the path, and a failed import leaves no half-written hour behind (atomic
// outputs: celos removes an incomplete instance and writes _SUCCESS after the command).
importDefaults("datasets");

celos.defineWorkflow({
    "id": "clicks-import",
    "schedule": celos.hourlySchedule(),
    "schedulingStrategy": celos.serialSchedulingStrategy(),
    "trigger": celos.alwaysTrigger(),
    "externalService": localCommand(
        "mkdir -p \"$OUT\" && printf '# page clicks\\nhome 3\\ncart 1\\nhome 2\\n' > \"$OUT/part\"",
        CLICKS_RAW.path),
    "outputs": [CLICKS_RAW],
    "startTime": START_TIME,
});
