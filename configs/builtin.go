package configs

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
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

// ErrNoBuiltin is the error of BuiltinWith for a name no built-in config
// has (errors.Is), which a caller that also looks for a file reports.
var ErrNoBuiltin = errors.New("no built-in config")

// BuiltinWith is Builtin with settings applied as ParseWith does.
func BuiltinWith(name, from string, sets []Setting) (Config, error) {
	data, err := builtin.ReadFile(name + ".yaml")
	if err != nil {
		return Config{}, fmt.Errorf("%w %q (available: %s)", ErrNoBuiltin, name, strings.Join(BuiltinNames(), ", "))
	}
	return ParseWith("configs/"+name+".yaml", data, from, sets)
}

// LoadNamed loads the config a user names: the file of that name if there
// is one (or if no built-in config has the name), else the built-in config
// of that name. file is the path of the file read ("" for a built-in).
func LoadNamed(name string) (cfg Config, file string, err error) {
	if _, statErr := os.Stat(name); statErr == nil || !slices.Contains(BuiltinNames(), name) {
		cfg, err = Load(name)
		if errors.Is(err, fs.ErrNotExist) && !strings.ContainsRune(name, '/') {
			err = fmt.Errorf("%w, and no built-in config has that name (trmaml configs lists them)", err)
		}
		return cfg, name, err
	}
	cfg, err = Builtin(name)
	return cfg, "", err
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

// BuiltinSummary is the first clause of the built-in config name's
// leading comment (up to the first parenthesis, colon or sentence end
// after 30 characters), without the "name:" it starts with: the one line
// `trmaml configs` lists.
func BuiltinSummary(name string) (string, error) {
	data, err := builtin.ReadFile(name + ".yaml")
	if err != nil {
		return "", fmt.Errorf("no built-in config %q (available: %s)", name, strings.Join(BuiltinNames(), ", "))
	}
	var words []string
	for _, line := range strings.Split(string(data), "\n") {
		text, ok := strings.CutPrefix(strings.TrimSpace(line), "#")
		if !ok {
			break
		}
		words = append(words, strings.Fields(text)...)
	}
	s := strings.TrimPrefix(strings.Join(words, " "), name+": ") + " "
	end := len(s)
	for _, mark := range []string{" (", ": ", "; ", ". "} {
		for i := 0; i < len(s); {
			j := strings.Index(s[i:], mark)
			if j < 0 {
				break
			}
			if i+j >= 30 {
				end = min(end, i+j)
				break
			}
			i += j + 1
		}
	}
	return strings.TrimSuffix(strings.TrimSpace(s[:end]), "."), nil
}
