// The datasets of the sample, declared once and shared by every workflow file that calls
// importDefaults("datasets"). @DATA@ and @START_TIME@ are replaced when the sample is installed
// (see ../README.md).
var DATA = "@DATA@";
var START_TIME = "@START_TIME@";

// Raw clicks, imported every hour; a cleaned copy; an hourly report; a daily roll-up.
var CLICKS_RAW = celos.dataset("clicks-raw", {"path": DATA + "/raw/${year}-${month}-${day}/${hour}00"});
var CLICKS_CLEAN = celos.dataset("clicks-clean", {"path": DATA + "/clean/${year}-${month}-${day}/${hour}00"});
var CLICKS_REPORT = celos.dataset("clicks-report", {"path": DATA + "/report/${year}-${month}-${day}/${hour}00"});
var CLICKS_DAILY = celos.dataset("clicks-daily", {"path": DATA + "/daily/${year}-${month}-${day}"});

function localCommand(command, out) {
    return celos.commandExternalService(command, {"env": {"OUT": out}});
}
