package results

import (
	"math"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// Estimate is a mean over seeds with the half-width of its 95% confidence
// interval: Mean ± Half.
type Estimate struct {
	// Mean is the mean over the values (seeds).
	Mean float64
	// Half is TCritical95(N) times the standard error; 0 for one seed.
	Half float64
	// N is the number of seeds (values) the estimate is over.
	N int
}

// TCritical95 is the two-sided 95% Student t critical value for the mean of
// n samples, the 0.975 quantile with n-1 degrees of freedom (4.3027 for
// n = 3); 0 when n < 2, where no interval can be estimated.
func TCritical95(n int) float64 {
	if n < 2 {
		return 0
	}
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}.Quantile(0.975)
}

// Summarize returns the mean of the non-NaN values in xs and the half-width
// of its 95% Student t interval, TCritical95(n) * s / sqrt(n) with s the
// sample (n-1) standard deviation. With no values the mean is NaN.
func Summarize(xs []float64) Estimate {
	vals := make([]float64, 0, len(xs))
	for _, x := range xs {
		if !math.IsNaN(x) {
			vals = append(vals, x)
		}
	}
	n := len(vals)
	switch n {
	case 0:
		return Estimate{Mean: math.NaN()}
	case 1:
		return Estimate{Mean: vals[0], N: 1}
	}
	mean, std := stat.MeanStdDev(vals, nil)
	return Estimate{Mean: mean, Half: TCritical95(n) * std / math.Sqrt(float64(n)), N: n}
}
