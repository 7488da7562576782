package rundir

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/trmaml/trmaml/metalearn"
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

// BenchmarkBindings measures what the bindings add to a sine run of
// configs/sine_quick.yaml's size (a 1-40-40-1 MLP, 1761 parameters with
// Adam's moments; 100 meta-training tasks; 11 evaluations): per save, the
// row hashes of metrics.csv and p.csv (BindRows); once when the run
// finishes, the checkpoint's state hash (CheckpointStateHash) and the
// self-hash of model.json (WriteBound against WriteJSON). Divided by
// eval.every and meta.iterations, they are the cost per iteration.
//
//	go test -run XXX -bench Bindings ./rundir/
func BenchmarkBindings(b *testing.B) {
	const params, tasks, rows = 1761, 100, 11
	var metrics, p bytes.Buffer
	metrics.WriteString(MetricsHeader)
	names := make([]string, tasks)
	for i := range names {
		names[i] = fmt.Sprintf("amplitude [%.2f,%.2f)", 0.1+0.01*float64(i), 0.11+0.01*float64(i))
	}
	p.WriteString(PHeader(names))
	w := make([]float64, params)
	for i := range w {
		w[i] = math.Sin(float64(i)) / 7
	}
	for r := range rows {
		MetricsRow{Iteration: 2000 * r, Elapsed: time.Duration(r) * time.Second, BatchMean: 1.2345678901234, BatchWorst: 9.87654321,
			Train: Stats{Mean: 2.1313131, Worst: 4.8178178, Std: 0.5442121}, Test: Stats{Mean: 1.5602323, Worst: 6.389012, Std: 0.8612345}}.Append(&metrics)
		pr := make([]float64, tasks)
		for i := range pr {
			pr[i] = (1 + 0.001*math.Sin(float64(i*r))) / tasks
		}
		AppendPRow(&p, 2000*r, pr)
	}
	b.Run("rows-per-save", func(b *testing.B) {
		var ck Checkpoint
		for b.Loop() {
			ck.BindRows(metrics.Bytes(), p.Bytes(), nil)
		}
	})
	dir := b.TempDir()
	adam := &metalearn.Adam{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Epsilon: 1e-8, M: w, V: w, T: 20000}
	ckPath := filepath.Join(dir, CheckpointFile)
	if _, err := WriteCheckpoint(ckPath, Checkpoint{State: metalearn.State{Iteration: 20000, W: w, P: make([]float64, tasks)}, OptimizerState: adam, Seed: 1, ConfigSHA256: HashBytes(nil)}); err != nil {
		b.Fatal(err)
	}
	b.Run("state-hash-per-finish", func(b *testing.B) {
		for b.Loop() {
			if _, err := CheckpointStateHash(ckPath); err != nil {
				b.Fatal(err)
			}
		}
	})
	model := Model{Kind: "mlp", Net: json.RawMessage(`{"sizes":[1,40,40,1],"activation":"relu"}`), W: w, StateSHA256: HashBytes(nil)}
	for _, c := range []struct {
		name  string
		write func(string, any) error
	}{{"model-json", WriteJSON}, {"model-json-bound", WriteBound}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if err := c.write(filepath.Join(dir, ModelFile), model); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
