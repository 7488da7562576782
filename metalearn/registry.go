package metalearn

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/trmaml/trmaml/internal/regname"
)

// MethodInfo registers a method under the name that configs and run
// directories use. The method's settings (MethodSettings) are a struct whose
// exported fields with yaml tags are its config section (the section's key
// is Name), decoded strictly over New's defaults and written back into a
// run's config.yaml. How reports name the method is theirs (package
// results/display).
type MethodInfo struct {
	// Name is the config's algorithm value and the key of the method's
	// config section, e.g. "cvar".
	Name string
	// New returns the method's default settings, a pointer to a struct.
	New func() MethodSettings
	// FixedP says the method never moves p from the empirical distribution
	// (MAML): run directories then record no final p.
	FixedP bool
	// Swept is the yaml key of the setting that tells the method's runs
	// apart (CVaR's "level"): in run names, reports and the trade-off
	// figure; "" for none. SweptValue reads it from the settings.
	Swept      string
	SweptValue func(s MethodSettings) float64
	// Step is the yaml key of the step size of the method's ascent on p
	// (TR-MAML's "p_lr", DRO-MAML's "eta_q"), which reports show beside
	// how far p moved; "" for a method that keeps p fixed. StepValue
	// reads it from the settings.
	Step      string
	StepValue func(s MethodSettings) float64
	// Defaults fills the settings the config file leaves out whose good
	// value depends on the task family (nil: none).
	Defaults func(s MethodSettings, d MethodDefaults) error
	// Check returns the settings outside their allowed ranges (nil: any
	// value is allowed).
	Check func(s MethodSettings) []SettingError
}

// MethodDefaults is what MethodInfo.Defaults may consult.
type MethodDefaults struct {
	// Stated reports whether the file states the section's setting key.
	Stated func(key string) bool
	// PLR is the config's step size eta_p of Algorithm 1's ascent on p: the
	// TRMAML section's p_lr when the file states it, else the task
	// family's for the config's instance sizes. It fails when neither is
	// known and the file must state it. The ascent methods default their
	// own step sizes relative to it.
	PLR func() (float64, error)
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
// registered, on a name that cannot be a config key beside the top-level
// ones (internal/regname), on settings New's type cannot carry and on a
// swept setting without SweptValue, since all are programming errors.
func RegisterMethod(info MethodInfo) {
	if err := regname.Check("metalearn: method", info.Name, regname.ConfigKeys); err != nil {
		panic(err.Error())
	}
	if _, ok := LookupMethod(info.Name); ok {
		panic(fmt.Sprintf("metalearn: method %q registered twice", info.Name))
	}
	if t := reflect.TypeOf(info.New()); t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		panic(fmt.Sprintf("metalearn: method %q: New must return a pointer to a struct, got %v", info.Name, t))
	}
	if (info.Swept == "") != (info.SweptValue == nil) {
		panic(fmt.Sprintf("metalearn: method %q: Swept and SweptValue go together", info.Name))
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
