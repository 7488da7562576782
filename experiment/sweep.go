package experiment

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/metalearn"
	"gopkg.in/yaml.v3"
)

// Sweep is the general grid axis of an experiment file: config field paths
// and the values each takes, in the file's order. The values are checked
// against the field's type when the grid is expanded (configs.ParseWith).
type Sweep struct {
	Axes []Axis
}

// Axis is one swept field: its dotted path, its values as YAML nodes, and
// the line of its key in the experiment file.
type Axis struct {
	Path   string
	Values []*yaml.Node
	Line   int
}

// UnmarshalYAML reads a mapping from field paths to non-empty lists of
// distinct values.
func (s *Sweep) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("want a mapping from config field paths to lists of values, e.g. {cvar.level: [1, 0.5]}")
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		path := k.Value
		if slices.ContainsFunc(s.Axes, func(a Axis) bool { return a.Path == path }) {
			return fmt.Errorf("line %d: %s: duplicate key: each field may be swept once", k.Line, path)
		}
		if v.Kind != yaml.SequenceNode || len(v.Content) == 0 {
			return fmt.Errorf("line %d: %s: want a non-empty list of values", v.Line, path)
		}
		seen := map[string]bool{}
		for _, e := range v.Content {
			if e.Kind != yaml.ScalarNode && e.Kind != yaml.SequenceNode {
				return fmt.Errorf("line %d: %s: each value must be a number, string, boolean or list", e.Line, path)
			}
			if label := valueLabel(e); seen[label] {
				return fmt.Errorf("line %d: %s: value %s is repeated (runs would share a directory)", e.Line, path, label)
			} else {
				seen[label] = true
			}
		}
		s.Axes = append(s.Axes, Axis{Path: path, Values: v.Content, Line: k.Line})
	}
	return nil
}

// gridFields are the config fields that an experiment file sets through
// keys of its own, with the key to use instead of a sweep axis: a swept
// value would be overwritten, leaving runs that differ only in their names.
var gridFields = map[string]string{
	"name":      "runs are named after the experiment and their cell",
	"algorithm": "list the methods under algorithms",
	"order":     "list the orders under orders",
	"seed":      "list the seeds under seeds",
}

// check refuses axes that could not change a run: the fields the
// experiment sets itself (gridFields, and meta.iterations when iterations
// is set) and the settings of a method that no run of algorithms uses.
// Each error names the axis as sweep.PATH, which lines places.
func (s Sweep) check(spec Spec, lines map[string]int) []error {
	var errs []error
	for _, a := range s.Axes {
		key := "sweep." + a.Path
		lines[key] = a.Line
		section, _, _ := strings.Cut(a.Path, ".")
		if use, ok := gridFields[a.Path]; ok {
			errs = append(errs, configs.FieldError(key, axisValues(a.Values), "is set by the experiment file itself: "+use))
		}
		if a.Path == "meta.iterations" && spec.Iterations > 0 {
			errs = append(errs, configs.FieldError(key, axisValues(a.Values), fmt.Sprintf("would be overridden by iterations: %d: remove one of the two", spec.Iterations)))
		}
		if _, isMethod := metalearn.LookupMethod(section); isMethod && !slices.Contains(spec.Algorithms, section) {
			errs = append(errs, configs.FieldError(key, axisValues(a.Values), fmt.Sprintf("is a setting of %s, which is not among algorithms %v: no run would read it", section, spec.Algorithms)))
		}
	}
	return errs
}

// checkRead refuses, after expansion, an axis under the section of a task
// family that no run of the grid has (task.linreg.tasks over sinusoid
// runs), and two runs that would be the same run under different names,
// which an axis the runs do not read produces.
func (s Sweep) checkRead(cfgs []configs.Config, lines map[string]int) []error {
	var errs []error
	families := map[string]bool{}
	for _, c := range cfgs {
		families[c.Task.Family] = true
	}
	for _, a := range s.Axes {
		parts := strings.SplitN(a.Path, ".", 3)
		if len(parts) < 3 || parts[0] != "task" || families[parts[1]] {
			continue
		}
		if _, ok := configs.LookupFamily(parts[1]); ok {
			errs = append(errs, configs.FieldError("sweep."+a.Path, axisValues(a.Values),
				fmt.Sprintf("is a setting of task family %s, and the runs are of %s: no run would read it", parts[1], strings.Join(slices.Sorted(maps.Keys(families)), ", "))))
		}
	}
	if len(errs) > 0 {
		return errs
	}
	seen := map[string]string{}
	for _, c := range cfgs {
		named := c.Name
		c.Name = ""
		raw, err := c.Marshal()
		if err != nil {
			return []error{err}
		}
		if other, ok := seen[string(raw)]; ok {
			return []error{configs.FieldError("sweep", named, fmt.Sprintf("is the same run as %s (seed %d): a swept field is not read by these runs", other, c.Seed))}
		}
		seen[string(raw)] = named
	}
	return nil
}

// axisValues writes an axis's values as a YAML flow list in errors.
type axisValues []*yaml.Node

func (v axisValues) String() string {
	parts := make([]string, len(v))
	for i, n := range v {
		parts[i] = valueLabel(n)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// axesOf returns the axes that apply to runs of algorithm alg: all but
// those under another registered method's section.
func (s Sweep) axesOf(alg string) []Axis {
	var out []Axis
	for _, a := range s.Axes {
		section, _, _ := strings.Cut(a.Path, ".")
		if _, isMethod := metalearn.LookupMethod(section); isMethod && section != alg {
			continue
		}
		out = append(out, a)
	}
	return out
}

// cells returns the grid's cells over axes, the first axis slowest: each
// cell is one value per axis.
func cells(axes []Axis) [][]configs.Setting {
	out := [][]configs.Setting{nil}
	for _, a := range axes {
		var next [][]configs.Setting
		for _, prefix := range out {
			for _, v := range a.Values {
				next = append(next, append(slices.Clone(prefix), configs.Setting{Path: a.Path, Value: v, In: "sweep"}))
			}
		}
		out = next
	}
	return out
}

// cellLabel names a cell in run names: "_KEYVALUE" (e.g. "_steps5",
// "_p_lr2.5e-06") for each axis with more
// than one value (an axis of one value is a setting, not a dimension),
// KEY the field's last path element; the setting a method sweeps
// (metalearn.MethodInfo.Swept, e.g. cvar.level) is already in Variant.
func cellLabel(axes []Axis, cell []configs.Setting, alg string) string {
	var b strings.Builder
	for i, a := range axes {
		if len(a.Values) < 2 {
			continue
		}
		if info, ok := metalearn.LookupMethod(alg); ok && info.Swept != "" && a.Path == alg+"."+info.Swept {
			continue
		}
		key := a.Path[strings.LastIndex(a.Path, ".")+1:]
		b.WriteString("_" + key + valueLabel(cell[i].Value))
	}
	return b.String()
}

// valueLabel writes a swept value compactly and as a valid config name:
// numbers as Go formats them (2.5e-06), lists joined by "x", mappings (the
// entries of a list of structs, e.g. linreg's tasks) as KEYVALUE joined by
// "_", any other character than A-Z a-z 0-9 _ . - as "_".
func valueLabel(n *yaml.Node) string {
	if n.Kind == yaml.MappingNode {
		var parts []string
		for i := 0; i+1 < len(n.Content); i += 2 {
			parts = append(parts, valueLabel(n.Content[i])+valueLabel(n.Content[i+1]))
		}
		return strings.Join(parts, "_")
	}
	if n.Kind == yaml.SequenceNode {
		parts := make([]string, len(n.Content))
		for i, e := range n.Content {
			parts[i] = valueLabel(e)
		}
		return strings.Join(parts, "x")
	}
	if f, err := strconv.ParseFloat(n.Value, 64); err == nil && (n.ShortTag() == "!!int" || n.ShortTag() == "!!float") {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return strings.Map(func(r rune) rune {
		if r < 128 && (r == '_' || r == '.' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return r
		}
		return '_'
	}, n.Value)
}
