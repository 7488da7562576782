package configs

import (
	"embed"
	"fmt"
	"strings"
)

// builtin holds the experiment files of this directory, compiled into the
// binary so the CLI runs the paper's settings without a checkout.
//
//go:embed *.yaml
var builtin embed.FS

// Builtin returns the built-in config name (its file name without .yaml),
// loaded and validated like any file.
func Builtin(name string) (Config, error) { return BuiltinWith(name, "", nil) }

// BuiltinWith is Builtin with settings applied as ParseWith does.
func BuiltinWith(name, from string, sets []Setting) (Config, error) {
	data, err := builtin.ReadFile(name + ".yaml")
	if err != nil {
		return Config{}, fmt.Errorf("no built-in config %q (available: %s)", name, strings.Join(BuiltinNames(), ", "))
	}
	return ParseWith("configs/"+name+".yaml", data, from, sets)
}

// BuiltinNames lists the built-in configs, sorted.
func BuiltinNames() []string {
	// Reading the root of an embed.FS cannot fail; entries come sorted.
	entries, _ := builtin.ReadDir(".")
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = strings.TrimSuffix(e.Name(), ".yaml")
	}
	return names
}
