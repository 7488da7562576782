package theory

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Report is Theorem 1 measured on the default family (DefaultFamily) at
// DefaultRadius: the certified saddle point, the theorem's constants for
// the batch and the duality gap of Algorithm 1 against T in both
// geometries, over seeds 1..Seeds.
type Report struct {
	Family    *LinReg
	Radius    float64
	Batch     int
	PerDecade int
	Seeds     int
	Saddle    Saddle
	Constants Constants
	Curves    []Curve // Euclidean, then Entropic
}

// Study measures the Report for the values Ts of T (LogGrid, perDecade
// of them per decade), seeds 1..seeds per T and batch tasks per iteration.
func Study(Ts []int, perDecade, seeds, batch int) (Report, error) {
	f := DefaultFamily()
	r := Report{Family: f, Radius: DefaultRadius, Batch: batch, PerDecade: perDecade, Seeds: seeds}
	var err error
	if r.Saddle, err = f.Saddle(r.Radius); err != nil {
		return Report{}, err
	}
	r.Constants = f.TheoremConstants(r.Radius, batch)
	ids := make([]uint64, seeds)
	for i := range ids {
		ids[i] = uint64(i + 1)
	}
	for _, g := range []Geometry{Euclidean, Entropic} {
		cv, err := f.Measure(g, r.Radius, batch, Ts, ids)
		if err != nil {
			return Report{}, err
		}
		r.Curves = append(r.Curves, cv)
	}
	return r, nil
}

// Markdown is the report as theorem1_gap.md: the saddle point, the
// constants and a table of the fitted slopes and the gap at the largest T;
// elapsed is the study's wall-clock time.
func (r Report) Markdown(elapsed time.Duration) string {
	var md strings.Builder
	s, c := r.Saddle, r.Constants
	fmt.Fprintf(&md, "Saddle point (dual ascent + KKT Newton): w* = %.12g, p* = %.12g, min-max value %.15g; "+
		"certified duality gap %.2g, complementary slackness %.2g.\n\n", s.W, s.P, s.Value, s.Gap, s.Slackness)
	fmt.Fprintf(&md, "Theorem 1's constants on the ball of radius R = %g with C = %d: B = %.4g, L = %.4g, H = 0, G_p = %.4g; "+
		"eta_w = %.4g / sqrt(T), eta_p = %.4g / sqrt(T) (entropic: %.4g / sqrt(T)).\n\n",
		r.Radius, r.Batch, c.B, c.L, c.Gp, c.StepW(r.Family.Alpha, 1), c.StepP(1), c.StepPEntropic(1))
	md.WriteString("| ascent on p | fitted slope (all T) | local slope over the last decade | mean gap at largest T |\n|---|---:|---:|---:|\n")
	for _, cv := range r.Curves {
		last := len(cv.T) - 1
		decade := max(0, last-r.PerDecade)
		lastSlope := 0.0
		if last > decade {
			lastSlope = math.Log(cv.Mean[last]/cv.Mean[decade]) / math.Log(float64(cv.T[last])/float64(cv.T[decade]))
		}
		fmt.Fprintf(&md, "| %s | %.3f | %.3f | %.3g ± %.2g |\n", cv.Geometry, cv.Slope, lastSlope, cv.Mean[last], cv.Half[last])
	}
	fmt.Fprintf(&md, "\n%d seeds per T, T = %v; %s wall clock.\n", r.Seeds, r.Curves[0].T, elapsed.Round(time.Second))
	return md.String()
}

// CSV is the report as theorem1_gap.csv: one row per geometry and T, with
// the mean gap, its confidence half-width, the theorem's bound and every
// seed's gap.
func (r Report) CSV() string {
	var csv strings.Builder
	csv.WriteString("geometry,T,mean_gap,ci95_half,theorem_bound,gaps\n")
	for _, cv := range r.Curves {
		for k, T := range cv.T {
			gaps := make([]string, len(cv.Gaps[k]))
			for i, x := range cv.Gaps[k] {
				gaps[i] = strconv.FormatFloat(x, 'g', 8, 64)
			}
			fmt.Fprintf(&csv, "%s,%d,%g,%g,%g,%s\n", cv.Geometry, T, cv.Mean[k], cv.Half[k], r.Constants.Bound(r.Family.Alpha, T), strings.Join(gaps, ";"))
		}
	}
	return csv.String()
}
