// Paths of the quickstart's celos home. scripts/quickstart.sh writes this file into the home's
// defaults directory with @CELOS_HOME@ and @START_TIME@ replaced; every workflow file that needs
// them calls importDefaults("quickstart").

// Hourly input buckets arrive under INPUT/<dc>/<yyyy-mm-dd>/<HH>00/, each with a _READY file
// written last; outputs go to OUTPUT/<dc>/<yyyy-mm-dd>/<HH>00/.
var QUICKSTART_HOME = "@CELOS_HOME@";
var INPUT = QUICKSTART_HOME + "/data/input";
var OUTPUT = QUICKSTART_HOME + "/data/output";

// Only the last few hours run: the quickstart generated input for them.
var START_TIME = "@START_TIME@";

// hdfsCheckTrigger without a file system argument checks the local disk.
var CELOS_DEFAULT_HDFS = "file:///";
