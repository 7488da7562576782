package run

import (
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"time"

	"github.com/trmaml/trmaml/metalearn"
	"github.com/trmaml/trmaml/results/display"
)

// Progress reports a training run: iterations per second, ETA, the current
// batch losses and the last evaluation. A nil *Progress reports nothing.
type Progress struct {
	// show receives the status line: at most every 200 ms while training,
	// after each evaluation (evaluation true) and when the run ends.
	show       func(line string, evaluation bool)
	name       string
	total      int
	start      time.Time
	lastDraw   time.Time
	iter       atomic.Int64
	mean, max  float64
	evaluated  bool
	testMean   float64
	testWorst  float64
	metric     metalearn.Metric // what testMean and testWorst measure
	startIter  int
	drawPeriod time.Duration
}

// NewProgress reports to w: on a terminal a bar redrawn in place, elsewhere
// (CI logs, files) one line per evaluation.
func NewProgress(w io.Writer, terminal bool) *Progress {
	if terminal {
		return NewProgressFunc(func(line string, _ bool) { fmt.Fprintf(w, "\r%s\033[K", line) })
	}
	return NewProgressFunc(func(line string, evaluation bool) {
		if evaluation {
			fmt.Fprintln(w, line)
		}
	})
}

// NewProgressFunc reports by calling show with the status line, for callers
// that lay out several runs at once.
func NewProgressFunc(show func(line string, evaluation bool)) *Progress {
	return &Progress{show: show, drawPeriod: 200 * time.Millisecond}
}

// Start begins (or resumes at iteration done) a run of total iterations.
func (p *Progress) Start(name string, done, total int) {
	if p == nil {
		return
	}
	p.name, p.total, p.start, p.startIter = name, total, time.Now(), done
	p.iter.Store(int64(done))
}

// Resumed is the iteration Start was given (where this process began the
// run) and whether Start was called at all: a finished run is not started.
func (p *Progress) Resumed() (done int, started bool) {
	if p == nil {
		return 0, false
	}
	return p.startIter, p.total > 0
}

// Iteration is the last finished iteration, safe to read from any goroutine.
func (p *Progress) Iteration() int {
	if p == nil {
		return 0
	}
	return int(p.iter.Load())
}

// Step records that iteration it finished with the given batch losses.
func (p *Progress) Step(it int, mean, max float64) {
	if p == nil {
		return
	}
	p.iter.Store(int64(it))
	p.mean, p.max = mean, max
	if time.Since(p.lastDraw) >= p.drawPeriod {
		p.lastDraw = time.Now()
		p.show(p.line(), false)
	}
}

// Evaluated records an evaluation's meta-test mean and worst task value in
// metric m.
func (p *Progress) Evaluated(testMean, testWorst float64, m metalearn.Metric) {
	if p == nil {
		return
	}
	p.evaluated, p.testMean, p.testWorst, p.metric = true, testMean, testWorst, m
	if p.total > 0 {
		p.show(p.line(), true)
	}
}

// Done ends the run's reporting with a final line.
func (p *Progress) Done() {
	if p != nil && p.total > 0 {
		p.show(p.line()+"\n", false)
	}
}

func (p *Progress) line() string {
	const width = 24
	it := p.Iteration()
	frac := float64(it) / float64(p.total)
	filled := int(frac * width)
	bar := strings.Repeat("=", filled) + strings.Repeat(" ", width-filled)
	rate, eta := 0.0, "?"
	if it > p.startIter {
		rate = float64(it-p.startIter) / time.Since(p.start).Seconds()
		eta = (time.Duration(float64(p.total-it)/rate) * time.Second).Round(time.Second).String()
	}
	// Below 10 it/s (the CNN) the rate keeps two digits.
	rateFmt := "%.0f"
	if rate < 10 {
		rateFmt = "%.2g"
	}
	s := fmt.Sprintf("%s [%s] %d/%d %3.0f%% "+rateFmt+" it/s ETA %s | batch loss %.3f (max %.3f)",
		p.name, bar, it, p.total, 100*frac, rate, eta, p.mean, p.max)
	switch {
	case p.evaluated && p.metric.HigherIsBetter:
		m := display.Of(p.metric)
		s += fmt.Sprintf(" | meta-test %s mean %.1f%s worst %.1f%s", m.Label, m.Show(p.testMean), m.Unit, m.Show(p.testWorst), m.Unit)
	case p.evaluated:
		s += fmt.Sprintf(" | meta-test mean %.3f worst %.3f", p.testMean, p.testWorst)
	}
	return s
}
