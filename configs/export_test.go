package configs

import (
	"reflect"

	"github.com/trmaml/trmaml/metalearn"
)

// Internals the external tests use.
var (
	Gib      = gib
	Builtins = builtin
)

// DecodeOverZero decodes the built-in config name over a zero Config (with
// zero sections of every registered method and family) and returns it with
// the decoder's errors.
func DecodeOverZero(name string) (Config, []error) {
	data, err := builtin.ReadFile(name + ".yaml")
	if err != nil {
		return Config{}, []error{err}
	}
	root, err := document(name, data)
	if err != nil {
		return Config{}, []error{err}
	}
	zero := Defaults()
	for k, s := range zero.Task.Sections {
		zero.Task.Sections[k] = reflect.New(reflect.TypeOf(s).Elem()).Interface()
	}
	for k, s := range zero.Model.Sections {
		zero.Model.Sections[k] = reflect.New(reflect.TypeOf(s).Elem()).Interface()
	}
	for k, s := range zero.Inner.Sections {
		zero.Inner.Sections[k] = reflect.New(reflect.TypeOf(s).Elem()).Interface()
	}
	for k, m := range zero.Methods {
		zero.Methods[k] = reflect.New(reflect.TypeOf(m).Elem()).Interface().(metalearn.MethodSettings)
	}
	base := zero
	zero = Config{Methods: base.Methods, Task: TaskConfig{Sections: base.Task.Sections}, Model: ModelConfig{Sections: base.Model.Sections}, Inner: InnerConfig{Sections: base.Inner.Sections}}
	d := decoder{file: name, lines: map[string]int{}}
	d.decode(root, reflect.ValueOf(&zero).Elem(), "")
	return zero, d.errs
}
