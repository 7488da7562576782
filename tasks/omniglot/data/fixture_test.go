package data

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/internal/omniglottest"
	"github.com/trmaml/trmaml/metalearn"
)

// TestDescribeFixture: Describe counts and hashes the synthetic release as
// the fixture writer did independently (reading its own bytes).
func TestDescribeFixture(t *testing.T) {
	fx := omniglottest.WriteFixture(t, 1)
	got, err := Describe(fx.Root)
	if err != nil {
		t.Fatal(err)
	}
	want := Release{
		Background:    SetContent{fx.Background.Characters, fx.Background.Images, fx.Background.SHA256},
		Evaluation:    SetContent{fx.Evaluation.Characters, fx.Evaluation.Images, fx.Evaluation.SHA256},
		ContentSHA256: fx.SHA256,
	}
	if got != want {
		t.Fatalf("Describe %+v, want %+v", got, want)
	}
	if want.Background.Characters != 23 || want.Evaluation.Images != 11*omniglottest.Drawings {
		t.Errorf("fixture of %+v, want FixtureAlphabets' 23 background characters and 11 evaluation characters of 20 drawings", want)
	}
	if _, err := Describe(t.TempDir()); !errors.Is(err, ErrMissing) {
		t.Errorf("Describe of an empty root: %v, want ErrMissing", err)
	}
}

// TestLoadChecksTheRelease: the fixture loads only against its own
// Release; the default (published) check and a Release that differs in
// one hash or one count refuse it.
func TestLoadChecksTheRelease(t *testing.T) {
	fx := omniglottest.WriteFixture(t, 2)
	rel, err := Describe(fx.Root)
	if err != nil {
		t.Fatal(err)
	}
	wrongHash, wrongCount := rel, rel
	wrongHash.Evaluation.SHA256 = strings.Repeat("0", 64) // another release's
	wrongHash.ContentSHA256 = strings.Repeat("1", 64)
	wrongCount.Background.Images--
	for _, tt := range []struct {
		name string
		rel  *Release
		want string
	}{
		{"published", nil, "23 characters and 460 images, want 964 and 19280"},
		{"wrong hash", &wrongHash, "images_evaluation.zip: content SHA-256 " + rel.Evaluation.SHA256 + ", want 0000"},
		{"wrong count", &wrongCount, "460 images, want 23 and 459"},
	} {
		_, err := Load(fx.Root, Options{Size: 28, NoCache: true, Release: tt.rel})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want an error containing %q", tt.name, err, tt.want)
		}
	}
	d, err := Load(fx.Root, Options{Size: 28, Release: &rel})
	if err != nil {
		t.Fatal(err)
	}
	if d.Info.CacheErr != nil || d.Info.FromCache {
		t.Errorf("first load: cache error %v, from cache %v", d.Info.CacheErr, d.Info.FromCache)
	}
	var names [3][]string
	for _, a := range d.Alphabets() {
		names[a.Split] = append(names[a.Split], a.Name)
	}
	want := [3][]string{
		{"Anglo-Saxon_Futhorc", "Braille", "Tifinagh"},
		{"Alphabet_of_the_Magi"},
		{"Angelic", "Tengwar"},
	}
	if !slices.Equal(names[Train], want[Train]) || !slices.Equal(names[Validation], want[Validation]) || !slices.Equal(names[Test], want[Test]) {
		t.Errorf("splits %v, want %v", names, want)
	}
	if d.Images() != 34*omniglottest.Drawings {
		t.Errorf("%d images, want %d", d.Images(), 34*omniglottest.Drawings)
	}
	warm, err := Load(fx.Root, Options{Size: 28, Release: &rel})
	if err != nil || !warm.Info.FromCache || !warm.store.equal(d.store) {
		t.Errorf("second load: %v, from cache %v, same pixels %v", err, warm != nil && warm.Info.FromCache, err == nil && warm.store.equal(d.store))
	}
	if _, err := os.Stat(filepath.Join(fx.Root, Dir, CacheName)); err != nil {
		t.Error(err)
	}
}

// TestSampleFixture samples every split of the fixture and traces every
// image back to its alphabet: distinct characters per instance, distinct
// drawings per class, one rotation per class, no allocation.
func TestSampleFixture(t *testing.T) {
	fx := omniglottest.WriteFixture(t, 3)
	rel, err := Describe(fx.Root)
	if err != nil {
		t.Fatal(err)
	}
	d, err := Load(fx.Root, Options{Size: 28, NoCache: true, Release: &rel})
	if err != nil {
		t.Fatal(err)
	}
	spec := Spec{Ways: 5, Shots: 2, Queries: 3, Rotate: true}
	rng := rand.New(rand.NewPCG(5, 6))
	for _, split := range Splits {
		ts, err := NewTaskSet(d, split, spec)
		if err != nil {
			t.Fatal(err)
		}
		in, out := ts.Dims()
		b := metalearn.NewBatch(1, spec.Ways*spec.Shots, spec.Ways*spec.Queries, in, out)
		rotations := 0
		for task := range ts.Len() {
			m := origins(d, ts.Alphabet(task))
			for range 10 {
				ts.Sample(task, rng, b, 0)
				inst := identify(t, ts, b, 0, m)
				if got := len(slices.Compact(slices.Sorted(slices.Values(inst.chars)))); got != spec.Ways {
					t.Fatalf("%v task %d: %d distinct characters among %v", split, task, got, inst.chars)
				}
				for label, dr := range inst.drawings {
					if !inst.ambiguous && len(slices.Compact(slices.Sorted(slices.Values(dr)))) != len(dr) {
						t.Fatalf("%v task %d: class %d repeats a drawing: %v", split, task, label, dr)
					}
					rotations += min(inst.rots[label], 1)
				}
			}
		}
		if rotations == 0 {
			t.Errorf("%v: no rotated class", split)
		}
		if allocs := testing.AllocsPerRun(50, func() { ts.Sample(0, rng, b, 0) }); allocs != 0 {
			t.Errorf("%v: %v allocations per instance", split, allocs)
		}
	}
}
