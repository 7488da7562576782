package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"gopkg.in/yaml.v3"

	"github.com/trmaml/trmaml/configs"
)

// The reference pages docs/cli.md and docs/configs.md are checked against
// the code in both directions: everything they document exists, and
// everything that exists is documented. The truth comes from the code
// itself (the usage text and each command's -h output; the YAML a default
// config marshals to and the experiment file's type), so a new flag or
// field fails this test until its row is written.

// docsPage reads a page of docs/ beside the repository root.
func docsPage(t *testing.T, name string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "docs", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// usageCommands are the commands of the usage text, e.g. "train" or
// "data omniglot": the lowercase words after "trmaml" on its lines.
func usageCommands() []string {
	var cmds []string
	for _, line := range strings.Split(usage, "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 || fields[0] != "trmaml" {
			continue
		}
		var words []string
		for _, w := range fields[1:] {
			if !regexp.MustCompile(`^[a-z]+$`).MatchString(w) {
				break
			}
			words = append(words, w)
		}
		cmds = append(cmds, strings.Join(words, " "))
	}
	return cmds
}

// helpFlags runs "trmaml CMD -h" and returns the flags it prints.
func helpFlags(t *testing.T, cmd string) []string {
	t.Helper()
	var out, errOut bytes.Buffer
	err := dispatch(append(strings.Fields(cmd), "-h"), &out, &errOut)
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("trmaml %s -h: %v, want the help text", cmd, err)
	}
	var flags []string
	for _, m := range regexp.MustCompile(`(?m)^  -([a-z][a-z0-9-]*)`).FindAllStringSubmatch(errOut.String(), -1) {
		flags = append(flags, m[1])
	}
	return flags
}

// cliDoc parses docs/cli.md: each "## trmaml CMD" heading starts a command,
// each table row whose first cell is `-NAME ...` documents one of its flags.
func cliDoc(page string) map[string][]string {
	doc := map[string][]string{}
	cmd := ""
	for _, line := range strings.Split(page, "\n") {
		if m := regexp.MustCompile(`^## trmaml ([a-z ]+)$`).FindStringSubmatch(line); m != nil {
			cmd = strings.TrimSpace(m[1])
			doc[cmd] = []string{}
			continue
		}
		if strings.HasPrefix(line, "## ") {
			cmd = ""
			continue
		}
		if m := regexp.MustCompile("^\\| `-([a-z][a-z0-9-]*)").FindStringSubmatch(line); m != nil && cmd != "" {
			doc[cmd] = append(doc[cmd], m[1])
		}
	}
	return doc
}

func TestCLIDocsMatchCommands(t *testing.T) {
	doc := cliDoc(docsPage(t, "cli.md"))
	cmds := usageCommands()
	if len(cmds) < 10 {
		t.Fatalf("found only %v in the usage text", cmds)
	}
	for _, cmd := range cmds {
		if _, ok := doc[cmd]; !ok {
			t.Errorf("docs/cli.md: command %q has no section \"## trmaml %s\"", cmd, cmd)
		}
	}
	for cmd, documented := range doc {
		if !slices.Contains(cmds, cmd) {
			t.Errorf("docs/cli.md documents %q, which is not a command", cmd)
			continue
		}
		actual := helpFlags(t, cmd)
		for _, f := range actual {
			if !slices.Contains(documented, f) {
				t.Errorf("docs/cli.md: trmaml %s: flag -%s is not documented", cmd, f)
			}
		}
		for _, f := range documented {
			if !slices.Contains(actual, f) {
				t.Errorf("docs/cli.md: trmaml %s has no flag -%s", cmd, f)
			}
		}
	}
}

// fieldDoc is one documented field: its type and default cells.
type fieldDoc struct{ typ, def string }

// configsDoc parses docs/configs.md's tables, rows "| `PATH` | TYPE |
// DEFAULT | MEANING |": those under the heading "## Experiment files" into
// exp, all others into cfg.
func configsDoc(page string) (cfg, exp map[string]fieldDoc) {
	cfg, exp = map[string]fieldDoc{}, map[string]fieldDoc{}
	into := cfg
	for _, line := range strings.Split(page, "\n") {
		if strings.HasPrefix(line, "## ") {
			into = cfg
			if strings.HasPrefix(line, "## Experiment files") {
				into = exp
			}
			continue
		}
		cells := strings.Split(line, "|")
		if len(cells) < 5 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue
		}
		path := strings.Trim(strings.TrimSpace(cells[1]), "`")
		into[path] = fieldDoc{typ: strings.TrimSpace(cells[2]), def: strings.TrimSpace(cells[3])}
	}
	return cfg, exp
}

// schemaField is one leaf of the config schema: its type and default.
type schemaField struct {
	typ string
	def any
}

// collectFields adds the leaves of a YAML mapping node under prefix with
// their values: a mapping is descended into, anything else (a scalar, a
// list) is a field.
func collectFields(t *testing.T, n *yaml.Node, prefix string, into map[string]any) {
	t.Helper()
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, val := n.Content[i].Value, n.Content[i+1]
		path := key
		if prefix != "" {
			path = prefix + "." + key
		}
		if val.Kind == yaml.MappingNode {
			collectFields(t, val, path, into)
			continue
		}
		var v any
		if err := val.Decode(&v); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		into[path] = v
	}
}

// sameValue says whether a documented default (YAML text) is the value v.
func sameValue(text string, v any) bool {
	var d any
	if yaml.Unmarshal([]byte(text), &d) != nil {
		return false
	}
	a, err1 := json.Marshal(d)
	b, err2 := json.Marshal(v)
	return err1 == nil && err2 == nil && string(a) == string(b)
}

// structured says whether v is a list of mappings.
func structured(v any) bool {
	l, ok := v.([]any)
	if !ok || len(l) == 0 {
		return false
	}
	_, ok = l[0].(map[string]any)
	return ok
}

func checkFields(t *testing.T, what string, doc map[string]fieldDoc, schema map[string]schemaField, checkDefaults bool) {
	t.Helper()
	if len(schema) < 5 {
		t.Fatalf("%s: found only %d fields in the code", what, len(schema))
	}
	for path, f := range schema {
		d, ok := doc[path]
		if !ok {
			t.Errorf("docs/configs.md: %s field %s is not documented", what, path)
			continue
		}
		if d.typ != f.typ && !strings.HasPrefix(d.typ, f.typ+" ") {
			t.Errorf("docs/configs.md: %s field %s has type %q, the code has %s", what, path, d.typ, f.typ)
		}
		// The default cell starts with the default in backquotes, except for
		// a list of mappings, which it describes in words.
		m := regexp.MustCompile("^`([^`]*)`").FindStringSubmatch(d.def)
		if checkDefaults && !structured(f.def) && (m == nil || !sameValue(m[1], f.def)) {
			t.Errorf("docs/configs.md: %s field %s has default %q, the code has %v", what, path, d.def, f.def)
		}
	}
	for path := range doc {
		if _, ok := schema[path]; !ok {
			t.Errorf("docs/configs.md documents %s field %s, which does not exist", what, path)
		}
	}
}

func TestConfigDocsMatchSchema(t *testing.T) {
	cfg, exp := configsDoc(docsPage(t, "configs.md"))
	checkFields(t, "config", cfg, configSchema(t), true)
	checkFields(t, "experiment file", exp, experimentSchema(t), false)
}

// TestDocsLinksResolve checks every relative link of README.md,
// CHANGELOG.md and docs/ (inline links and reference definitions): the
// file exists and, for a link with #anchor, one of its headings has that
// anchor (GitHub's: lowercase, punctuation dropped, spaces to hyphens, -1,
// -2, ... after a repeated heading).
func TestDocsLinksResolve(t *testing.T) {
	root := ".."
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, filepath.Join(root, "README.md"), filepath.Join(root, "CHANGELOG.md"))
	link := regexp.MustCompile(`\]\(<?([^)\s>]+)>?(?:\s+"[^"]*")?\)|(?m)^\s{0,3}\[[^\]]+\]:\s+<?([^\s>]+)`)
	for _, page := range pages {
		raw, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(raw), -1) {
			target := m[1] + m[2]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			path := page
			if file != "" {
				path = filepath.Join(filepath.Dir(page), file)
			}
			if _, err := os.Stat(path); err != nil {
				t.Errorf("%s: link %s: %v", page, target, err)
				continue
			}
			if anchor != "" && !slices.Contains(anchors(t, path), anchor) {
				t.Errorf("%s: link %s: no heading with anchor #%s in %s", page, target, anchor, path)
			}
		}
	}
}

// anchors lists the anchors of a Markdown file's headings.
func anchors(t *testing.T, path string) []string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	seen := map[string]int{}
	inCode := false
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(line, "```") {
			inCode = !inCode
		}
		if inCode || !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.ToLower(strings.TrimSpace(strings.TrimLeft(line, "#")))
		var b strings.Builder
		for _, r := range title {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			out = append(out, fmt.Sprintf("%s-%d", a, n))
		} else {
			out = append(out, a)
		}
		seen[a]++
	}
	return out
}

// TestCLIDocsListScripts checks that docs/cli.md's script table lists
// every script of scripts/ and only those.
func TestCLIDocsListScripts(t *testing.T) {
	scripts, err := filepath.Glob(filepath.Join("..", "scripts", "*.sh"))
	if err != nil || len(scripts) == 0 {
		t.Fatalf("no scripts found: %v", err)
	}
	page := docsPage(t, "cli.md")
	documented := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `scripts/([a-z_]+\\.sh)").FindAllStringSubmatch(page, -1) {
		documented[m[1]] = true
	}
	for _, s := range scripts {
		name := filepath.Base(s)
		if !documented[name] {
			t.Errorf("docs/cli.md: scripts/%s is not in the script table", name)
		}
		delete(documented, name)
	}
	for name := range documented {
		t.Errorf("docs/cli.md lists scripts/%s, which does not exist", name)
	}
}

// TestConfigDocsListGrids checks that docs/configs.md names every
// experiment grid of configs/experiments (the *_base.yaml files there are
// the grids' base configs).
func TestConfigDocsListGrids(t *testing.T) {
	grids, err := filepath.Glob(filepath.Join("..", "configs", "experiments", "*.yaml"))
	if err != nil || len(grids) == 0 {
		t.Fatalf("no experiment files found: %v", err)
	}
	page := docsPage(t, "configs.md")
	for _, g := range grids {
		name := filepath.Base(g)
		if !strings.HasSuffix(name, "_base.yaml") && !strings.Contains(page, "`"+name+"`") {
			t.Errorf("docs/configs.md does not name the experiment grid configs/experiments/%s", name)
		}
	}
}

// TestConfigDocsListBuiltins checks that docs/configs.md's table of
// built-in configs (in its section "How a file is read", the rows
// "| `NAME.yaml`, ... | setting |", with shell braces for families of
// files) names every config trmaml embeds, and only those.
func TestConfigDocsListBuiltins(t *testing.T) {
	builtins := configs.BuiltinNames()
	if len(builtins) < 5 {
		t.Fatalf("found only %v built-in configs", builtins)
	}
	page := docsPage(t, "configs.md")
	start := strings.Index(page, "\n## How a file is read\n")
	if start < 0 {
		t.Fatal(`docs/configs.md has no section "## How a file is read"`)
	}
	page = page[start+1:]
	if end := strings.Index(page[3:], "\n## "); end >= 0 {
		page = page[:end+3]
	}
	documented := map[string]bool{}
	row := regexp.MustCompile("(?m)^\\| (`[a-z0-9_{},]+\\.yaml`(?:, `[a-z0-9_{},]+\\.yaml`)*) \\|")
	for _, m := range row.FindAllStringSubmatch(page, -1) {
		for _, file := range regexp.MustCompile("`([^`]+)\\.yaml`").FindAllStringSubmatch(m[1], -1) {
			for _, name := range expandBraces(file[1]) {
				documented[name] = true
			}
		}
	}
	for _, name := range builtins {
		if !documented[name] {
			t.Errorf("docs/configs.md: the built-in config %s.yaml is not in the table of built-in configs", name)
		}
		delete(documented, name)
	}
	for name := range documented {
		t.Errorf("docs/configs.md lists the built-in config %s.yaml, which trmaml does not embed", name)
	}
}

// expandBraces expands shell braces: "a_{b,c}_{d,e}" is a_b_d, a_b_e,
// a_c_d, a_c_e.
func expandBraces(s string) []string {
	open := strings.Index(s, "{")
	end := strings.Index(s, "}")
	if open < 0 || end < open {
		return []string{s}
	}
	var out []string
	for _, alt := range strings.Split(s[open+1:end], ",") {
		out = append(out, expandBraces(s[:open]+alt+s[end+1:])...)
	}
	return out
}
