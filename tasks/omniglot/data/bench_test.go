package data

import (
	"math/rand/v2"
	"testing"

	"github.com/trmaml/trmaml/metalearn"
)

// Sampling speed, in the paper's settings (J = 10 queries per class):
//
//	go test -run XXX -bench Sample -benchmem ./tasks/omniglot/data/
func BenchmarkSample(b *testing.B) {
	d := sharedDataset(b)
	for _, bc := range []struct {
		name string
		spec Spec
	}{
		{"5way1shot", Spec{5, 1, 10, true}},
		{"20way5shot", Spec{20, 5, 10, true}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ts, err := NewTaskSet(d, Train, bc.spec)
			if err != nil {
				b.Fatal(err)
			}
			in, out := ts.Dims()
			batch := metalearn.NewBatch(1, bc.spec.Ways*bc.spec.Shots, bc.spec.Ways*bc.spec.Queries, in, out)
			rng := rand.New(rand.NewPCG(1, 2))
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				ts.Sample(i%ts.Len(), rng, batch, 0)
				i++
			}
		})
	}
}

// Start-up times: decoding all 32,460 PNGs (no cache) against reading the
// cache, each including the content hash of the archives:
//
//	go test -run XXX -bench Load -benchtime 3x ./tasks/omniglot/data/
func BenchmarkLoad(b *testing.B) {
	root := sharedRoot(b)
	cache := b.TempDir() + "/" + CacheName
	b.Run("decode", func(b *testing.B) {
		for b.Loop() {
			if _, err := Load(root, Options{Size: 28, NoCache: true}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cache", func(b *testing.B) {
		if _, err := Load(root, Options{Size: 28, CachePath: cache}); err != nil { // writes the cache, untimed
			b.Fatal(err)
		}
		for b.Loop() {
			d, err := Load(root, Options{Size: 28, CachePath: cache})
			if err != nil || !d.Info.FromCache {
				b.Fatal(err, d.Info.Rebuilt)
			}
			b.ReportMetric(float64(d.Bytes())/1e6, "MB-pixels")
		}
	})
	b.Run("hash", func(b *testing.B) {
		for b.Loop() {
			if err := Verify(root); err != nil {
				b.Fatal(err)
			}
		}
	})
}
