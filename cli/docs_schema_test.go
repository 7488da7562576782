package cli

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/experiment"
	"github.com/trmaml/trmaml/metalearn"
)

// configSchema is every field of a config file with its type and default.
// The fields and types come from the yaml tags of configs.Config, of every
// registered method's settings (a top-level section named after the
// method) and of every registered task family's section (task.NAME); the
// defaults are what a file that states nothing else resolves to, read back
// from its marshalled YAML, which must hold the same fields (a method's
// section and a kind of model's fields are written for the configs that
// read them: each is taken from a file naming the method or family).
func configSchema(t *testing.T) map[string]schemaField {
	t.Helper()
	types := map[string]string{}
	typeFields(reflect.TypeFor[configs.Config](), "", types)
	for _, m := range metalearn.Methods() {
		typeFields(reflect.TypeOf(m.New()).Elem(), m.Name, types)
	}
	families := configs.FamilyNames()
	if len(families) < 2 {
		t.Fatalf("registered task families: %v", families)
	}
	defaults := marshalledFields(t, resolved(t, "{}"))
	// config.yaml holds the section of the run's own method only: each
	// method's defaults are those of a file that names it.
	for _, m := range metalearn.Methods() {
		c, err := configs.Parse("defaults.yaml", []byte("algorithm: "+m.Name+"\n"))
		if err != nil {
			c = configs.Defaults() // a method whose configs must state more
			c.Algorithm = m.Name
		}
		for path, v := range marshalledFields(t, c) {
			if strings.HasPrefix(path, m.Name+".") {
				defaults[path] = v
			}
		}
	}
	for _, name := range families {
		f, _ := configs.LookupFamily(name)
		typeFields(reflect.TypeOf(f.NewSection()).Elem(), "task."+name, types)
		// A family's section is written for the family's own configs only.
		c, err := configs.Parse("defaults.yaml", []byte(fmt.Sprintf("task: {family: %s}\n", name)))
		if err != nil {
			c = configs.Defaults() // a family whose configs must state more
			c.Task.Family = name
		}
		for path, v := range marshalledFields(t, c) {
			if _, seen := defaults[path]; strings.HasPrefix(path, "task."+name+".") || strings.HasPrefix(path, "model.") && !seen {
				defaults[path] = v // and the fields of the family's kind of model
			}
		}
	}
	for _, name := range configs.ModelNames() {
		m, _ := configs.LookupModel(name)
		typeFields(reflect.TypeOf(m.NewSection()).Elem(), "model."+name, types)
		// A model's section is written for the configs of that model only.
		c := configs.Defaults()
		c.Model.Kind = name
		for path, v := range marshalledFields(t, c) {
			if strings.HasPrefix(path, "model."+name+".") {
				defaults[path] = v
			}
		}
	}
	for _, name := range configs.InnerLoopNames() {
		l, _ := configs.LookupInnerLoop(name)
		typeFields(reflect.TypeOf(l.NewSection()).Elem(), "inner."+name, types)
		c := configs.Defaults()
		c.Inner.Kind = name
		for path, v := range marshalledFields(t, c) {
			if strings.HasPrefix(path, "inner."+name+".") {
				defaults[path] = v
			}
		}
	}
	fields := map[string]schemaField{}
	for path, typ := range types {
		d, ok := defaults[path]
		if zero, omits := omitted[path]; !ok && omits {
			d, ok = zero, true
		}
		if !ok {
			t.Errorf("field %s is not in the marshalled defaults", path)
		}
		fields[path] = schemaField{typ: typ, def: d}
	}
	for path := range defaults {
		if _, ok := types[path]; !ok {
			t.Errorf("marshalled default %s is not a field of a config", path)
		}
	}
	return fields
}

// resolved is the config a file with content src resolves to.
func resolved(t *testing.T, src string) configs.Config {
	t.Helper()
	c, err := configs.Parse("defaults.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// typeFields adds the leaves of struct type st under prefix with their
// documented types: a struct is descended into, anything else is a field.
func typeFields(st reflect.Type, prefix string, into map[string]string) {
	for i := range st.NumField() {
		f := st.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "" || name == "-" {
			continue
		}
		if prefix != "" {
			name = prefix + "." + name
		}
		if f.Type.Kind() == reflect.Struct {
			typeFields(f.Type, name, into)
			continue
		}
		into[name] = kindName(f.Type)
		if strings.HasSuffix(f.Tag.Get("yaml"), ",omitempty") {
			omitted[name] = reflect.Zero(f.Type).Interface()
		}
	}
}

// omitted holds the fields typeFields found that config.yaml leaves out at
// their zero value (omitempty), with that value: their default when a
// marshalled config does not state them.
var omitted = map[string]any{}

// marshalledFields is every leaf of c's YAML with its value.
func marshalledFields(t *testing.T, c configs.Config) map[string]any {
	t.Helper()
	raw, err := c.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	fields := map[string]any{}
	collectFields(t, doc.Content[0], "", fields)
	return fields
}

// experimentSchema is every top-level key of an experiment file, from the
// yaml tags of experiment.Spec, with its type.
func experimentSchema(t *testing.T) map[string]schemaField {
	t.Helper()
	fields := map[string]schemaField{}
	st := reflect.TypeFor[experiment.Spec]()
	for i := range st.NumField() {
		f := st.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "" || name == "-" {
			continue
		}
		fields[name] = schemaField{typ: kindName(f.Type)}
	}
	return fields
}

// kindName is the documented type of a Go type decoded from YAML.
func kindName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return "list"
	case reflect.Map, reflect.Struct:
		return "mapping"
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "bool"
	case reflect.Float32, reflect.Float64:
		return "float"
	}
	return "int"
}
