package imagefolder

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/configs"
)

// The package's tests register the family as package tasks does (which
// they cannot import: it imports this package).
func init() { configs.RegisterFamily(Family{}) }

// config is a parsed config of the imagefolder family over dir.
func config(t testing.TB, dir, section string) configs.Config {
	t.Helper()
	c, err := configs.Parse("test.yaml", []byte(`name: t
algorithm: maml
task:
  family: imagefolder
  support: 1
  query: 3
  imagefolder:
    dir: `+dir+`
`+section+`
model: {kind: conv4, conv4: {filters: 4, blocks: 2}}
meta: {iterations: 4, batch: 2}
trmaml: {p_lr: 1e-5}
eval: {every: 2, instances: 4, train_instances: 4, batch: 2}
`))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestDataCheck: a good folder is described split by split with "no
// problems found"; a bad one lists every problem (a corrupt file, a class
// too small for K + J) and is left as it was.
func TestDataCheck(t *testing.T) {
	dir := tree{groups: 3, classes: 5, images: 4, h: 8, w: 6}.write(t)
	c := config(t, dir, "    ways: 3\n    splits: {train: [g1, g2], test: [g3]}\n    noun: category")
	var out bytes.Buffer
	if err := (Family{}).DataCheck(c, "", &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{
		"split  categories  classes  images  fewest classes  fewest images",
		"train           2       10      40               5              4",
		" test           1        5      20               5              4",
		"test       category g3: 5 classes, 20 images",
		"images: 60 files; 60 of 6x8 (width x height); 0 greyscale, 60 colour",
		"decoded: 8x6x3",
		"no problems found",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the report lacks %q:\n%s", want, out.String())
		}
	}

	writeFile(t, filepath.Join(dir, "g1/g1c02/01.png"), "garbage")
	os.Remove(filepath.Join(dir, "g3/g3c05/00.png"))
	before := listing(t, dir)
	out.Reset()
	err := (Family{}).DataCheck(c, dir, &out)
	if err == nil || !strings.Contains(err.Error(), "2 problem(s)") {
		t.Errorf("DataCheck: %v, want 2 problems\n%s", err, out.String())
	}
	for _, want := range []string{
		filepath.Join(dir, "g1/g1c02/01.png") + ": not a readable PNG or JPEG",
		dir + ": test: class g3c05 of group g3 has 3 images, 1 shots + 3 queries need 4",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the report lacks %q:\n%s", want, out.String())
		}
	}
	if !slices.Equal(before, listing(t, dir)) {
		t.Error("data check changed the folder")
	}
	if _, err := os.Stat(filepath.Join(dir, ".trmaml-cache")); err == nil {
		t.Error("data check wrote a cache")
	}
}
