package configs

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// IO is what a task family's points are to a model: every input an image
// of Height x Width x Channels values stored row-major (h, w, c), a plain
// vector being 1 x 1 x n, and Outputs values per point. Classes says the
// outputs are the scores of Outputs classes (softmax cross-entropy, scored
// by accuracy); otherwise they are regressed under the squared error.
type IO struct {
	Height, Width, Channels int
	Outputs                 int
	Classes                 bool
}

// Inputs is the number of input values of one point.
func (io IO) Inputs() int { return io.Height * io.Width * io.Channels }

func (io IO) String() string {
	return fmt.Sprintf("%dx%dx%d inputs, %d outputs", io.Height, io.Width, io.Channels, io.Outputs)
}

// Model is the config side of a meta-learned network: a model is one
// package that registers itself (for the engine side, see package models)
// and nothing else in the framework knows its name. Its config section is
// model.<Name>, decoded strictly into NewSection's type; model.kind chooses
// it.
type Model interface {
	// Name is the value of model.kind and the key of the model's section
	// under model.
	Name() string
	// NewSection returns the section's defaults: a pointer to a struct
	// whose fields carry yaml tags.
	NewSection() any
	// Check validates the section (c.Model.Section()) against the points
	// of c's family, with k's helpers: the ranges of its fields, and a
	// network that cannot take io (too small an image for its pooling, say)
	// naming the field and the shapes.
	Check(c Config, io IO, k *Checker)
	// Memory estimates the graphs of a run of c (TrainGraph, EvalGraph,
	// SharedGraphs), from its sizes alone.
	Memory(c Config, io IO) MemoryEstimate
	// Shrink lists the section's size fields with a copy of the section in
	// which each is at its smallest, so that a config over the memory limit
	// can name the field that dominates it.
	Shrink(c Config) []Shrunk
	// CPUs is the number of CPUs a run of c uses well (a Slurm task's
	// default): 1 for a network whose graph is too small to share.
	CPUs(c Config) int
}

// Rated is a model whose training arithmetic (as graph.Objective.FLOPs
// counts it) runs at a rate of its own in the fast build, in FLOPs per
// CPU-second, for the Slurm time estimate; a model without it is estimated
// at package slurm's default rate.
type Rated interface {
	FLOPsPerCPUSecond(c Config, io IO) float64
}

// Shrunk is a model's size field at its smallest: Section is a copy of
// the model's section with the field at Path set so.
type Shrunk struct {
	Path    string
	Value   any
	Section any
}

// LegacyModel is a model whose settings were fields of the model section
// itself before models had sections of their own (run directories written
// then). Legacy returns, for such a key of model and its value, the keys
// and values of the model's own section it stands for; ok is false for a
// key the model never had.
type LegacyModel interface {
	Legacy(key string, value *yaml.Node) (section []*yaml.Node, ok bool)
}

// models is the table of registered models, in registration order.
var models []Model

// RegisterModel adds a model (package models' Register calls it). It panics
// on a name registered twice, one that cannot be the key of its section
// model.NAME (internal/regname) or a section that is not a pointer to a
// struct: all are programming errors.
func RegisterModel(m Model) {
	if _, ok := LookupModel(m.Name()); ok {
		panic(fmt.Sprintf("configs: model %q registered twice", m.Name()))
	}
	checkRegistered("model", m.Name(), m.NewSection(), ModelConfig{})
	models = append(models, m)
}

// LookupModel returns the registered model called name.
func LookupModel(name string) (Model, bool) {
	i := slices.IndexFunc(models, func(m Model) bool { return m.Name() == name })
	if i < 0 {
		return nil, false
	}
	return models[i], true
}

// ModelNamed returns the registered model called name, or an error that
// names it and lists the registered ones.
func ModelNamed(name string) (Model, error) {
	if m, ok := LookupModel(name); ok {
		return m, nil
	}
	return nil, fmt.Errorf("model %q is not registered (registered: %s)", name, strings.Join(ModelNames(), ", "))
}

// ModelNames lists the registered models in registration order.
func ModelNames() []string {
	names := make([]string, len(models))
	for i, m := range models {
		names[i] = m.Name()
	}
	return names
}

// Section returns the section of the chosen model (model.kind), a pointer
// to its type, or nil for an unregistered kind.
func (m ModelConfig) Section() any { return m.Sections[m.Kind] }

// IO returns the points c's family gives its model, or an error for an
// unregistered family.
func (c Config) IO() (IO, error) {
	f, err := c.Family()
	if err != nil {
		return IO{}, err
	}
	return f.IO(c), nil
}

// copySection returns a copy of the section s points to that shares no
// list with it.
func copySection(s any) any {
	v := reflect.New(reflect.TypeOf(s).Elem())
	v.Elem().Set(reflect.ValueOf(s).Elem())
	for i := range v.Elem().NumField() {
		if f := v.Elem().Field(i); f.Kind() == reflect.Slice && !f.IsNil() && f.CanSet() {
			f.Set(reflect.AppendSlice(reflect.MakeSlice(f.Type(), 0, f.Len()), f))
		}
	}
	return v.Interface()
}

// copySections copies every section of m.
func copySections(m map[string]any) map[string]any {
	out := maps.Clone(m)
	for k, s := range out {
		out[k] = copySection(s)
	}
	return out
}

// legacyModel rewrites the model mapping of a file written before models
// had sections (model: {hidden: [40, 40], cnn: {filters: 64}, dtype: ...})
// into the section of kind (the family's model): the keys the registered
// models claim (LegacyModel) are removed, and those of kind become its
// section. A mapping with a kind or a model section is left as it is.
// Unless translate, nothing is rewritten and the claimed keys are
// returned, for oldLayoutError.
func legacyModel(root *yaml.Node, kind func(root *yaml.Node) string, translate bool) (old []oldKey) {
	model := mappingValue(root, "model")
	if model == nil || model.Kind != yaml.MappingNode || mappingValue(model, "kind") != nil {
		return nil
	}
	for _, name := range ModelNames() {
		if mappingValue(model, name) != nil {
			return nil
		}
	}
	claimed := map[string][]*yaml.Node{}
	var keep []*yaml.Node
	for i := 0; i+1 < len(model.Content); i += 2 {
		k, v := model.Content[i], model.Content[i+1]
		took := false
		for _, m := range models {
			if l, ok := m.(LegacyModel); ok {
				if sec, ok := l.Legacy(k.Value, v); ok {
					claimed[m.Name()] = append(claimed[m.Name()], sec...)
					if !took {
						old = append(old, oldKey{k.Value, k.Line, m.Name()})
					}
					took = true
				}
			}
		}
		if !took {
			keep = append(keep, k, v)
		}
	}
	if len(claimed) == 0 || !translate {
		return old
	}
	name := kind(root)
	model.Content = keep
	if sec, ok := claimed[name]; ok && len(sec) > 0 {
		line := sec[0].Line
		model.Content = append(model.Content,
			&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: name, Line: line},
			&yaml.Node{Kind: yaml.MappingNode, Content: sec, Line: line})
	}
	return nil
}

// oldKey is a key of the model section's old layout: its line and the
// model whose section holds it now.
type oldKey struct {
	key   string
	line  int
	model string
}

// oldLayoutError refuses the model section's old layout in file, naming
// each key's line, where it moved and what model allows.
func oldLayoutError(file string, old []oldKey) error {
	allowed := append([]string{"kind", "dtype"}, ModelNames()...)
	errs := make([]error, len(old))
	for i, o := range old {
		errs[i] = fmt.Errorf("%s:%d: model.%s: is the layout before models had sections: write model: {kind: %s, %s: {...}} with the model's settings in its section (model allows: %s; docs/configs.md)",
			file, o.line, o.key, o.model, o.model, strings.Join(allowed, ", "))
	}
	return errors.Join(errs...)
}

// mappingValue is the value of key in mapping n, or nil.
func mappingValue(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// Tensor is a named tensor of a trained model, row-major.
type Tensor struct {
	Name  string
	Shape []int
	Data  []float64
}

// Exporter is a model whose trained parameters leave Go as named tensors
// with PyTorch's names and layouts (a state_dict: convolution kernels
// OIHW, linear weights [out, in]), so that a plain PyTorch module of the
// same architecture loads them.
type Exporter interface {
	// Tensors splits the model's flat parameters w (a prefix of model.json's
	// w; an inner loop's own parameters follow) into named tensors.
	Tensors(c Config, io IO, w []float64) ([]Tensor, error)
}
