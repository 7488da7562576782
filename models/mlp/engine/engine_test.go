package engine_test

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/graph"
	"github.com/trmaml/trmaml/graph/gradcheck"
	"github.com/trmaml/trmaml/metalearn"
	"github.com/trmaml/trmaml/models"
	"github.com/trmaml/trmaml/models/mlp"
	_ "github.com/trmaml/trmaml/models/mlp/engine"
	_ "github.com/trmaml/trmaml/tasks"
)

// TestMetaGradient builds the registered mlp from its section on 2 inputs
// and checks its second-order meta-gradient over two inner steps against
// finite differences of the two-level objective, for each activation.
func TestMetaGradient(t *testing.T) {
	b, err := models.Named(mlp.Name)
	if err != nil {
		t.Fatal(err)
	}
	io := configs.IO{Height: 1, Width: 1, Channels: 2, Outputs: 1}
	for i, act := range []string{"relu", "tanh", "sigmoid", "softplus"} {
		built, err := b.Build(&mlp.Config{Hidden: []int{5, 4}, Activation: act, Init: "he", InitStd: 0.01}, io)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(uint64(i), 9))
		w, err := built.Init(rng)
		if err != nil {
			t.Fatal(err)
		}
		for j := range w { // off the ReLU kinks of zero biases
			w[j] += 0.2 * rng.NormFloat64()
		}
		batch := metalearn.NewBatch(2, 4, 5, 2, 1)
		for t := range 2 {
			sx, sy, qx, qy := batch.Row(t)
			for _, set := range [][2][]float64{{sx, sy}, {qx, qy}} {
				for p := range set[1] {
					x0, x1 := rng.NormFloat64(), rng.NormFloat64()
					set[0][2*p], set[0][2*p+1] = x0, x1
					set[1][p] = math.Sin(x0) + 0.5*x1
				}
			}
		}
		spec := graph.Spec{Model: built.Net, Loss: graph.MSELoss, Tasks: 2, Support: 4, Query: 5, InShape: built.InShape, OutDim: 1,
			Steps: 2, Alpha: 0.1}
		r, err := gradcheck.MetaGradient(spec, w, batch, []float64{0.5, 1.5}, 1e-6)
		if err != nil {
			t.Fatal(err)
		}
		if r.RelErr > 1e-6 {
			t.Errorf("%s: meta-gradient relative error %.3g > 1e-6", act, r.RelErr)
		}
	}
}

// TestInitSchemes: every scheme graph.Init draws is accepted as
// model.mlp.init and builds a network of finite weights; another name is
// refused naming the field and the allowed values.
func TestInitSchemes(t *testing.T) {
	b, err := models.Named(mlp.Name)
	if err != nil {
		t.Fatal(err)
	}
	io := configs.IO{Height: 1, Width: 1, Channels: 1, Outputs: 1}
	for _, s := range graph.Inits {
		c, err := configs.Parse("x.yaml", []byte("model:\n  mlp:\n    init: "+string(s)+"\n"))
		if err != nil {
			t.Fatalf("%s refused: %v", s, err)
		}
		built, err := b.Build(mlp.Section(c), io)
		if err != nil {
			t.Fatal(err)
		}
		w, err := built.Init(rand.New(rand.NewPCG(1, 2)))
		if err != nil || len(w) != 1761 {
			t.Fatalf("%s: %d weights, error %v", s, len(w), err)
		}
	}
	_, err = configs.Parse("x.yaml", []byte("model:\n  mlp:\n    init: xavier\n"))
	want := `x.yaml:3: model.mlp.init = "xavier": must be one of truncated_normal, he, uniform_fan_in, uniform_fan_out`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want it to contain %s", err, want)
	}
}
