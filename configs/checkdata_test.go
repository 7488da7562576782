package configs_test

import (
	"slices"
	"strings"
	"testing"

	. "github.com/trmaml/trmaml/configs"
)

// omniglotSmall is an omniglot file within the memory limit.
const omniglotSmall = omniglotYAML + "eval:\n  batch: 4\n"

// TestDataRootOnlyWhereRead: a data root that a config file or a -set
// states is refused, naming the file and line or the flag, for a family
// that reads no data files (it would be dropped without a word), and
// accepted for a family that reads them; a run directory's recorded
// config.yaml is read as it was written, and a -set of another field
// leaves such a recorded root alone.
func TestDataRootOnlyWhereRead(t *testing.T) {
	t.Parallel()
	const refused = "task family sinusoid reads no data files: only the families omniglot, imagefolder read a data section"
	all := func(string) bool { return true }
	for _, tc := range []struct {
		name, yaml string
		recorded   bool
		sets       []string
		want       string // substring of the error, "" for none
	}{
		{"sinusoid file", "name: s\ndata:\n  root: /x\n", false, nil, `x.yaml:3: data.root = "/x": ` + refused},
		{"sinusoid flow section", "name: s\ndata: {root: /x}\n", false, nil, `x.yaml:2: data.root = "/x": ` + refused},
		{"linreg file", "task:\n  family: linreg\ndata:\n  root: /x\n", false, nil, `x.yaml:4: data.root = "/x": task family linreg reads no data files`},
		{"sinusoid -set", "name: s\n", false, []string{"data.root=/x"}, `-set data.root=/x: data.root = "/x": ` + refused},
		{"sinusoid -set section", "name: s\n", false, []string{"data={root: /x}"}, `-set data={root: /x}: data.root = "/x": ` + refused},
		{"sinusoid empty root", "name: s\ndata:\n  root: \"\"\n", false, nil, ""},
		{"omniglot file", omniglotSmall + "data:\n  root: /x\n", false, nil, ""},
		{"omniglot -set", omniglotSmall, false, []string{"data.root=/x"}, ""},
		{"recorded sinusoid", "name: s\ndata:\n  root: /x\n", true, nil, ""},
		{"recorded sinusoid, other -set", "name: s\ndata:\n  root: /x\n", true, []string{"eval.every=5"}, ""},
		{"recorded root, -set task.family", "name: s\ntask:\n  family: linreg\ndata:\n  root: /x\n", true, []string{"task.family=sinusoid"}, `-set task.family=sinusoid: data.root = "/x": ` + refused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parse := Parse
			if tc.recorded {
				parse = ParseRecorded
			}
			c, err := parse("x.yaml", []byte(tc.yaml))
			if err == nil && tc.sets != nil {
				_, err = Override(c, "-set", tc.sets, all)
			}
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && err == nil:
				t.Fatal("accepted")
			case tc.want != "" && !strings.Contains(err.Error(), tc.want):
				t.Fatalf("error\n%v\nwant it to contain\n%s", err, tc.want)
			}
		})
	}
	if got := DataReaders(); !slices.Equal(got, []string{"omniglot", "imagefolder"}) {
		t.Errorf("DataReaders() = %v, want the registered families that read data, [omniglot imagefolder]", got)
	}
}
