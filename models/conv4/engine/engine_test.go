package engine_test

import (
	"math/rand/v2"
	"testing"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/graph"
	"github.com/trmaml/trmaml/graph/gradcheck"
	"github.com/trmaml/trmaml/metalearn"
	"github.com/trmaml/trmaml/models"
	"github.com/trmaml/trmaml/models/conv4"
	_ "github.com/trmaml/trmaml/models/conv4/engine"
)

// TestMetaGradient builds the registered conv4 from its section on
// non-square colour images and checks its second-order meta-gradient, with
// batch norm fixed and adapted, against finite differences of the
// two-level objective.
func TestMetaGradient(t *testing.T) {
	b, err := models.Named(conv4.Name)
	if err != nil {
		t.Fatal(err)
	}
	const tasks, ways, shots, queries = 2, 2, 1, 2
	io := configs.IO{Height: 6, Width: 4, Channels: 2, Outputs: ways, Classes: true}
	for i, bn := range []string{"fixed", "adapt"} {
		built, err := b.Build(&conv4.Config{Filters: 2, Blocks: 2, Pool: "max", BatchNorm: bn}, io)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(uint64(i), 4))
		w, err := built.Init(rng)
		if err != nil {
			t.Fatal(err)
		}
		pixels := io.Inputs()
		batch := metalearn.NewBatch(tasks, ways*shots, ways*queries, pixels, ways)
		for t := range tasks {
			sx, sy, qx, qy := batch.Row(t)
			for _, set := range [][2][]float64{{sx, sy}, {qx, qy}} {
				for p := range len(set[1]) / ways {
					set[1][p*ways+p%ways] = 1
					for j := range pixels {
						set[0][p*pixels+j] = float64(p%ways) + rng.NormFloat64()
					}
				}
			}
		}
		spec := graph.Spec{Model: built.Net, Loss: graph.SoftmaxCrossEntropy, Tasks: tasks, Support: ways * shots, Query: ways * queries,
			InShape: built.InShape, OutDim: ways, Steps: 1, Alpha: 0.2}
		r, err := gradcheck.MetaGradient(spec, w, batch, []float64{0.7, 1.3}, 1e-6)
		if err != nil {
			t.Fatal(err)
		}
		if r.RelErr > 1e-5 {
			t.Errorf("batch norm %s: meta-gradient relative error %.3g > 1e-5", bn, r.RelErr)
		}
	}
}

// TestRefusals: a pooling chain that shrinks the image to nothing is
// refused naming the field, the shapes and the block; stride-2 blocks
// (which round up) and blocks without pooling or batch norm build.
func TestRefusals(t *testing.T) {
	c := configs.Defaults()
	c.Model.Kind = conv4.Name
	for _, tc := range []struct {
		edit func(*conv4.Config)
		io   configs.IO
		want string
	}{
		{func(s *conv4.Config) {}, configs.IO{Height: 11, Width: 9, Channels: 1, Outputs: 5, Classes: true},
			"model.conv4.blocks = 4: leaves no image: 11x9 inputs under 4 blocks of max pooling shrink to nothing at block 4 (at most 3 blocks)"},
		{func(s *conv4.Config) { s.Blocks = 9 }, configs.IO{Height: 3, Width: 84, Channels: 3, Outputs: 5, Classes: true},
			"model.conv4.blocks = 9: leaves no image: 3x84 inputs under 9 blocks of max pooling shrink to nothing at block 2 (at most 1 blocks)"},
		{func(s *conv4.Config) { s.Pool = "stride" }, configs.IO{Height: 11, Width: 9, Channels: 1, Outputs: 5}, ""},
		{func(s *conv4.Config) { s.Pool, s.BatchNorm = "none", "off" }, configs.IO{Height: 28, Width: 28, Channels: 1, Outputs: 5}, ""},
	} {
		s := conv4.Model{}.NewSection().(*conv4.Config)
		tc.edit(s)
		c.Model.Sections = map[string]any{conv4.Name: s}
		var k configs.Checker
		conv4.Model{}.Check(c, tc.io, &k)
		switch err := k.Err(); {
		case tc.want == "" && err != nil:
			t.Errorf("refused: %v", err)
		case tc.want != "" && (err == nil || err.Error() != tc.want):
			t.Errorf("got %v, want %s", err, tc.want)
		}
	}
}
