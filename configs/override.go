package configs

import (
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"

	"gopkg.in/yaml.v3"
)

// Override returns c with each "field.path=value" of sets applied. A value
// is YAML (a number, true, a word, [1, 2]) decoded into its field as
// strictly as in a config file, and the result is validated as a whole;
// allowed says which paths may be set at all. Errors name the flag and the
// setting they come from ("-set F=V", "-override F=V") and, for a path that
// is not allowed or does not exist, what is.
func Override(c Config, flag string, sets []string, allowed func(path string) bool) (Config, error) {
	c = c.Clone() // the sections are pointers: leave the caller's as they were
	var errs []error
	seen := map[string]string{} // path: the -set that gave it, as a file refuses a key twice
	for _, set := range sets {
		name := flag + " " + set
		path, value, ok := strings.Cut(set, "=")
		if !ok || path == "" {
			errs = append(errs, fmt.Errorf("%s: want FIELD=VALUE, e.g. task.omniglot.resize=nearest", name))
			continue
		}
		if first, ok := seen[path]; ok {
			errs = append(errs, fmt.Errorf("%s: %s is already set by %s %s; give it once", name, path, flag, first))
			continue
		}
		seen[path] = set
		if !allowed(path) {
			errs = append(errs, fmt.Errorf("%s: %s may not be changed here", name, path))
			continue
		}
		doc, err := oneValue(value)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
			continue
		}
		root := doc.Content[0]
		noLines(root)
		keys := strings.Split(path, ".")
		for i := len(keys) - 1; i >= 0; i-- {
			root = &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{{Kind: yaml.ScalarNode, Value: keys[i]}, root}}
		}
		d := &decoder{file: name, lines: map[string]int{}}
		d.decode(root, reflect.ValueOf(&c).Elem(), "")
		for _, e := range d.errs {
			// The nodes have no line: drop the ":0" the decoder adds.
			errs = append(errs, errors.New(strings.Replace(e.Error(), name+":0: ", name+": ", 1)))
		}
	}
	if len(errs) > 0 {
		return Config{}, errors.Join(errs...)
	}
	if errs := c.validate(); len(errs) > 0 {
		d := decoder{file: flag, lines: map[string]int{}}
		return Config{}, d.locate(errs)
	}
	// A data root is refused where nothing reads it: after a -set of it,
	// or of the family (an omniglot config's root under -set
	// task.family=sinusoid).
	for _, set := range sets {
		if path, _, _ := strings.Cut(set, "="); path == "data" || strings.HasPrefix(path, "data.") || path == "task.family" || path == "task" {
			if err := c.checkData(); err != nil {
				return Config{}, fmt.Errorf("%s %s: %w", flag, set, err)
			}
		}
	}
	return c, nil
}

// oneValue decodes a -set's value, refusing an empty one and one holding
// more than one YAML document (yaml.Unmarshal would keep the first and drop
// the rest).
func oneValue(value string) (yaml.Node, error) {
	var doc yaml.Node
	if strings.TrimSpace(value) == "" {
		return doc, errors.New(`no value after "=" (want FIELD=VALUE, e.g. eval.steps=2; an empty string is FIELD='', in a shell "FIELD=''")`)
	}
	dec := yaml.NewDecoder(strings.NewReader(value))
	if err := dec.Decode(&doc); err != nil {
		return doc, fmt.Errorf("the value is not YAML: %v", err)
	}
	var more yaml.Node
	if err := dec.Decode(&more); !errors.Is(err, io.EOF) {
		return doc, errors.New("the value holds more than one YAML document: give one value")
	}
	if len(doc.Content) != 1 {
		return doc, errors.New("the value is not one YAML value")
	}
	return doc, nil
}

// noLines clears the line numbers of n's tree: a -set has no lines.
func noLines(n *yaml.Node) {
	n.Line = 0
	for _, c := range n.Content {
		noLines(c)
	}
}
