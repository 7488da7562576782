package rundir

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkSeal measures the manifest's cost per save: hashing the state
// files of the legacy TR-MAML run (its config, CSVs and checkpoint) and a
// checkpoint of 700 kB, the size of the CPU Omniglot grid's, and writing the
// manifest atomically (with its fsyncs).
//
//	go test -run XXX -bench Seal ./rundir/
func BenchmarkSeal(b *testing.B) {
	src := filepath.Join(legacy, "trmaml-T2", "unfinished")
	for _, size := range []int{0, 700 << 10} {
		dir := b.TempDir()
		for _, name := range []string{ConfigFile, MetricsFile, PFile, CheckpointFile} {
			raw, err := os.ReadFile(filepath.Join(src, name))
			if err != nil {
				b.Fatal(err)
			}
			if name == CheckpointFile && size > 0 {
				raw = make([]byte, size)
			}
			os.WriteFile(filepath.Join(dir, name), raw, 0o644)
		}
		name := "sine"
		if size > 0 {
			name = "700kB-checkpoint"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if err := Seal(dir, false); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
