// A plain, valid workflow file.
celos.defineWorkflow({
    "id": "good-a",
    "schedule": celos.hourlySchedule(),
    "schedulingStrategy": celos.serialSchedulingStrategy(),
    "trigger": celos.alwaysTrigger(),
    "externalService": celos.commandExternalService("true")
});
