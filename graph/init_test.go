package graph

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/stat"
)

func TestInit(t *testing.T) {
	t.Parallel()
	mlp, err := NewMLP([]int{1, 40, 40, 1}, ReLU)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		scheme  Init
		std     float64
		hidden2 float64 // expected std of the 40x40 weights
		bound   float64 // largest allowed |weight| of that layer
	}{
		{TruncatedNormal, 0.01, 0.01 * 0.88, 0.02}, // truncation at 2 sd shrinks the sd by ~12%
		{He, 0.01, math.Sqrt(2.0 / 40), math.Inf(1)},
	}
	for _, c := range cases {
		w, err := mlp.Init(c.scheme, c.std, rand.New(rand.NewPCG(1, 2)))
		if err != nil {
			t.Fatal(err)
		}
		if len(w) != 1761 {
			t.Fatalf("%s: %d parameters, want 1761", c.scheme, len(w))
		}
		layer := w[80 : 80+1600] // W1 (40), b1 (40), then W2
		for i, v := range w[40:80] {
			if v != 0 {
				t.Fatalf("%s: bias b1[%d] = %v, want 0", c.scheme, i, v)
			}
		}
		for _, v := range layer {
			if math.Abs(v) > c.bound {
				t.Fatalf("%s: weight %v beyond %v", c.scheme, v, c.bound)
			}
		}
		if sd := stat.StdDev(layer, nil); math.Abs(sd-c.hidden2)/c.hidden2 > 0.06 {
			t.Errorf("%s: weight std %.4g, want about %.4g", c.scheme, sd, c.hidden2)
		}
	}
	if _, err := mlp.Init("xavier", 1, rand.New(rand.NewPCG(1, 2))); err == nil {
		t.Error("unknown scheme accepted")
	}
}
