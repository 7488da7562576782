package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/trmaml/trmaml/graph"
	"github.com/trmaml/trmaml/run"
	"github.com/trmaml/trmaml/rundir"
)

func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// noEmptyFlags refuses a string flag given with an empty value, which the
// command would otherwise take as the flag left out (its default).
func noEmptyFlags(fs *flag.FlagSet) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		if g, ok := f.Value.(flag.Getter); ok && err == nil {
			if v, ok := g.Get().(string); ok && v == "" {
				err = fmt.Errorf("%s: -%s is empty: give a value, or leave the flag out for its default", fs.Name(), f.Name)
			}
		}
	})
	return err
}

// outNotRun refuses an -out that is a run directory (rundir.RunFileIn):
// what cmd would write there is no file of the run, its manifest would
// not list it, and it would be taken for one of the run's files. A grid's
// directory, or a new directory beside the runs, is fine.
func outNotRun(cmd, out string) error {
	if f := rundir.RunFileIn(out); f != "" {
		return fmt.Errorf("%s: -out %s is a run directory (it holds %s): what %s writes there would not be in its manifest and would be taken for the run's files; give -out a directory that is no run's (for the runs of a grid, its directory, e.g. %s)",
			cmd, out, f, cmd, filepath.Dir(filepath.Clean(out)))
	}
	return nil
}

// dataFlag adds -data, the Omniglot data root of the command's runs, to the
// options it returns.
func dataFlag(fs *flag.FlagSet) *run.Options {
	opts := new(run.Options)
	fs.Func("data", "Omniglot data root holding omniglot/ (overrides the config's data.root and $TRMAML_DATA; not written into config.yaml)", func(v string) error {
		if v == "" {
			return errors.New("must not be empty")
		}
		opts.DataRoot = v
		return nil
	})
	return opts
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// setFlags collects the repeatable -set FIELD=VALUE flag.
type setFlags []string

func (s *setFlags) String() string { return strings.Join(*s, " ") }

func (s *setFlags) Set(v string) error {
	*s = append(*s, v)
	return nil
}

// noteBLAS prints graph.BLASNote, if there is one, before a command that
// trains or evaluates: a forced older OpenBLAS kernel set would otherwise
// show only in the timings.
func noteBLAS(stderr io.Writer) {
	if n := graph.BLASNote(); n != "" {
		fmt.Fprintln(stderr, "trmaml: note:", n)
	}
}

// dirList is a repeatable directory flag.
type dirList []string

func (d *dirList) String() string { return strings.Join(*d, " ") }

func (d *dirList) Set(s string) error {
	*d = append(*d, s)
	return nil
}

// parseRunArgs parses the flags of a results command, which may come
// before, between or after the directory arguments: "-runs A B -out X"
// gives the directories A and B. It returns the -runs values followed by
// the positional arguments.
func parseRunArgs(fs *flag.FlagSet, runs *dirList, args []string) ([]string, error) {
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return nil, err
	}
	return append(slices.Clone(*runs), pos...), nil
}

// parseInterleaved parses fs's flags wherever they come among the
// positional arguments, which it returns ("DIR -addr X" sets -addr, not a
// directory named -addr); everything after "--" is positional.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			return append(pos, rest...), nil
		}
		if len(rest) == 0 {
			return pos, nil
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
}
