// "good-a" is already defined by a_good.js (evaluated first): this definition is the error.
celos.defineWorkflow({
    "id": "good-a",
    "schedule": celos.minutelySchedule(),
    "schedulingStrategy": celos.serialSchedulingStrategy(),
    "trigger": celos.alwaysTrigger(),
    "externalService": celos.commandExternalService("false")
});
celos.defineWorkflow({
    "id": "unique-e",
    "schedule": celos.hourlySchedule(),
    "schedulingStrategy": celos.serialSchedulingStrategy(),
    "trigger": celos.alwaysTrigger(),
    "externalService": celos.commandExternalService("true")
});
