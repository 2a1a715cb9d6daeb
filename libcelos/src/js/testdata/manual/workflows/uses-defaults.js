// Loads the file foo.js from the defaults directory
celos.importDefaults("foo");

celos.defineWorkflow({
    "id": "uses-defaults",
    "schedule": celos.hourlySchedule(),
    "schedulingStrategy": celos.serialSchedulingStrategy(),
    "trigger": celos.hdfsCheckTrigger(INPUT_ROOT + "/${year}-${month}-${day}/_READY"),
    "externalService": celos.oozieExternalService({
        "oozie.wf.application.path": "/uses-defaults/workflow.xml",
    })
});
