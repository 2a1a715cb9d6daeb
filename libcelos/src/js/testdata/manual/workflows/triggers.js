// The trigger, schedule and strategy examples of the reference manual, one workflow each.
function define(id, trigger, schedule, strategy) {
    celos.defineWorkflow({
        "id": id,
        "schedule": schedule || celos.hourlySchedule(),
        "schedulingStrategy": strategy || celos.serialSchedulingStrategy(),
        "trigger": trigger,
        "externalService": celos.oozieExternalService({
            "oozie.wf.application.path": "/workflow-dir/workflow.xml",
            "prop1": "Hello. It is the year ${year}!",
            "prop2": "Just another property."
        })
    });
}

define("hdfs-check", celos.hdfsCheckTrigger("/logs/${year}-${month}-${day}/${hour}00/_READY"));
define("success", celos.successTrigger("workflow-foo"));
define("delay", celos.delayTrigger(60 * 60));
define("offset", celos.offsetTrigger(60 * 60, celos.hdfsCheckTrigger("/logs/${year}-${month}-${day}/${hour}00/_READY")));

define("and", celos.andTrigger(celos.hdfsCheckTrigger("/input-a/${year}-${month}-${day}/${hour}00/_READY"),
                               celos.hdfsCheckTrigger("/input-b/${year}-${month}-${day}/${hour}00/_READY")));

var hdfsCheck = celos.hdfsCheckTrigger("/logs/${year}-${month}-${day}/${hour}00/_READY");
define("three-hours", celos.andTrigger(hdfsCheck,
                                       celos.offsetTrigger(60 * 60 * 1, hdfsCheck),
                                       celos.offsetTrigger(60 * 60 * 2, hdfsCheck)));

define("delay-not-success", celos.andTrigger(celos.delayTrigger(60 * 60),
                                             celos.notTrigger(celos.successTrigger("workflow-bar"))),
       celos.dependentSchedule("workflow-bar"));

define("or", celos.orTrigger(celos.hdfsCheckTrigger("/foo"),
                             celos.hdfsCheckTrigger("/bar")));
define("not", celos.notTrigger(celos.hdfsCheckTrigger("/foo")));
define("always", celos.alwaysTrigger());
define("cron-daily", celos.alwaysTrigger(), celos.cronSchedule("0 15 10 * * ?"));
define("minutely", celos.alwaysTrigger(), celos.minutelySchedule());
define("serial-3", celos.alwaysTrigger(), celos.hourlySchedule(), celos.serialSchedulingStrategy(3));
