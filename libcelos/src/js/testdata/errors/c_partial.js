// Defines one workflow, then throws on line 9: the first workflow stays defined.
celos.defineWorkflow({
    "id": "partial-before",
    "schedule": celos.hourlySchedule(),
    "schedulingStrategy": celos.serialSchedulingStrategy(),
    "trigger": celos.alwaysTrigger(),
    "externalService": celos.commandExternalService("true")
});
throw new Error("stop here");
celos.defineWorkflow({
    "id": "partial-after",
    "schedule": celos.hourlySchedule(),
    "schedulingStrategy": celos.serialSchedulingStrategy(),
    "trigger": celos.alwaysTrigger(),
    "externalService": celos.commandExternalService("true")
});
