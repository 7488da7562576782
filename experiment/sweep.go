package experiment

import (
	"fmt"
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

// Axis is one swept field: its dotted path and its values as YAML nodes.
type Axis struct {
	Path   string
	Values []*yaml.Node
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
		s.Axes = append(s.Axes, Axis{Path: path, Values: v.Content})
	}
	return nil
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
				next = append(next, append(slices.Clone(prefix), configs.Setting{Path: a.Path, Value: v}))
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
// numbers as Go formats them (2.5e-06), lists joined by "x", any other
// character than A-Z a-z 0-9 _ . - as "_".
func valueLabel(n *yaml.Node) string {
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

// flowList writes values as a YAML flow list, for the rewrite of
// cvar_levels.
func flowList(values []float64) string {
	parts := make([]string, len(values))
	for i, v := range values {
		parts[i] = strconv.FormatFloat(v, 'g', -1, 64)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
