package configs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"

	"github.com/trmaml/trmaml/metalearn"
	"gopkg.in/yaml.v3"
)

// DecodeStrict decodes one YAML document of at most MaxFileBytes into v, a
// pointer to a struct whose fields carry yaml tags, with the config loader's
// rules and messages: an unknown or duplicate key, a value of the wrong type
// (a float for an integer, a negative or too large number for an unsigned
// one), an over-long list, an empty input or a second document is an error
// naming name and the line. It returns the line of every field path the
// document sets, so that later checks can name lines too.
func DecodeStrict(name string, data []byte, v any) (lines map[string]int, err error) {
	d, err := decodeStrict(name, data, v, false)
	if err != nil {
		return nil, err
	}
	return d.lines, nil
}

// decodeStrict decodes data into v; a Config's model section of the old
// layout is translated if recorded (a run directory's), else refused.
func decodeStrict(name string, data []byte, v any, recorded bool) (*decoder, error) {
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("%s: %d bytes: a file may have at most %d", name, len(data), MaxFileBytes)
	}
	root, err := document(name, data)
	if err != nil {
		return nil, err
	}
	if _, ok := v.(*Config); ok {
		if old := legacyModel(root, familyModel, recorded); len(old) > 0 {
			return nil, oldLayoutError(name, old)
		}
	}
	d := &decoder{file: name, lines: map[string]int{}}
	d.decode(root, reflect.ValueOf(v).Elem(), "")
	if len(d.errs) > 0 {
		return nil, errors.Join(d.errs...)
	}
	return d, nil
}

// Locate prefixes each error of a Validate-style check with name and, when
// the field it names was in the document, its line; lines comes from
// DecodeStrict.
func Locate(name string, lines map[string]int, errs []error) error {
	d := decoder{file: name, lines: lines}
	return d.locate(errs)
}

// document parses data as exactly one YAML document and returns its root.
func document(name string, data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc, extra yaml.Node
	if err := dec.Decode(&doc); err == io.EOF {
		return nil, fmt.Errorf("%s:1: empty file: want a YAML mapping of config fields", name)
	} else if err != nil {
		return nil, syntaxError(name, err)
	}
	if err := dec.Decode(&extra); err == nil {
		return nil, fmt.Errorf("%s:%d: a second YAML document: want exactly one", name, extra.Line)
	} else if err != io.EOF {
		return nil, syntaxError(name, err)
	}
	return doc.Content[0], nil
}

// syntaxError rewrites a YAML parser error "yaml: line N: msg" as
// "name:N: msg".
func syntaxError(name string, err error) error {
	msg := err.Error()
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		return fmt.Errorf("%s:%s: %s", name, m[1], msg[len(m[0]):])
	}
	return fmt.Errorf("%s: %s", name, strings.TrimPrefix(msg, "yaml: "))
}

// decoder strictly decodes a YAML node tree into Go values, recording the line
// of every field path it sets and collecting every error.
type decoder struct {
	file  string
	lines map[string]int
	errs  []error
	// prefix goes before the field paths it names ("sweep " for an
	// experiment's sweep values, Setting.In).
	prefix string
}

func (d *decoder) errorf(line int, format string, args ...any) {
	d.errs = append(d.errs, fmt.Errorf("%s:%d: %s", d.file, line, fmt.Sprintf(format, args...)))
}

func (d *decoder) decode(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if u, ok := v.Addr().Interface().(yaml.Unmarshaler); ok {
		if err := u.UnmarshalYAML(n); err != nil {
			d.errorf(n.Line, "%s%s: %v", d.prefix, path, err)
		}
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			d.mismatch(n, v, path)
			return
		}
		d.mapping(n, v, path)
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			d.mismatch(n, v, path)
			return
		}
		if len(n.Content) > maxAnyList {
			d.errorf(n.Line, "%s%s: a list of %d: at most %d entries are allowed", d.prefix, path, len(n.Content), maxAnyList)
			return
		}
		s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
		for i, e := range n.Content {
			d.element(e, s.Index(i), path, i)
		}
		v.Set(s)
	case reflect.Array:
		if n.Kind != yaml.SequenceNode || len(n.Content) != v.Len() {
			d.mismatch(n, v, path)
			return
		}
		for i, e := range n.Content {
			d.element(e, v.Index(i), path, i)
		}
	default:
		if n.Kind != yaml.ScalarNode || !accepts(v.Kind(), n.ShortTag()) || n.Decode(v.Addr().Interface()) != nil {
			d.mismatch(n, v, path)
		}
	}
}

func (d *decoder) element(n *yaml.Node, v reflect.Value, path string, i int) {
	p := fmt.Sprintf("%s[%d]", path, i)
	d.lines[p] = n.Line
	d.decode(n, v, p)
}

// mapping decodes the keys of n into the fields of struct v by their yaml tags.
func (d *decoder) mapping(n *yaml.Node, v reflect.Value, path string) {
	fields := taggedFields(v.Type())
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		p := k.Value
		if path != "" {
			p = path + "." + k.Value
		}
		if first, dup := seen[k.Value]; dup {
			d.errorf(k.Line, "%s%s: duplicate key (first at line %d): each key may appear only once", d.prefix, p, first)
			continue
		}
		seen[k.Value] = k.Line
		f := slices.IndexFunc(fields, func(f taggedField) bool { return f.key == k.Value })
		if f < 0 {
			if s, ok := sections(v)[k.Value]; ok {
				d.lines[p] = k.Line
				d.decode(val, s, p)
				continue
			}
			where := ""
			if path != "" || d.prefix != "" {
				where = " in " + strings.TrimSpace(d.prefix+path)
			}
			keys := allowedKeys(v)
			allowed := "allowed: " + strings.Join(keys, ", ")
			if len(keys) == 0 {
				allowed = path + " has no settings"
			}
			d.errorf(k.Line, "unknown field %q%s (%s)", k.Value, where, allowed)
			continue
		}
		d.lines[p] = k.Line
		d.decode(val, v.Field(fields[f].index), p)
	}
}

func (d *decoder) mismatch(n *yaml.Node, v reflect.Value, path string) {
	if path == "" {
		path = "document"
	}
	d.errorf(n.Line, "%s%s: cannot use %s: want %s", d.prefix, path, describe(n), want(v.Type()))
}

// locate prefixes each validation error with the file and, when the field was
// in the file, its line (lines start at 1, so 0 means absent).
func (d *decoder) locate(errs []error) error {
	out := make([]error, len(errs))
	for i, e := range errs {
		var fe *fieldError
		if errors.As(e, &fe) && d.lines[fe.path] > 0 {
			out[i] = fmt.Errorf("%s:%d: %s%w", d.file, d.lines[fe.path], d.prefix, e)
		} else {
			out[i] = fmt.Errorf("%s: %w", d.file, e)
		}
	}
	return errors.Join(out...)
}

// accepts reports whether a scalar with the YAML tag may be stored in a Go
// value of the kind; integers are not silently truncated from floats.
func accepts(k reflect.Kind, tag string) bool {
	switch k {
	case reflect.String:
		return tag == "!!str"
	case reflect.Int, reflect.Uint64:
		return tag == "!!int"
	case reflect.Float64:
		return tag == "!!int" || tag == "!!float"
	case reflect.Bool:
		return tag == "!!bool"
	}
	return false
}

// taggedField is a struct field that YAML sets: its key and index.
type taggedField struct {
	key   string
	index int
}

// taggedFields lists the fields of struct type t with a yaml tag, in field
// order; untagged fields (a method's run state) and "-" are not settable.
func taggedFields(t reflect.Type) []taggedField {
	var fs []taggedField
	for i := range t.NumField() {
		key, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",") // options such as omitempty
		if key != "" && key != "-" && t.Field(i).IsExported() {
			fs = append(fs, taggedField{key, i})
		}
	}
	return fs
}

// fieldKeys lists the yaml keys of struct type t in field order.
func fieldKeys(t reflect.Type) []string {
	var keys []string
	for _, f := range taggedFields(t) {
		keys = append(keys, f.key)
	}
	return keys
}

// sections returns the registered sections a struct value holds besides
// its fields (a Config's methods, a TaskConfig's families, a ModelConfig's
// models), each the
// addressable struct its key decodes into.
func sections(v reflect.Value) map[string]reflect.Value {
	out := map[string]reflect.Value{}
	var m reflect.Value
	switch v.Type() {
	case reflect.TypeFor[Config]():
		m = v.FieldByName("Methods")
	case reflect.TypeFor[TaskConfig](), reflect.TypeFor[ModelConfig](), reflect.TypeFor[InnerConfig]():
		m = v.FieldByName("Sections")
	default:
		return out
	}
	for it := m.MapRange(); it.Next(); {
		e := it.Value()
		if e.Kind() == reflect.Interface {
			e = e.Elem()
		}
		out[it.Key().String()] = e.Elem()
	}
	return out
}

// allowedKeys lists the keys a struct value accepts: its fields, then its
// registered sections in registration order.
func allowedKeys(v reflect.Value) []string {
	keys := fieldKeys(v.Type())
	s := sections(v)
	var names []string
	switch v.Type() {
	case reflect.TypeFor[Config]():
		names = metalearn.MethodNames()
	case reflect.TypeFor[TaskConfig]():
		names = FamilyNames()
	case reflect.TypeFor[ModelConfig]():
		names = ModelNames()
	case reflect.TypeFor[InnerConfig]():
		names = InnerLoopNames()
	}
	var present []string
	for _, n := range names {
		if sec, ok := s[n]; ok && len(taggedFields(sec.Type())) > 0 {
			present = append(present, n)
		}
	}
	at := len(keys) // a task's families after its fields; a config's methods after meta, where Marshal writes them
	if i := slices.Index(keys, "meta"); i >= 0 && v.Type() == reflect.TypeFor[Config]() {
		at = i + 1
	}
	return slices.Insert(keys, at, present...)
}

// describe names a YAML node for an error message, e.g. `"five" (string)`.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return fmt.Sprintf("a list of %d", len(n.Content))
	}
	kind := strings.TrimPrefix(n.ShortTag(), "!!")
	if kind == "str" {
		kind = "string"
	}
	return fmt.Sprintf("%q (%s)", n.Value, kind)
}

// want says what YAML a Go type accepts, for an error message.
func want(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Struct:
		if len(fieldKeys(t)) == 0 {
			return "an empty mapping, {} (it has no settings)"
		}
		return "a mapping (keys: " + strings.Join(fieldKeys(t), ", ") + ")"
	case reflect.Slice:
		return "a list, each " + want(t.Elem())
	case reflect.Array:
		return fmt.Sprintf("a list of %d, each %s", t.Len(), want(t.Elem()))
	case reflect.Int:
		return "an integer"
	case reflect.Uint64:
		return "a non-negative integer"
	case reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	}
	return "a string"
}
