// Daily jobs in three zones' local time, for samples/simulate/dst.json: what each zone's two
// daylight-saving changes of 2026 do to them (docs/time-zones.md).
function daily(id, expression, options) {
    celos.defineWorkflow({
        "id": id,
        "schedule": celos.cronSchedule(expression, options),
        "schedulingStrategy": celos.serialSchedulingStrategy(),
        "trigger": celos.alwaysTrigger(),
        "externalService": celos.commandExternalService("true"),
        "startTime": "2026-03-01T00:00Z",
    });
}

// 06:00 in Paris: 05:00Z in winter, 04:00Z in summer (30 March to 25 October 2026).
daily("paris-0600", "0 0 6 * * ?", {timeZone: "Europe/Paris"});
// 02:30 in Paris: on 29 March it does not exist (shifted to 03:30 local, 01:30Z); on
// 25 October it happens twice (the first pass, 00:30Z, by default).
daily("paris-0230", "0 30 2 * * ?", {timeZone: "Europe/Paris"});
// The same time, once with an explicit rule: no slot on the spring night, both in autumn.
daily("paris-0230-skip-both", "0 30 2 * * ?",
      {timeZone: "Europe/Paris", dst: {gap: "skip", overlap: "both"}});
// 06:00 in New York: 11:00Z in winter, 10:00Z in summer (8 March to 1 November 2026).
daily("newyork-0600", "0 0 6 * * ?", {timeZone: "America/New_York"});
// 06:00 on Lord Howe Island, whose clocks move by 30 minutes: 19:00Z the day before in its
// summer (+11:00, until 5 April 2026 and from 4 October), 19:30Z in its winter (+10:30).
daily("lordhowe-0600", "0 0 6 * * ?", {timeZone: "Australia/Lord_Howe"});
