package configs

import (
	"errors"
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
	// In, if not empty, is what the setting stands under in its file (an
	// experiment's "sweep"), named before its path in errors.
	In string
}

// SettingsError is the error of ParseWith when some of its settings are
// refused: Settings holds those errors, each located in the settings' file
// at the value's line, File those of the config file's own fields, each
// located in the file (nil when there are none). A caller that names the
// config file around its errors (an experiment's base) need not wrap the
// settings' errors, which name their own file.
type SettingsError struct {
	Settings, File error
}

func (e *SettingsError) Error() string { return errors.Join(e.File, e.Settings).Error() }

// Unwrap returns both errors, for errors.Is and errors.As.
func (e *SettingsError) Unwrap() []error {
	return slices.DeleteFunc([]error{e.File, e.Settings}, func(err error) bool { return err == nil })
}

// prefix is what the decoder names before the field paths of errors in s:
// what it stands under (Setting.In), if anything.
func (s Setting) prefix() string {
	if s.In == "" {
		return ""
	}
	return s.In + " "
}

// settingPrefix is the prefix of the setting among sets that gives the
// field at path (itself, a field inside it, or a section it fills).
func settingPrefix(sets []Setting, path string) string {
	i := slices.IndexFunc(sets, func(s Setting) bool {
		return s.Path == path || strings.HasPrefix(path, s.Path+".") || strings.HasPrefix(path, s.Path+"[") || strings.HasPrefix(s.Path, path+".")
	})
	if i < 0 {
		return ""
	}
	return sets[i].prefix()
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
	// The settings' lines are from's: a value of theirs out of range is
	// located there, not in the file they are applied over.
	over := &decoder{file: from, lines: map[string]int{}}
	for _, s := range sets {
		over.prefix = s.prefix()
		over.decode(settingNode(s), reflect.ValueOf(&c).Elem(), "")
	}
	if len(over.errs) > 0 {
		return Config{}, &SettingsError{Settings: errors.Join(over.errs...)}
	}
	stated := maps.Clone(d.lines)
	maps.Copy(stated, over.lines)
	if len(c.Eval.CVaRAlpha) == 0 {
		c.Eval.CVaRAlpha = nil // "cvar_alpha: []" is the default, no levels
	}
	defErrs, unresolved := c.resolveDefaults(stated)
	// A method whose defaults could not be resolved has zero settings:
	// their checks would only repeat the reason in other words.
	errs := append(defErrs, slices.DeleteFunc(c.validate(), func(err error) bool {
		var ferr *fieldError
		return errors.As(err, &ferr) && unresolved[strings.SplitN(ferr.path, ".", 2)[0]]
	})...)
	if !recorded { // a run directory's config.yaml is read as it was written
		if err := c.checkData(); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		ours, theirs := errs[:0:0], []error(nil)
		for _, e := range errs {
			var fe *fieldError
			if errors.As(e, &fe) && over.lines[fe.path] > 0 {
				theirs = append(theirs, e)
			} else {
				ours = append(ours, e)
			}
		}
		var own error
		if len(ours) > 0 {
			own = d.locate(ours)
		}
		if len(theirs) == 0 {
			return Config{}, own
		}
		located := make([]error, len(theirs))
		for i, e := range theirs {
			var fe *fieldError
			errors.As(e, &fe)
			over.prefix = settingPrefix(sets, fe.path)
			located[i] = over.locate([]error{e})
		}
		return Config{}, &SettingsError{Settings: errors.Join(located...), File: own}
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
// family's own (Family.Defaults), then each method's
// (metalearn.MethodInfo.Defaults), which may ask for Algorithm 1's step size
// of p (stepP). set holds the line of each field path the file sets;
// unresolved names the methods whose defaults failed.
func (c *Config) resolveDefaults(set map[string]int) (errs []error, unresolved map[string]bool) {
	stated := func(path string) bool { _, ok := set[path]; return ok }
	fam, err := c.Family()
	if err != nil {
		return nil, nil // validate reports task.family
	}
	if !stated("model.kind") {
		c.Model.Kind = fam.Model()
	}
	if errs := fam.Defaults(c, stated); len(errs) > 0 {
		return errs, nil
	}
	plr, plrErr := c.stepP(fam, stated)
	unresolved = map[string]bool{}
	for _, info := range metalearn.Methods() {
		m := c.Methods[info.Name]
		if info.Defaults == nil || m == nil {
			continue
		}
		err := info.Defaults(m, metalearn.MethodDefaults{
			Stated: func(key string) bool { return stated(info.Name + "." + key) },
			PLR:    func() (float64, error) { return plr, plrErr },
		})
		if err != nil {
			unresolved[info.Name] = true
			if !slices.Contains(errs, err) {
				errs = append(errs, err)
			}
		}
	}
	return errs, unresolved
}

// stepP is Algorithm 1's step size eta_p for c (metalearn.MethodDefaults.PLR):
// the p_lr of its TR-MAML section when the file states it, else the task
// family's.
func (c *Config) stepP(fam Family, stated func(string) bool) (float64, error) {
	for name, s := range c.Methods {
		if t, ok := s.(*metalearn.TRMAML); ok && stated(name+".p_lr") {
			return t.PLR, nil
		}
	}
	return fam.PLR(*c)
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): `)

// maxAnyList bounds every list field, checked before it is decoded; the
// section that owns a list checks its own, smaller, bound.
const maxAnyList = 1000
