// Defaults of the wordcount project, deployed by celos-ci to <defaults dir>/wordcount.js and
// imported by workflow.js with importDefaults("wordcount"). Adapt the three URLs to your cluster.
var CELOS_DEFAULT_HDFS = "hdfs://nameservice1";
var CELOS_DEFAULT_OOZIE = "http://oozie.example.com:11000/oozie";
var CELOS_DEFAULT_OOZIE_PROPERTIES = {
    "user.name": "celos",
    "jobTracker": "resourcemanager.example.com:8032",
    "nameNode": CELOS_DEFAULT_HDFS,
    "oozie.launcher.mapreduce.job.queuename": "default",
};

// celos-ci puts deploy/hdfs/ at <hdfsRoot>/wordcount (default hdfsRoot: /user/celos/app).
var WORDCOUNT_APP = "/user/celos/app/wordcount";
var INPUT = "/input";
var OUTPUT = "/output";
