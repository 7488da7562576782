package configs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// Load reads the YAML file at path and decodes it like Parse.
func Load(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, err
	}
	return Parse(path, data)
}

// Parse decodes one YAML document over Defaults(), so it need only state what
// differs, and validates the result. Decoding is strict: an unknown or
// duplicate key, a value of the wrong type, an empty input or more than one
// document is an error. Every error names name, the line when the value is in
// the input, the field path and what is allowed; all validation errors are
// reported, joined.
func Parse(name string, data []byte) (Config, error) {
	c := Defaults()
	d, err := decodeStrict(name, data, &c)
	if err != nil {
		return Config{}, err
	}
	if errs := append(c.deriveFromK(d.lines), c.validate()...); len(errs) > 0 {
		return Config{}, d.locate(errs)
	}
	return c, nil
}

// paperPLR is the appendix's eta_p for each K it reports.
var paperPLR = map[int]float64{5: 1e-4, 10: 2e-4}

// deriveFromK fills the step sizes of p that the file leaves out and whose
// good value depends on K: trmaml.p_lr gets the paper's value for the
// file's K (for a K the paper does not report, it must be stated);
// trmaml_entropic.p_lr is ten times it and cvar.p_lr equals it, the
// relations the paper configs use. set holds the field paths the file sets.
func (c *Config) deriveFromK(set map[string]int) []error {
	stated := func(path string) bool { _, ok := set[path]; return ok }
	if c.Task.Family == "omniglot" {
		if errs := c.deriveOmniglot(stated); errs != nil {
			return errs
		}
	} else if !stated("trmaml.p_lr") {
		v, ok := paperPLR[c.Task.Support]
		if !ok {
			if c.Task.Support < 1 || c.Task.Support > MaxPoints {
				return nil // validate reports task.support
			}
			return []error{&fieldError{"trmaml.p_lr", "(not set)", fmt.Sprintf(
				"must be stated for task.support = %d: the paper gives eta_p only for K = 5 (1e-4) and K = 10 (2e-4); "+
					"experiment grids can turn any config into a TR-MAML run", c.Task.Support)}}
		}
		c.TRMAML.PLR = v
	}
	if !stated("trmaml_entropic.p_lr") {
		c.Entropic.PLR = 10 * c.TRMAML.PLR
	}
	if !stated("cvar.p_lr") {
		c.CVaR.PLR = c.TRMAML.PLR
	}
	return nil
}

// DecodeStrict decodes one YAML document of at most MaxFileBytes into v, a
// pointer to a struct whose fields carry yaml tags, with the config loader's
// rules and messages: an unknown or duplicate key, a value of the wrong type
// (a float for an integer, a negative or too large number for an unsigned
// one), an over-long list, an empty input or a second document is an error
// naming name and the line. It returns the line of every field path the
// document sets, so that later checks can name lines too.
func DecodeStrict(name string, data []byte, v any) (lines map[string]int, err error) {
	d, err := decodeStrict(name, data, v)
	if err != nil {
		return nil, err
	}
	return d.lines, nil
}

func decodeStrict(name string, data []byte, v any) (*decoder, error) {
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("%s: %d bytes: a file may have at most %d", name, len(data), MaxFileBytes)
	}
	root, err := document(name, data)
	if err != nil {
		return nil, err
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

// FieldError returns an error for the field at path, with its value and the
// rule it breaks, that Locate can place at the field's line.
func FieldError(path string, value any, rule string) error {
	return &fieldError{path, show(value), rule}
}

// Marshal returns the YAML of the resolved config, every field stated and
// lists written inline as [a, b]; Parse reads it back to an equal Config.
func (c Config) Marshal() ([]byte, error) {
	var n yaml.Node
	if err := n.Encode(c); err != nil {
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

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): `)

// syntaxError rewrites a YAML parser error "yaml: line N: msg" as
// "name:N: msg".
func syntaxError(name string, err error) error {
	msg := err.Error()
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		return fmt.Errorf("%s:%s: %s", name, m[1], msg[len(m[0]):])
	}
	return fmt.Errorf("%s: %s", name, strings.TrimPrefix(msg, "yaml: "))
}

// maxAnyList bounds a list field without its own bound in maxListLen.
const maxAnyList = 1000

// decoder strictly decodes a YAML node tree into Go values, recording the line
// of every field path it sets and collecting every error.
type decoder struct {
	file  string
	lines map[string]int
	errs  []error
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
			d.errorf(n.Line, "%s: %v", path, err)
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
		if max, ok := maxListLen[path]; ok && len(n.Content) > max {
			d.errorf(n.Line, "%s: a list of %d: at most %d entries are allowed", path, len(n.Content), max)
			return
		}
		if len(n.Content) > maxAnyList {
			d.errorf(n.Line, "%s: a list of %d: at most %d entries are allowed", path, len(n.Content), maxAnyList)
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
	keys := fieldKeys(v.Type())
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		p := k.Value
		if path != "" {
			p = path + "." + k.Value
		}
		if first, dup := seen[k.Value]; dup {
			d.errorf(k.Line, "%s: duplicate key (first at line %d): each key may appear only once", p, first)
			continue
		}
		seen[k.Value] = k.Line
		f := slices.Index(keys, k.Value)
		if f < 0 {
			where := ""
			if path != "" {
				where = " in " + path
			}
			d.errorf(k.Line, "unknown field %q%s (allowed: %s)", k.Value, where, strings.Join(keys, ", "))
			continue
		}
		d.lines[p] = k.Line
		d.decode(val, v.Field(f), p)
	}
}

func (d *decoder) mismatch(n *yaml.Node, v reflect.Value, path string) {
	if path == "" {
		path = "document"
	}
	d.errorf(n.Line, "%s: cannot use %s: want %s", path, describe(n), want(v.Type()))
}

// locate prefixes each validation error with the file and, when the field was
// in the file, its line (lines start at 1, so 0 means absent).
func (d *decoder) locate(errs []error) error {
	out := make([]error, len(errs))
	for i, e := range errs {
		var fe *fieldError
		if errors.As(e, &fe) && d.lines[fe.path] > 0 {
			out[i] = fmt.Errorf("%s:%d: %w", d.file, d.lines[fe.path], e)
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

// fieldKeys lists the yaml keys of struct type t in field order.
func fieldKeys(t reflect.Type) []string {
	keys := make([]string, t.NumField())
	for i := range keys {
		keys[i] = t.Field(i).Tag.Get("yaml")
	}
	return keys
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
