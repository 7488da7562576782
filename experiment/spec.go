package experiment

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/metalearn"
	"github.com/trmaml/trmaml/run"
	"github.com/trmaml/trmaml/slurm"
	"gopkg.in/yaml.v3"
)

// Spec is an experiment file.
type Spec struct {
	// Name identifies the experiment; runs are named NAME-VARIANT-ORDER
	// (see Parse).
	Name string `yaml:"name"`
	// Base is the config every run starts from: a path relative to the
	// experiment file, or the name of a built-in config.
	Base string `yaml:"base"`
	// Algorithms, Orders and Seeds span the grid.
	Algorithms []string `yaml:"algorithms"`
	Orders     []string `yaml:"orders"`
	Seeds      []uint64 `yaml:"seeds"`
	// Sweep spans further axes of the grid: each key is a config field
	// path, each value the list of values to run, as if the base config
	// stated them (e.g. sweep: {cvar.level: [1, 0.5, 0.1], inner.steps: [1,
	// 5]}). An axis under a method's section (cvar.level) applies to that
	// method's runs only.
	Sweep Sweep `yaml:"sweep"`
	// Iterations, if not zero, overrides the base config's meta.iterations.
	Iterations int `yaml:"iterations"`
	// Slurm holds sbatch long options, without the dashes, that
	// `trmaml experiment -slurm` passes to its jobs (partition: gpu,
	// account: lab); package slurm says which are allowed.
	Slurm slurm.Options `yaml:"slurm"`
}

// Job is one run of the grid.
type Job struct {
	Config configs.Config
	Dir    string
	// unreadable is why the config.yaml of a run Find found cannot be
	// read (Config is then zero): Cells reports the run as damaged.
	unreadable error
}

// Load reads an experiment file and expands it like Parse.
func Load(path string, opts run.Options) (Spec, []configs.Config, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return Spec{}, nil, err
	}
	return Parse(path, raw, opts)
}

// Expand reads an experiment file, checks it and expands it into its runs'
// configs like Parse, but builds none of them, so it reads no data: what
// listing a grid's cells needs (trmaml status, experiment -list) on a
// machine without the data. A grid it accepts may still fail Parse's build.
func Expand(path string) (Spec, []configs.Config, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return Spec{}, nil, err
	}
	spec, out, lines, err := expand(path, raw)
	if err != nil {
		return Spec{}, nil, err
	}
	if errs := spec.Sweep.checkRead(out, lines); len(errs) > 0 {
		return Spec{}, nil, configs.Locate(path, lines, errs)
	}
	return spec, out, nil
}

// Parse decodes an experiment file with the config loader's strict rules
// and messages (configs.DecodeStrict: no unknown or duplicate keys, no float
// where an integer belongs, no seed outside uint64, exactly one document),
// checks it, and expands it into configs, each built once (run.Build) so
// that no run of a bad grid starts (with opts: the data an Omniglot grid
// loads then, it shares through opts.Datasets). path names the file in
// errors and anchors a relative base.
func Parse(path string, raw []byte, opts run.Options) (Spec, []configs.Config, error) {
	spec, out, lines, err := expand(path, raw)
	if err != nil {
		return Spec{}, nil, err
	}
	for _, c := range out {
		if _, err := run.Build(c, opts); err != nil {
			return Spec{}, nil, fmt.Errorf("%s: run %s seed %d: %w", path, c.Name, c.Seed, err)
		}
	}
	if errs := spec.Sweep.checkRead(out, lines); len(errs) > 0 {
		return Spec{}, nil, configs.Locate(path, lines, errs)
	}
	return spec, out, nil
}

// expand decodes and checks an experiment file and expands it into its
// runs' configs, in cell order, with the file's line of each key.
func expand(path string, raw []byte) (Spec, []configs.Config, map[string]int, error) {
	var spec Spec
	lines, err := configs.DecodeStrict(path, raw, &spec)
	if err != nil {
		return Spec{}, nil, nil, err
	}
	var errs []error
	check := func(field string, value any, ok bool, format string, args ...any) {
		if !ok {
			errs = append(errs, configs.FieldError(field, value, fmt.Sprintf(format, args...)))
		}
	}
	check("name", spec.Name, spec.Name != "" && !strings.ContainsAny(spec.Name, `/\ `), "must be a non-empty name without slashes or spaces")
	check("base", spec.Base, spec.Base != "", "must name a config file (relative to the experiment file) or a built-in config %v", configs.BuiltinNames())
	check("algorithms", spec.Algorithms, len(spec.Algorithms) > 0 && allIn(spec.Algorithms, metalearn.MethodNames()...), "must list some of the registered methods %v", metalearn.MethodNames())
	check("orders", spec.Orders, len(spec.Orders) > 0 && allIn(spec.Orders, "second", "first"), "must list second and/or first")
	check("seeds", spec.Seeds, len(spec.Seeds) > 0, "must list at least one seed")
	check("algorithms", spec.Algorithms, unique(spec.Algorithms), "must not repeat an entry")
	check("orders", spec.Orders, unique(spec.Orders), "must not repeat an entry")
	check("seeds", spec.Seeds, unique(spec.Seeds), "must not repeat a seed (runs would share a directory)")
	check("iterations", spec.Iterations, spec.Iterations >= 0 && spec.Iterations <= configs.MaxIterations,
		"must be in [0, %d] (0 keeps the base config's)", configs.MaxIterations)
	slurmLines(raw, lines)
	for _, k := range slices.Sorted(maps.Keys(spec.Slurm)) {
		if err := slurm.CheckOption(k, spec.Slurm[k]); err != nil {
			errs = append(errs, configs.FieldError("slurm."+k, spec.Slurm[k], err.Error()))
		}
	}
	errs = append(errs, spec.Sweep.check(spec, lines)...)
	if len(errs) > 0 {
		return Spec{}, nil, nil, configs.Locate(path, lines, errs)
	}
	if _, err := loadBase(path, spec.Base, nil); err != nil {
		return Spec{}, nil, nil, configs.Locate(path, lines, []error{configs.FieldError("base", spec.Base, err.Error())})
	}
	var out []configs.Config
	for _, alg := range spec.Algorithms {
		axes := spec.Sweep.axesOf(alg)
		for _, cell := range cells(axes) {
			c, err := loadBase(path, spec.Base, cell)
			if err != nil {
				return Spec{}, nil, nil, baseError(path, spec.Base, lines, err)
			}
			c.Algorithm = alg
			variant := Variant(c) + cellLabel(axes, cell, alg)
			for _, order := range spec.Orders {
				for _, seed := range spec.Seeds {
					c := c.Clone()
					c.Name = fmt.Sprintf("%s-%s-%s", spec.Name, variant, order)
					c.Order, c.Seed = order, seed
					if spec.Iterations > 0 {
						c.Meta.Iterations = spec.Iterations
					}
					out = append(out, c)
				}
			}
		}
	}
	return spec, out, lines, nil
}

// slurmLines adds the line of each key of the slurm: section to lines, as
// slurm.KEY, so that a refused sbatch option is reported at its own line:
// the strict decoder hands the section to slurm.Options whole and records
// only the section's.
func slurmLines(raw []byte, lines map[string]int) {
	var doc yaml.Node
	if yaml.Unmarshal(raw, &doc) != nil || len(doc.Content) == 0 {
		return
	}
	root := doc.Content[0]
	for i := 0; i+1 < len(root.Content); i += 2 {
		if m := root.Content[i+1]; root.Content[i].Value == "slurm" && m.Kind == yaml.MappingNode {
			for j := 0; j+1 < len(m.Content); j += 2 {
				lines["slurm."+m.Content[j].Value] = m.Content[j].Line
			}
		}
	}
}

// baseError places an error of loading the base with a cell's sweep
// values: the base file's own errors after the experiment file's base
// field, and those of the sweep values, which name their own line of the
// experiment file (configs.SettingsError), as they are.
func baseError(path, base string, lines map[string]int, err error) error {
	var se *configs.SettingsError
	if !errors.As(err, &se) {
		return configs.Locate(path, lines, []error{configs.FieldError("base", base, err.Error())})
	}
	if se.File == nil {
		return se.Settings
	}
	return errors.Join(baseError(path, base, lines, se.File), se.Settings)
}

// loadBase loads an experiment's base: a file relative to the experiment
// file (a name with a slash or a .yaml suffix is always a file), or the name
// of a built-in config.
func loadBase(specPath, base string, sets []configs.Setting) (configs.Config, error) {
	if filepath.IsAbs(base) {
		return configs.Config{}, fmt.Errorf("must be relative to the experiment file, not absolute")
	}
	p := filepath.Join(filepath.Dir(specPath), base)
	st, err := os.Stat(p)
	switch {
	case err == nil && st.IsDir():
		return configs.Config{}, fmt.Errorf("%s is a directory, want a config file", p)
	case err == nil:
		return configs.LoadWith(p, specPath, sets)
	case strings.ContainsAny(base, `/\`) || strings.HasSuffix(base, ".yaml"):
		return configs.Config{}, fmt.Errorf("%s: no such file", p)
	}
	c, err := configs.BuiltinWith(base, specPath, sets)
	if errors.Is(err, configs.ErrNoBuiltin) {
		return configs.Config{}, fmt.Errorf("no file %s and %v", p, err)
	}
	return c, err
}

func allIn(values []string, allowed ...string) bool {
	for _, v := range values {
		if !slices.Contains(allowed, v) {
			return false
		}
	}
	return true
}

func unique[T comparable](values []T) bool {
	seen := map[T]bool{}
	for _, v := range values {
		if seen[v] {
			return false
		}
		seen[v] = true
	}
	return true
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// Jobs places each config in its run directory under out,
// VARIANT-ORDER-seedN (the run's name without the experiment's, see
// Parse), keeping the order of the configs: job i is the grid's cell i.
func Jobs(cfgs []configs.Config, out string) []Job {
	jobs := make([]Job, len(cfgs))
	for i, c := range cfgs {
		jobs[i] = Job{Config: c, Dir: filepath.Join(out, fmt.Sprintf("%s-seed%d", cellName(c), c.Seed))}
	}
	return jobs
}

// cellName is VARIANT-ORDER, the part of a grid run's name NAME-VARIANT-ORDER
// after the experiment's name: from the last "-ALGORITHM" on, since the
// variant starts with the algorithm.
func cellName(c configs.Config) string {
	head := strings.TrimSuffix(c.Name, "-"+c.Order)
	if i := strings.LastIndex(head, "-"+c.Algorithm); i >= 0 {
		return c.Name[i+1:]
	}
	return Variant(c) + "-" + c.Order
}

// Variant names a run's method in run names and directories: the
// algorithm, with the value of the setting its method sweeps (for CVaR
// the level, e.g. "cvar0.05"; metalearn.MethodInfo.Swept).
func Variant(c configs.Config) string {
	if info, err := c.MethodInfo(); err == nil && info.Swept != "" {
		return c.Algorithm + strconv.FormatFloat(c.Swept(), 'g', -1, 64)
	}
	return c.Algorithm
}
