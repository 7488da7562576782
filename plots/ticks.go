package plots

import (
	"math"
	"strconv"

	"gonum.org/v1/plot"
)

// niceStep is the round step (1, 2, 2.5 or 5 times a power of ten; no
// 2.5 when integer) that splits [min, max] into at most n intervals.
func niceStep(min, max float64, n int, integer bool) float64 {
	span := max - min
	if !(span > 0) {
		return 1
	}
	step := math.Pow(10, math.Floor(math.Log10(span/float64(n))))
	for _, f := range []float64{1, 2, 2.5, 5, 10} {
		if (integer && f == 2.5) || span/(step*f) > float64(n) {
			continue
		}
		step *= f
		break
	}
	if integer {
		step = math.Max(1, math.Round(step))
	}
	return step
}

// stepTicks labels every multiple of step in [min, max] with label, and
// marks the midpoints between them unlabelled.
func stepTicks(min, max, step float64, label func(float64) string) []plot.Tick {
	var ts []plot.Tick
	for k := math.Ceil(min/step - 1e-9); k*step <= max+step*1e-9; k++ {
		v := k*step + 0 // + 0 turns -0 into 0
		ts = append(ts, plot.Tick{Value: v, Label: label(v)})
		if mid := v + step/2; mid <= max {
			ts = append(ts, plot.Tick{Value: mid})
		}
	}
	return ts
}

// iterationTicks labels an iteration axis with whole numbers, in
// thousands ("20k", but "0") once it reaches 10,000 so that the labels
// stay short.
type iterationTicks struct{}

// Ticks implements plot.Ticker.
func (iterationTicks) Ticks(min, max float64) []plot.Tick {
	step := niceStep(min, max, 4, true)
	return stepTicks(min, max, step, func(v float64) string {
		if max >= 10000 && v != 0 {
			return tickLabel(v/1000) + "k"
		}
		return tickLabel(v)
	})
}

// countTicks labels a count axis (tasks in a histogram bin) with whole
// numbers only.
type countTicks struct{}

// Ticks implements plot.Ticker.
func (countTicks) Ticks(min, max float64) []plot.Tick {
	return stepTicks(min, max, niceStep(min, max, 5, true), tickLabel)
}

// percentTicks labels an axis of percentages ("90%") at round steps.
type percentTicks struct{}

// Ticks implements plot.Ticker.
func (percentTicks) Ticks(min, max float64) []plot.Tick {
	// Whole percentages unless the axis spans less than 5 points.
	return stepTicks(min, max, niceStep(min, max, 6, max-min >= 5), func(v float64) string { return tickLabel(v) + "%" })
}

// tickLabel writes a tick's value in the shortest form ("75", not
// "75.00"), rounded to 12 significant digits first: gonum computes ticks
// as multiples of a step, so 3 * 0.1 would otherwise be written
// 0.30000000000000004.
func tickLabel(v float64) string {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 12, 64), 64)
	return strconv.FormatFloat(r, 'g', -1, 64)
}

// denseTicks label every multiple of a round step (1, 2, 2.5 or 5 times
// a power of ten) that splits the axis into at most six intervals: gonum's
// default labels only its major ticks, which on a short range such as 0
// to 2.8 leaves two labels ("0", "2.5"), and picks steps such as 0.45.
type denseTicks struct{}

// Ticks implements plot.Ticker.
func (denseTicks) Ticks(min, max float64) []plot.Tick {
	return stepTicks(min, max, niceStep(min, max, 6, false), tickLabel)
}
