package main

import (
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/experiment"
)

// configSchema is every field of a config file with its type and default:
// the types from the yaml tags of configs.Config, the defaults from the
// YAML that configs.Defaults() marshals to, which must have the same fields.
func configSchema(t *testing.T) map[string]schemaField {
	t.Helper()
	types := map[string]string{}
	typeFields(reflect.TypeFor[configs.Config](), "", types)
	defaults := marshalledFields(t, configs.Defaults())
	fields := map[string]schemaField{}
	for path, typ := range types {
		d, ok := defaults[path]
		if !ok {
			t.Errorf("field %s is not in the marshalled defaults", path)
		}
		fields[path] = schemaField{typ: typ, def: d}
	}
	for path := range defaults {
		if _, ok := types[path]; !ok {
			t.Errorf("marshalled default %s is not a field of configs.Config", path)
		}
	}
	return fields
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
	}
}

// marshalledFields is every leaf of the YAML v marshals to, with its value.
func marshalledFields(t *testing.T, v any) map[string]any {
	t.Helper()
	raw, err := yaml.Marshal(v)
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
