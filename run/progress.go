package run

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// Progress reports a training run: on a terminal a bar redrawn in place
// (iterations per second, ETA, the current batch losses and the last
// evaluation); elsewhere, such as CI logs, one line per evaluation. A nil
// *Progress reports nothing.
type Progress struct {
	w          io.Writer
	terminal   bool
	name       string
	total      int
	start      time.Time
	lastDraw   time.Time
	iter       int
	mean, max  float64
	evaluated  bool
	testMean   float64
	testWorst  float64
	drawPeriod time.Duration
}

// NewProgress reports to w, redrawing in place if terminal is true.
func NewProgress(w io.Writer, terminal bool) *Progress {
	return &Progress{w: w, terminal: terminal, drawPeriod: 200 * time.Millisecond}
}

// Start begins a run of total iterations.
func (p *Progress) Start(name string, total int) {
	if p == nil {
		return
	}
	p.name, p.total, p.start = name, total, time.Now()
}

// Step records that iteration it finished with the given batch losses.
func (p *Progress) Step(it int, mean, max float64) {
	if p == nil {
		return
	}
	p.iter, p.mean, p.max = it, mean, max
	if p.terminal && time.Since(p.lastDraw) >= p.drawPeriod {
		p.lastDraw = time.Now()
		fmt.Fprintf(p.w, "\r%s\033[K", p.line())
	}
}

// Evaluated records an evaluation's meta-test mean and worst task loss.
func (p *Progress) Evaluated(testMean, testWorst float64) {
	if p == nil {
		return
	}
	p.evaluated, p.testMean, p.testWorst = true, testMean, testWorst
	if !p.terminal && p.total > 0 {
		fmt.Fprintln(p.w, p.line())
	}
}

// Done ends the bar's line.
func (p *Progress) Done() {
	if p != nil && p.terminal && p.total > 0 {
		fmt.Fprintf(p.w, "\r%s\033[K\n", p.line())
	}
}

func (p *Progress) line() string {
	const width = 24
	frac := float64(p.iter) / float64(p.total)
	filled := int(frac * width)
	bar := strings.Repeat("=", filled) + strings.Repeat(" ", width-filled)
	elapsed := time.Since(p.start)
	rate, eta := 0.0, "?"
	if p.iter > 0 {
		rate = float64(p.iter) / elapsed.Seconds()
		eta = (time.Duration(float64(p.total-p.iter)/rate) * time.Second).Round(time.Second).String()
	}
	s := fmt.Sprintf("%s [%s] %d/%d %3.0f%% %.0f it/s ETA %s | batch loss %.3f (max %.3f)",
		p.name, bar, p.iter, p.total, 100*frac, rate, eta, p.mean, p.max)
	if p.evaluated {
		s += fmt.Sprintf(" | meta-test mean %.3f worst %.3f", p.testMean, p.testWorst)
	}
	return s
}
