package graph

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
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
	_, err = mlp.Init("xavier", 1, rand.New(rand.NewPCG(1, 2)))
	if err == nil || !strings.Contains(err.Error(), "uniform_fan_out") {
		t.Errorf("unknown scheme: error %v, want one listing the allowed schemes", err)
	}
}

// TestInitUniform checks every weight and bias tensor of the uniform schemes
// against U(-b, b) with b = 1/sqrt(fan): the range, the standard deviation
// b/sqrt(3) and a Kolmogorov-Smirnov distance to the uniform CDF.
func TestInitUniform(t *testing.T) {
	t.Parallel()
	sizes := []int{3, 200, 50, 2}
	mlp, err := NewMLP(sizes, ReLU)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		scheme Init
		fan    func(in, out int) int
	}{
		{UniformFanIn, func(in, _ int) int { return in }},
		{UniformFanOut, func(_, out int) int { return out }},
	}
	for _, c := range cases {
		w, err := mlp.Init(c.scheme, 0, rand.New(rand.NewPCG(5, 6)))
		if err != nil {
			t.Fatal(err)
		}
		off := 0
		for l := 0; l+1 < len(sizes); l++ {
			in, out := sizes[l], sizes[l+1]
			b := 1 / math.Sqrt(float64(c.fan(in, out)))
			for _, part := range []struct {
				name string
				n    int
			}{{"W", in * out}, {"b", out}} {
				v := w[off : off+part.n]
				off += part.n
				name := fmt.Sprintf("%s %s%d", c.scheme, part.name, l+1)
				for _, x := range v {
					if math.Abs(x) > b {
						t.Fatalf("%s: %v beyond the bound %v", name, x, b)
					}
				}
				if part.n < 100 {
					continue // too few values for the statistics
				}
				if sd := stat.PopStdDev(v, nil); math.Abs(sd-b/math.Sqrt(3)) > 0.05*b/math.Sqrt(3) {
					t.Errorf("%s: std %.4g, want %.4g", name, sd, b/math.Sqrt(3))
				}
				s := slices.Clone(v)
				slices.Sort(s)
				ks := 0.0
				for i, x := range s {
					f := (x + b) / (2 * b) // the uniform CDF
					ks = max(ks, math.Abs(f-float64(i)/float64(len(s))), math.Abs(f-float64(i+1)/float64(len(s))))
				}
				if crit := 1.63 / math.Sqrt(float64(len(s))); ks > crit { // 1% level
					t.Errorf("%s: Kolmogorov-Smirnov distance %.4f above %.4f", name, ks, crit)
				}
			}
		}
		if off != len(w) {
			t.Fatalf("%s: %d parameters, want %d", c.scheme, len(w), off)
		}
	}
}
