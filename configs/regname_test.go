package configs_test

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/internal/regname"
)

// Registered extensions under another name, for the refusals below.
type (
	renamedFamily struct {
		configs.Family
		name string
	}
	renamedModel struct {
		configs.Model
		name string
	}
	renamedLoop struct {
		configs.InnerLoop
		name string
	}
)

func (f renamedFamily) Name() string { return f.name }
func (m renamedModel) Name() string  { return m.name }
func (l renamedLoop) Name() string   { return l.name }

// TestRegisterRefusesBadNames: a family, model or inner loop whose name
// cannot be its section's key (empty, not a plain lowercase identifier, or
// one of the section's fixed keys: task.support, model.kind, inner.steps)
// or is taken panics naming the kind, the name and the reason, and the
// table is left as it was.
func TestRegisterRefusesBadNames(t *testing.T) {
	fam, _ := configs.LookupFamily("sinusoid")
	model, _ := configs.LookupModel("mlp")
	loop, _ := configs.LookupInnerLoop("sgd")
	kinds := []struct {
		kind     string
		register func(name string)
		names    func() []string
		taken    string
	}{
		{"task family", func(n string) { configs.RegisterFamily(renamedFamily{fam, n}) }, configs.FamilyNames, "support"},
		{"model", func(n string) { configs.RegisterModel(renamedModel{model, n}) }, configs.ModelNames, "dtype"},
		{"inner loop", func(n string) { configs.RegisterInnerLoop(renamedLoop{loop, n}) }, configs.InnerLoopNames, "steps"},
	}
	for _, k := range kinds {
		before := k.names()
		for _, c := range []struct{ name, want string }{
			{"", "a name must be a lowercase letter"},
			{"two words", "a name must be"},
			{"x.y", "a name must be"},
			{"../up", "a name must be"},
			{k.taken, "fixed key"},
			{before[0], "registered twice"},
		} {
			got := func() (msg string) {
				defer func() { msg = fmt.Sprint(recover()) }()
				k.register(c.name)
				return ""
			}()
			if !strings.Contains(got, k.kind+` "`+c.name+`"`) || !strings.Contains(got, c.want) {
				t.Errorf("registering %s %q: panic %q, want %q", k.kind, c.name, got, c.want)
			}
		}
		if after := k.names(); !slices.Equal(after, before) {
			t.Errorf("%ss after the refusals: %v, want %v", k.kind, after, before)
		}
	}
}

// TestConfigKeysMatch: the top-level keys a method's name may not take
// (regname.ConfigKeys) are those of Config.
func TestConfigKeysMatch(t *testing.T) {
	t.Parallel()
	var keys []string
	rt := reflect.TypeOf(configs.Config{})
	for i := range rt.NumField() {
		if tag, _, _ := strings.Cut(rt.Field(i).Tag.Get("yaml"), ","); tag != "" && tag != "-" {
			keys = append(keys, tag)
		}
	}
	if !slices.Equal(keys, regname.ConfigKeys) {
		t.Errorf("Config's keys %v, regname.ConfigKeys %v", keys, regname.ConfigKeys)
	}
}
