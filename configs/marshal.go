package configs

import (
	"bytes"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/trmaml/trmaml/metalearn"
	"gopkg.in/yaml.v3"
)

// Marshal returns the YAML of the resolved config, every field stated and
// lists written inline as [a, b]; Parse reads it back to an equal Config.
func (c Config) Marshal() ([]byte, error) {
	// Only what the run reads: each section it does not (another
	// method's) is left out unless the file would then read back
	// differently (a family may require another method's setting stated).
	omit := map[string]bool{}
	out, err := c.marshal(omit)
	if err != nil {
		return nil, err
	}
	var unread []string
	for _, info := range metalearn.Methods() {
		if info.Name != c.Algorithm {
			unread = append(unread, info.Name)
		}
	}
	want := c.Read()
	for _, name := range unread {
		omit[name] = true
		trimmed, err := c.marshal(omit)
		if err != nil {
			return nil, err
		}
		if back, err := Parse("config.yaml", trimmed); err == nil && reflect.DeepEqual(back.Read(), want) {
			out = trimmed
			continue
		}
		omit[name] = false
	}
	return out, nil
}

// marshal writes c as Marshal does, with the sections of the methods in
// omit left out.
func (c Config) marshal(omit map[string]bool) ([]byte, error) {
	var n yaml.Node
	if err := n.Encode(c); err != nil {
		return nil, err
	}
	if err := insertSections(&n, c, omit); err != nil {
		return nil, err
	}
	inlineLists(&n)
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&n); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// insertSections adds the registered methods' sections after meta, in
// registration order, except those in omit, the section of c's family at
// the end of task and that of c's model at the end of model (the other
// families' and models' sections are their defaults, which Parse
// restores).
func insertSections(root *yaml.Node, c Config, omit map[string]bool) error {
	var methods []*yaml.Node
	for _, info := range metalearn.Methods() {
		if omit[info.Name] {
			continue
		}
		if m := c.Methods[info.Name]; m != nil && len(taggedFields(reflect.TypeOf(m).Elem())) > 0 {
			v, err := sectionNode(m)
			if err != nil {
				return err
			}
			methods = append(methods, &yaml.Node{Kind: yaml.ScalarNode, Value: info.Name}, v)
		}
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		switch root.Content[i].Value {
		case "meta":
			root.Content = slices.Insert(root.Content, i+2, methods...)
			i += len(methods)
		case "task":
			task := root.Content[i+1]
			for _, f := range families {
				if s := c.Task.Sections[f.Name()]; s != nil && f.Name() == c.Task.Family {
					v, err := sectionNode(s)
					if err != nil {
						return err
					}
					task.Content = append(task.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: f.Name()}, v)
				}
			}
		case "model":
			if s := c.Model.Section(); s != nil {
				v, err := sectionNode(s)
				if err != nil {
					return err
				}
				model := root.Content[i+1]
				model.Content = append(model.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: c.Model.Kind}, v)
			}
		case "inner":
			if s := c.Inner.Sections[c.Inner.Kind]; s != nil && len(taggedFields(reflect.TypeOf(s).Elem())) > 0 {
				v, err := sectionNode(s)
				if err != nil {
					return err
				}
				inner := root.Content[i+1]
				inner.Content = append(inner.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: c.Inner.Kind}, v)
			}
		}
	}
	return nil
}

// Read is c without what a run of c does not read: the settings of the
// other methods, task families, models and inner loops.
// Two configs with the same Read train the same run; config.yaml
// (Marshal) holds Read's fields.
func (c Config) Read() Config {
	c = c.Clone()
	maps.DeleteFunc(c.Methods, func(name string, _ metalearn.MethodSettings) bool { return name != c.Algorithm })
	maps.DeleteFunc(c.Task.Sections, func(name string, _ any) bool { return name != c.Task.Family })
	maps.DeleteFunc(c.Model.Sections, func(name string, _ any) bool { return name != c.Model.Kind })
	maps.DeleteFunc(c.Inner.Sections, func(name string, _ any) bool { return name != c.Inner.Kind })
	return c
}

// CheckRead refuses a field path (e.g. "cvar.level", "task.omniglot.ways")
// that lies in a section a run of c does not read: one that Read drops
// (another method's, family's, model's or inner loop's), so that a change
// to it would be lost without a word.
func (c Config) CheckRead(path string) error {
	keys := strings.Split(path, ".")
	read := c.Read()
	unread := func(field, section, chosen, value string) error {
		return fmt.Errorf("%s: a run of this config does not read the %s section (its %s is %s; set %s=%s too to use it)",
			path, section, field, chosen, field, value)
	}
	if _, ok := c.Methods[keys[0]]; ok && read.Methods[keys[0]] == nil {
		return unread("algorithm", keys[0], c.Algorithm, keys[0])
	}
	if len(keys) < 3 {
		return nil
	}
	for _, g := range []struct {
		top, field       string
		sections, isRead map[string]any
		chosen           string
	}{
		{"task", "task.family", c.Task.Sections, read.Task.Sections, c.Task.Family},
		{"model", "model.kind", c.Model.Sections, read.Model.Sections, c.Model.Kind},
		{"inner", "inner.kind", c.Inner.Sections, read.Inner.Sections, c.Inner.Kind},
	} {
		_, exists := g.sections[keys[1]]
		if _, ok := g.isRead[keys[1]]; keys[0] == g.top && exists && !ok {
			return unread(g.field, g.top+"."+keys[1], g.chosen, keys[1])
		}
	}
	return nil
}

// sectionNode encodes the yaml-tagged fields of the struct s points to.
func sectionNode(s any) (*yaml.Node, error) {
	v := reflect.ValueOf(s).Elem()
	n := &yaml.Node{Kind: yaml.MappingNode}
	for _, f := range taggedFields(v.Type()) {
		var val yaml.Node
		if err := val.Encode(v.Field(f.index).Interface()); err != nil {
			return nil, err
		}
		n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: f.key}, &val)
	}
	return n, nil
}

// inlineLists sets flow style on every sequence under n; all lists of the
// schema are short lists of numbers.
func inlineLists(n *yaml.Node) {
	if n.Kind == yaml.SequenceNode {
		n.Style = yaml.FlowStyle
	}
	for _, c := range n.Content {
		inlineLists(c)
	}
}
