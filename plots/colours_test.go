package plots_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/trmaml/trmaml/metalearn"
	"github.com/trmaml/trmaml/plots"
	"github.com/trmaml/trmaml/results"
	"github.com/trmaml/trmaml/results/resultstest"
)

var (
	orange = [3]uint32{230, 159, 0}
	purple = [3]uint32{204, 121, 167}
)

// TestMethodColours: each method has its colour in every figure, whichever
// other methods the figure shows and in whatever order: MAML blue and
// TR-MAML vermillion beside each other as beside DRO-MAML (orange), CVaR
// (green) or entropic TR-MAML (reddish purple), and TR-MAML's weights
// alone vermillion too; two methods of a user's program whose names hash
// to one colour are drawn in two, in figure 1 and the trade-off figure.
func TestMethodColours(t *testing.T) {
	t.Parallel()
	mse := func(algs ...string) []resultstest.Spec {
		var specs []resultstest.Spec
		for i, a := range algs {
			specs = append(specs, seeds(a, a, "second", 1+0.2*float64(i), 1.1+0.2*float64(i))...)
		}
		return specs
	}
	var accuracy []resultstest.Spec
	for i, a := range []string{"dromaml", "maml", "trmaml"} {
		accuracy = append(accuracy, accuracySeeds(a, a, 0.5+0.2*float64(i), 0.6+0.2*float64(i))...)
	}
	hard := results.TasksWithAmplitudeAtLeast(resultstest.TrainTasks, results.HardAmplitude)
	figure1 := func(g []*results.Group, p string) error { return plots.Figure1(g, p, plots.Double) }
	for _, tc := range []struct {
		name            string
		specs           []resultstest.Spec
		draw            func([]*results.Group, string) error
		present, absent [][3]uint32
	}{
		{"figure1, MAML and TR-MAML", mse("maml", "trmaml"), figure1, [][3]uint32{blue, vermillion}, [][3]uint32{orange, green}},
		{"figure1, MAML and DRO-MAML", mse("maml", "dromaml"), figure1, [][3]uint32{blue, orange}, [][3]uint32{vermillion}},
		{"figure1, five methods", mse("maml", "trmaml", "dromaml", "trmaml_entropic", "cvar"), figure1, [][3]uint32{blue, vermillion, orange, purple, green}, nil},
		{"p_weights, TR-MAML", mse("trmaml"), func(g []*results.Group, p string) error { return plots.PWeights(g, hard, p, plots.Double) },
			[][3]uint32{vermillion}, [][3]uint32{blue}},
		{"orders, DRO-MAML and TR-MAML", append(mse("dromaml", "trmaml"), seeds("trmaml1", "trmaml", "first", 0.5, 0.6)...),
			func(g []*results.Group, p string) error { return plots.Orders(g, p, plots.Double) }, [][3]uint32{orange, vermillion}, [][3]uint32{blue}},
		{"adversary, three methods", accuracy, func(g []*results.Group, p string) error { return plots.Adversary(g, p, plots.Double) },
			[][3]uint32{orange, blue, vermillion}, nil},
		// Two methods of a user's program whose names hash to one colour
		// are drawn in two (userA and userB, registered below).
		{"figure1, two user methods", mse(userA, userB), figure1, users, nil},
		{"trade-off, two user methods", mse(userA, userB),
			func(g []*results.Group, p string) error { return plots.CVaRTradeoff(g, p, plots.Double) }, users, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "f.png")
			if err := tc.draw(groupsOf(t, tc.specs...), path); err != nil {
				t.Fatal(err)
			}
			hits := readPNG(t, path).colourCounts()
			for _, c := range tc.present {
				if hits[c] < 200 {
					t.Errorf("colour %v drawn on %d pixels only", c, hits[c])
				}
			}
			for _, c := range tc.absent {
				if hits[c] > 20 {
					t.Errorf("colour %v, no method's here, drawn on %d pixels", c, hits[c])
				}
			}
		})
	}
}

// userA and userB are methods of this test's program (MAML under other
// names) whose names alone hash to one colour (plots.CollidingNames).
// users are their colours shown together.
var (
	userA, userB = plots.CollidingNames()
	users        = func() [][3]uint32 {
		var cs [][3]uint32
		for _, c := range plots.MethodColours([]string{userA, userB}) {
			cs = append(cs, [3]uint32{uint32(c.R), uint32(c.G), uint32(c.B)})
		}
		if len(cs) != 2 || cs[0] == cs[1] {
			panic(fmt.Sprintf("plots: %s and %s shown together share colour %v", userA, userB, cs))
		}
		return cs
	}()
)

func init() {
	for _, name := range []string{userA, userB} {
		metalearn.RegisterMethod(metalearn.MethodInfo{Name: name, New: func() metalearn.MethodSettings { return &metalearn.MAML{} }})
	}
}

// colourCounts counts the pixels of each colour.
func (d decoded) colourCounts() map[[3]uint32]int {
	hits := map[[3]uint32]int{}
	for x := 0; x < d.w; x++ {
		for y := 0; y < d.h; y++ {
			r, g, b := d.rgb(x, y)
			hits[[3]uint32{r, g, b}]++
		}
	}
	return hits
}
