package configs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/trmaml/trmaml/metalearn"
	"gopkg.in/yaml.v3"
)

// Load reads the YAML file at path and decodes it like Parse.
func Load(path string) (Config, error) { return LoadWith(path, "", nil) }

// LoadWith reads the YAML file at path and decodes it like ParseWith.
func LoadWith(path, from string, sets []Setting) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, err
	}
	return ParseWith(path, data, from, sets)
}

// Parse decodes one YAML document over Defaults(), so it need only state what
// differs, and validates the result. Decoding is strict: an unknown or
// duplicate key, a value of the wrong type, an empty input or more than one
// document is an error. Every error names name, the line when the value is in
// the input, the field path and what is allowed; all validation errors are
// reported, joined.
func Parse(name string, data []byte) (Config, error) { return ParseWith(name, data, "", nil) }

// Setting is a value for the config field at Path (dotted, e.g.
// "cvar.level" or "inner.steps"), as a YAML node of the file it comes
// from: an experiment's sweep.
type Setting struct {
	Path  string
	Value *yaml.Node
}

// ParseWith is Parse with settings applied over the file as if it stated
// them, before the defaults that depend on other fields are derived (so
// trmaml.p_lr set here moves the p_lr of entropic TR-MAML and CVaR as it
// would in the file). Each setting is decoded strictly into its field: a
// path that names no field, or a value the field's type cannot hold, is an
// error naming from (the file of the settings), the value's line and the
// keys allowed.
func ParseWith(name string, data []byte, from string, sets []Setting) (Config, error) {
	return parse(name, data, from, sets, false)
}

// ParseRecorded is Parse for the config.yaml of a run directory, which may
// have been written before models had sections of their own (model:
// {hidden: [40, 40], cnn: {filters: 64}}): that layout is read as the
// family's model's section, so that old run directories keep working.
// A config a user writes goes through Parse, which refuses it.
func ParseRecorded(name string, data []byte) (Config, error) {
	return parse(name, data, "", nil, true)
}

// LoadRecorded reads the run directory's config.yaml at path and decodes
// it like ParseRecorded.
func LoadRecorded(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, err
	}
	return ParseRecorded(path, data)
}

func parse(name string, data []byte, from string, sets []Setting, recorded bool) (Config, error) {
	c := Defaults()
	d, err := decodeStrict(name, data, &c, recorded)
	if err != nil {
		return Config{}, err
	}
	over := &decoder{file: from, lines: d.lines}
	for _, s := range sets {
		over.decode(settingNode(s), reflect.ValueOf(&c).Elem(), "")
	}
	if len(over.errs) > 0 {
		return Config{}, errors.Join(over.errs...)
	}
	if len(c.Eval.CVaRAlpha) == 0 {
		c.Eval.CVaRAlpha = nil // "cvar_alpha: []" is the default, no levels
	}
	if errs := append(c.resolveDefaults(d.lines), c.validate()...); len(errs) > 0 {
		return Config{}, d.locate(errs)
	}
	return c, nil
}

// familyModel is the model of the family a config document names (or of
// the default family), "" if it is not registered.
func familyModel(root *yaml.Node) string {
	name := Defaults().Task.Family
	if f := mappingValue(mappingValue(root, "task"), "family"); f != nil {
		name = f.Value
	}
	if f, ok := LookupFamily(name); ok {
		return f.Model()
	}
	return ""
}

// settingNode is the mapping {a: {b: value}} of the setting a.b = value.
func settingNode(s Setting) *yaml.Node {
	n := s.Value
	keys := strings.Split(s.Path, ".")
	for i := len(keys) - 1; i >= 0; i-- {
		key := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: keys[i], Line: s.Value.Line}
		n = &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{key, n}, Line: s.Value.Line}
	}
	return n
}

// resolveDefaults fills the defaults that depend on the task family: the
// family's own (Family.Defaults), then each method's in registration order
// (metalearn.MethodInfo.Defaults), which may ask the family for its step
// size of p. set holds the line of each field path the file sets.
func (c *Config) resolveDefaults(set map[string]int) []error {
	stated := func(path string) bool { _, ok := set[path]; return ok }
	fam, err := c.Family()
	if err != nil {
		return nil // validate reports task.family
	}
	if !stated("model.kind") {
		c.Model.Kind = fam.Model()
	}
	if errs := fam.Defaults(c, stated); len(errs) > 0 {
		return errs
	}
	var errs []error
	for _, info := range metalearn.Methods() {
		m := c.Methods[info.Name]
		if info.Defaults == nil || m == nil {
			continue
		}
		err := info.Defaults(m, metalearn.MethodDefaults{
			Stated: func(key string) bool { return stated(info.Name + "." + key) },
			PLR:    func() (float64, error) { return fam.PLR(*c) },
			Method: func(name string) metalearn.Method { return c.Methods[name] },
		})
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// NotSet returns the error of a field the file must state because no
// default fits, with the reason; Locate places it in the file.
func NotSet(path, rule string) error { return &fieldError{path, "(not set)", rule} }

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

// FieldError returns an error for the field at path, with its value and the
// rule it breaks, that Locate can place at the field's line.
func FieldError(path string, value any, rule string) error {
	return &fieldError{path, show(value), rule}
}

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
	maps.DeleteFunc(c.Methods, func(name string, _ metalearn.Method) bool { return name != c.Algorithm })
	maps.DeleteFunc(c.Task.Sections, func(name string, _ any) bool { return name != c.Task.Family })
	maps.DeleteFunc(c.Model.Sections, func(name string, _ any) bool { return name != c.Model.Kind })
	maps.DeleteFunc(c.Inner.Sections, func(name string, _ any) bool { return name != c.Inner.Kind })
	return c
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

// maxAnyList bounds every list field, checked before it is decoded; the
// section that owns a list checks its own, smaller, bound.
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
	fields := taggedFields(v.Type())
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
		f := slices.IndexFunc(fields, func(f taggedField) bool { return f.key == k.Value })
		if f < 0 {
			if s, ok := sections(v)[k.Value]; ok {
				d.lines[p] = k.Line
				d.decode(val, s, p)
				continue
			}
			where := ""
			if path != "" {
				where = " in " + path
			}
			d.errorf(k.Line, "unknown field %q%s (allowed: %s)", k.Value, where, strings.Join(allowedKeys(v), ", "))
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
