package configs_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/configs"
	_ "github.com/trmaml/trmaml/models/builtin"
)

// TestOldModelLayout: a config a user writes in the layout before models
// had sections is refused, each old key with the file, its line, the field,
// where it goes now and what model allows; a run directory's config.yaml
// of that layout (ParseRecorded) reads as the new layout's equivalent.
func TestOldModelLayout(t *testing.T) {
	t.Parallel()
	cases := []struct {
		old, now string
		want     []string
	}{
		{"name: s\nmodel:\n  hidden: [8]\n  activation: tanh\n", "name: s\nmodel:\n  kind: mlp\n  mlp: {hidden: [8], activation: tanh}\n",
			[]string{"old.yaml:3: model.hidden: is the layout before models had sections: write model: {kind: mlp, mlp: {...}} with the model's settings in its section (model allows: kind, dtype, ",
				"old.yaml:4: model.activation: is the layout"}},
		{"name: o\ntask: {family: omniglot}\nmodel:\n  dtype: float32\n  cnn: {filters: 4, adapt_bn: true}\n", "name: o\ntask: {family: omniglot}\nmodel:\n  dtype: float32\n  kind: conv4\n  conv4: {filters: 4, batch_norm: adapt}\n",
			[]string{"old.yaml:5: model.cnn: is the layout before models had sections: write model: {kind: conv4, conv4: {...}}"}},
	}
	for _, c := range cases {
		_, err := configs.Parse("old.yaml", []byte(c.old))
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("Parse of the old layout: %v\nwant %q", err, w)
			}
		}
		got, err := configs.ParseRecorded("config.yaml", []byte(c.old))
		if err != nil {
			t.Fatal(err)
		}
		want, err := configs.Parse("new.yaml", []byte(c.now))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.Read(), want.Read()) {
			t.Errorf("ParseRecorded of\n%s\nreads %+v, want %+v", c.old, got.Model, want.Model)
		}
	}
}
