// maxRetryCount is not a number: an error of the defineWorkflow call on line 2.
celos.defineWorkflow({
    "id": "bad-field",
    "schedule": celos.hourlySchedule(),
    "schedulingStrategy": celos.serialSchedulingStrategy(),
    "trigger": celos.alwaysTrigger(),
    "externalService": celos.commandExternalService("true"),
    "maxRetryCount": "three"
});
