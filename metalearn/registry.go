package metalearn

import (
	"fmt"
	"reflect"
	"strings"
)

// MethodInfo registers a Method under the name that configs and run
// directories use. The method's settings are its exported fields with yaml
// tags: they are its config section (the section's key is Name), decoded
// strictly over New's defaults and written back into a run's config.yaml.
type MethodInfo struct {
	// Name is the config's algorithm value and the key of the method's
	// config section, e.g. "cvar".
	Name string
	// Display is the name in tables and legends, e.g. "CVaR".
	Display string
	// New returns the method with its default settings, a pointer to a
	// struct.
	New func() Method
	// FixedP says the method never moves p from the empirical distribution
	// (MAML): run directories then record no final p.
	FixedP bool
	// Swept is the yaml key of the setting that tells the method's runs
	// apart in reports, run names and the trade-off figure (CVaR's
	// "level"); "" for none. It must be a float64 setting.
	Swept string
	// SweptSymbol is how reports write the swept setting, e.g. "a" for
	// CVaR's level ("CVaR a=0.5"); empty means Swept.
	SweptSymbol string
	// Defaults fills the settings the config file leaves out whose good
	// value depends on the task family or on another method (nil: none).
	Defaults func(m Method, d MethodDefaults) error
	// Check returns the settings outside their allowed ranges (nil: any
	// value is allowed).
	Check func(m Method) []SettingError
}

// MethodDefaults is what MethodInfo.Defaults may consult.
type MethodDefaults struct {
	// Stated reports whether the file states the section's setting key.
	Stated func(key string) bool
	// PLR is the task family's step size eta_p of the ascent on p, in
	// Algorithm 1's convention, for the config's instance sizes; it fails
	// when the family knows none and the file must state it.
	PLR func() (float64, error)
	// Method is another registered method's resolved settings; methods are
	// resolved in registration order.
	Method func(name string) Method
}

// SettingError is a method setting outside its allowed range: Key is its
// yaml key, Rule what is allowed.
type SettingError struct {
	Key   string
	Value any
	Rule  string
}

func (e SettingError) Error() string { return fmt.Sprintf("%s = %v: %s", e.Key, e.Value, e.Rule) }

// methods is the table of registered methods, in registration order; each
// method's file defines its MethodInfo.
var methods = []MethodInfo{mamlInfo, trmamlInfo, entropicInfo, cvarInfo, dromamlInfo, drmamlInfo, drmamlPlusInfo}

// RegisterMethod adds a method to the table, for a method defined outside
// this package (call it from an init function). It panics on a name already
// registered or on settings New's type cannot carry, since both are
// programming errors.
func RegisterMethod(info MethodInfo) {
	if _, ok := LookupMethod(info.Name); ok {
		panic(fmt.Sprintf("metalearn: method %q registered twice", info.Name))
	}
	if t := reflect.TypeOf(info.New()); t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		panic(fmt.Sprintf("metalearn: method %q: New must return a pointer to a struct, got %v", info.Name, t))
	}
	methods = append(methods, info)
}

// Methods returns the registered methods in registration order.
func Methods() []MethodInfo { return append([]MethodInfo(nil), methods...) }

// MethodNames lists the registered methods' names in registration order.
func MethodNames() []string {
	names := make([]string, len(methods))
	for i, m := range methods {
		names[i] = m.Name
	}
	return names
}

// LookupMethod returns the registered method called name.
func LookupMethod(name string) (MethodInfo, bool) {
	for _, m := range methods {
		if m.Name == name {
			return m, true
		}
	}
	return MethodInfo{}, false
}

// MethodNamed returns the registered method called name, or an error that
// names it and lists the registered ones.
func MethodNamed(name string) (MethodInfo, error) {
	if m, ok := LookupMethod(name); ok {
		return m, nil
	}
	return MethodInfo{}, fmt.Errorf("unknown method %q (registered: %s)", name, strings.Join(MethodNames(), ", "))
}

// CopySettings returns a new method of m's type holding m's settings
// (exported fields) and none of its run state, so that a config's settings
// are never shared with a running Trainer.
func CopySettings(m Method) Method {
	src := reflect.ValueOf(m).Elem()
	dst := reflect.New(src.Type())
	for i := range src.NumField() {
		if src.Type().Field(i).IsExported() {
			dst.Elem().Field(i).Set(src.Field(i))
		}
	}
	return dst.Interface().(Method)
}

// SweptValue is the value of info.Swept in m, 0 when the method sweeps
// nothing.
func (info MethodInfo) SweptValue(m Method) float64 {
	if info.Swept == "" || m == nil {
		return 0
	}
	v := reflect.ValueOf(m).Elem()
	for i := range v.NumField() {
		if v.Type().Field(i).Tag.Get("yaml") == info.Swept {
			return v.Field(i).Float()
		}
	}
	panic(fmt.Sprintf("metalearn: method %q has no setting %q", info.Name, info.Swept))
}
