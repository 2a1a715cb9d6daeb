// Its id says whether f_scope_set.js's global leaked into this file.
celos.defineWorkflow({
    "id": "scope-" + typeof SHARED,
    "schedule": celos.hourlySchedule(),
    "schedulingStrategy": celos.serialSchedulingStrategy(),
    "trigger": celos.hdfsCheckTrigger("/g"),
    "externalService": celos.commandExternalService("true")
});
