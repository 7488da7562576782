package slurm

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Option is an sbatch long option passed through to both scripts, such as
// {"partition", "gpu"}; an empty Value is a flag without argument
// (--exclusive).
type Option struct {
	Name, Value string
}

// sbatchOptions are sbatch's long options (Slurm 22.05, `man sbatch`).
var sbatchOptions = []string{
	"account", "acctg-freq", "array", "batch", "bb", "bbf", "begin", "chdir",
	"cluster-constraint", "clusters", "comment", "constraint", "container",
	"contiguous", "core-spec", "cores-per-socket", "cpu-freq", "cpus-per-gpu",
	"cpus-per-task", "deadline", "delay-boot", "dependency", "distribution",
	"error", "exclude", "exclusive", "export", "export-file", "extra-node-info",
	"get-user-env", "gid", "gpu-bind", "gpu-freq", "gpus", "gpus-per-node",
	"gpus-per-socket", "gpus-per-task", "gres", "gres-flags", "help", "hint",
	"hold", "ignore-pbs", "input", "job-name", "kill-on-invalid-dep",
	"licenses", "mail-type", "mail-user", "mcs-label", "mem", "mem-bind",
	"mem-per-cpu", "mem-per-gpu", "mincpus", "network", "nice", "no-kill",
	"no-requeue", "nodefile", "nodelist", "nodes", "ntasks", "ntasks-per-core",
	"ntasks-per-gpu", "ntasks-per-node", "ntasks-per-socket", "open-mode",
	"output", "overcommit", "oversubscribe", "parsable", "partition", "power",
	"prefer", "priority", "profile", "propagate", "qos", "quiet", "reboot",
	"requeue", "reservation", "signal", "sockets-per-node", "spread-job",
	"switches", "test-only", "thread-spec", "threads-per-core", "time",
	"time-min", "tmp", "uid", "usage", "verbose", "version", "wait",
	"wait-all-nodes", "wckey", "wrap",
}

// managed are the sbatch options the scripts set themselves, and what to
// use instead.
var managed = map[string]string{
	"array":         "the unfinished cells (limit with -max-running)",
	"cpus-per-task": "-cpus",
	"mem":           "-mem",
	"mem-per-cpu":   "-mem (the scripts ask for memory per task)",
	"mem-per-gpu":   "-mem (the scripts ask for memory per task)",
	"time":          "-time",
	"dependency":    "the report job's dependency on the array",
	"requeue":       "the array's --requeue",
	"no-requeue":    "the array's --requeue",
	"signal":        "the array's --signal=B:USR1@120",
	"output":        "the logs in DIR/slurm/logs",
	"error":         "the logs in DIR/slurm/logs",
	"open-mode":     "the logs in DIR/slurm/logs",
	"job-name":      "the experiment's name",
	"chdir":         "the absolute paths of the scripts",
	"wrap":          "the scripts",
	"batch":         "the scripts",
	"parsable":      "trmaml's submission",
	"test-only":     "-dry-run",
	"wait":          "trmaml status",
	"hold":          "scontrol hold after submission",
	"help":          "",
	"usage":         "",
	"version":       "",
}

// CheckOption refuses what is not an sbatch long option, or is one the
// scripts set themselves, or has a value that would break the script line
// (a newline, or a leading dash) or that sbatch would not read as given (a
// blank or a quote).
func CheckOption(name, value string) error {
	if !slices.Contains(sbatchOptions, name) {
		return fmt.Errorf("%q is not an sbatch long option (see man sbatch; write it without the leading --)", name)
	}
	if instead, ok := managed[name]; ok {
		if instead == "" {
			return fmt.Errorf("--%s is not for a batch script", name)
		}
		return fmt.Errorf("--%s is set by trmaml: use %s", name, instead)
	}
	if strings.ContainsAny(value, "\n\r\x00") || strings.HasPrefix(value, "-") {
		return fmt.Errorf("--%s: value %q must be one line not starting with -", name, value)
	}
	if strings.ContainsAny(value, " \t\"'") {
		return fmt.Errorf("--%s: value %q holds a blank or a quote: sbatch splits an #SBATCH line at blanks and drops quotes, so the job would not get the value as given", name, value)
	}
	return nil
}

// Merge returns the options of the experiment file overridden by those of
// the command line, sorted by name, each checked with CheckOption.
func Merge(file, flags map[string]string) ([]Option, error) {
	all := map[string]string{}
	for k, v := range file {
		all[k] = v
	}
	for k, v := range flags {
		all[k] = v
	}
	var opts []Option
	for k, v := range all {
		if err := CheckOption(k, v); err != nil {
			return nil, err
		}
		opts = append(opts, Option{k, v})
	}
	sort.Slice(opts, func(i, j int) bool { return opts[i].Name < opts[j].Name })
	return opts, nil
}

// Options are the sbatch options of an experiment file's slurm: section,
// name to value. Values are taken as written (partition: gpu, nodes: 1); a
// key without value is a flag (exclusive:).
type Options map[string]string

// UnmarshalYAML reads a mapping of scalars, refusing nested values and
// repeated keys.
func (o *Options) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("want a mapping of sbatch long options to values (partition: gpu)")
	}
	m := Options{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if _, dup := m[k.Value]; dup {
			return fmt.Errorf("%s (line %d): duplicate key", k.Value, k.Line)
		}
		if v.Kind != yaml.ScalarNode {
			return fmt.Errorf("%s (line %d): want a single value", k.Value, v.Line)
		}
		m[k.Value] = v.Value
		if v.ShortTag() == "!!null" {
			m[k.Value] = ""
		}
	}
	*o = m
	return nil
}
