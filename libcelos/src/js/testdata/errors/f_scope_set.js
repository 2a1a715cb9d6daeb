// Sets globals; g_scope_read.js must not see them.
var SHARED = "from f";
CELOS_DEFAULT_HDFS = "hdfs://from-f:8020";
celos.defineWorkflow({
    "id": "scope-f",
    "schedule": celos.hourlySchedule(),
    "schedulingStrategy": celos.serialSchedulingStrategy(),
    "trigger": celos.hdfsCheckTrigger("/f"),
    "externalService": celos.commandExternalService("true")
});
