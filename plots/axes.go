package plots

import (
	"strings"

	"github.com/trmaml/trmaml/results/display"
	"gonum.org/v1/plot"
)

const iterationLabel = "meta-training iteration"

// worstOver names the worst of a set of values in metric m: the maximum
// loss, the minimum score.
func worstOver(m display.Score) string {
	if m.HigherIsBetter {
		return "minimum"
	}
	return "maximum"
}

// valueAxis sets p's y range for values of metric m: from 0 with headroom
// for a loss; for a score (accuracy in %), from the data's range to at most
// its ceiling (m.Show(1)), so that the differences near the top stay
// visible, with percent ticks.
func valueAxis(p *plot.Plot, m display.Score) {
	p.Y.Tick.Marker = valueTicks(m)
	if !m.HigherIsBetter {
		fromZero(p)
		return
	}
	top := m.Show(1)
	pad := 0.05 * (p.Y.Max - p.Y.Min)
	p.Y.Min, p.Y.Max = max(p.Y.Min-pad, 0), min(p.Y.Max+pad, top)
}

// valueTicks are the ticks of an axis of m's values: percentages for
// accuracy, plain numbers for a loss.
func valueTicks(m display.Score) plot.Ticker {
	if m.Unit == "%" {
		return percentTicks{}
	}
	return denseTicks{}
}

// valueLabel labels an axis of m's values of noun ("task MSE", "alphabet
// accuracy"): without the unit where the ticks carry it.
func valueLabel(m display.Score, noun string) string {
	return strings.TrimSuffix(m.Axis(noun), " ("+m.Unit+")")
}

// valueRange is the range m's displayed values can take, which confidence
// bands are cut to: [0, 100] for accuracy in percent, [0, +Inf) for a loss.
func valueRange(m display.Score) (lo, hi float64) {
	return 0, m.Show(m.Max())
}
