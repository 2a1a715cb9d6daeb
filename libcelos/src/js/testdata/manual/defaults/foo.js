// Shared settings for the workflows that import "foo".
var CELOS_DEFAULT_HDFS = "hdfs://nameservice1";
var CELOS_DEFAULT_OOZIE = "http://oozie.example.com:11000/oozie";
var CELOS_DEFAULT_OOZIE_PROPERTIES = {
    "user.name": "celos",
    "queue": "default",
};
var INPUT_ROOT = "/input";
