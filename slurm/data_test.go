package slurm

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/tasks/imagefolder"
	"github.com/trmaml/trmaml/tasks/imagefolder/imagefoldertest"
)

// TestDataInMemoryEstimate: an image folder's decoded images, which its
// config alone does not give, are counted by the family from the files
// (images of the splits x height x width x channels, one byte each) and
// added to --mem; the sinusoid family has none; a missing folder is
// refused naming it.
func TestDataInMemoryEstimate(t *testing.T) {
	t.Parallel()
	c, err := configs.Builtin("fc100_5way_1shot_trmaml")
	if err != nil {
		t.Fatal(err)
	}
	sp := imagefolder.Section(c).Splits
	groups := append(append(append([]string{}, sp.Train...), sp.Validation...), sp.Test...)
	root := t.TempDir()
	if err := imagefoldertest.WriteClasses(filepath.Join(root, "fc100"), groups, 5, 3, 8, "superclasses.csv"); err != nil {
		t.Fatal(err)
	}
	data, err := DataBytes(c, root)
	if want := float64(len(groups)*5*3) * 32 * 32 * 3; err != nil || data != want {
		t.Fatalf("DataBytes = %g, %v, want %g: 20 superclasses x 5 classes x 3 images of 32x32x3", data, err, want)
	}
	const gib = 1 << 30
	got := Estimate(c, gib, 0.7, false).MemMiB
	if want := int(math.Ceil((c.Memory().Total()+gib)*1.5/(1<<20)/64)) * 64; got != want {
		t.Errorf("--mem with 1 GiB of data: %d MiB, want %d", got, want)
	}
	sine, _ := configs.Builtin("sine_quick")
	if d, err := DataBytes(sine, root); d != 0 || err != nil {
		t.Errorf("sine: %g bytes of data, %v", d, err)
	}
	if _, err := DataBytes(c, t.TempDir()); err == nil || !strings.Contains(err.Error(), "fc100") {
		t.Errorf("a missing folder: %v, want it named", err)
	}
}
