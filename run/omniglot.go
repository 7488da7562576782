package run

// DataRoot, if not empty, is the data root of every Omniglot run of this
// process, overriding the configs' data.root (the -data flag of the CLI).
// Where the data lies is a property of the machine, not of the experiment,
// so it is not written into config.yaml, and a run moved to another machine
// resumes with that machine's -data.
var DataRoot string
