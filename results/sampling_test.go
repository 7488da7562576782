package results_test

import (
	"testing"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/results"
	_ "github.com/trmaml/trmaml/tasks" // the built-in families
)

// TestSamplingPerFamily: captions state each family's meta-training
// distribution in its own terms: C(Z_i, N) over characters of alphabets
// and over classes of an image folder's groups (named by its noun),
// uniform over sine tasks, the configured masses of linear regression;
// runs of different families get the general statement.
func TestSamplingPerFamily(t *testing.T) {
	t.Parallel()
	group := func(names ...string) []*results.Group {
		g := &results.Group{}
		for _, n := range names {
			c, err := configs.Builtin(n)
			if err != nil {
				t.Fatal(err)
			}
			g.Runs = append(g.Runs, &results.Run{Config: c})
		}
		return []*results.Group{g}
	}
	for _, tc := range []struct {
		configs []string
		want    configs.Sampling
	}{
		{[]string{"omniglot_5way_1shot_maml"}, configs.Sampling{Formula: "C(Z_i, N) / sum_j C(Z_j, N)", Terms: "for an alphabet of Z_i characters and N ways", Order: "fewest characters Z_i first"}},
		{[]string{"miniimagenet_5way_1shot_maml"}, configs.Sampling{Formula: "C(Z_i, N) / sum_j C(Z_j, N)", Terms: "for a group of Z_i classes and N ways", Order: "fewest classes Z_i first"}},
		{[]string{"fc100_5way_1shot_trmaml"}, configs.Sampling{Formula: "C(Z_i, N) / sum_j C(Z_j, N)", Terms: "for a superclass of Z_i classes and N ways", Order: "fewest classes Z_i first"}},
		{[]string{"sine_k5_maml"}, configs.Sampling{Formula: "1 / n", Terms: "for n tasks, all equally likely"}},
		{[]string{"linreg_skewed_maml"}, configs.Sampling{Formula: "m_i / sum_j m_j", Terms: "for the masses m_i of task.linreg.tasks", Order: "least mass first"}},
		{[]string{"sine_k5_maml", "omniglot_5way_1shot_maml"}, configs.Config{}.Sampling()},
	} {
		if got := results.Sampling(group(tc.configs...)); got != tc.want {
			t.Errorf("%v: %+v, want %+v", tc.configs, got, tc.want)
		}
	}
}
