package experiment

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/trmaml/trmaml/run"
)

// board lays out one status line per active run and an overall line.
type board struct {
	mu       sync.Mutex
	w        io.Writer
	terminal bool
	jobs     []Job
	lines    []string
	progs    []*run.Progress
	state    []string // "", "running", "done", "interrupted" or "failed"
	drawn    int
	started  time.Time
}

func newBoard(w io.Writer, terminal bool, jobs []Job) *board {
	return &board{w: w, terminal: terminal, jobs: jobs, lines: make([]string, len(jobs)),
		progs: make([]*run.Progress, len(jobs)), state: make([]string, len(jobs))}
}

func (b *board) progress(i int) *run.Progress {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.state[i] = "running"
	p := run.NewProgressFunc(func(line string, evaluation bool) {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.lines[i] = strings.TrimSpace(line)
		if evaluation && !b.terminal {
			fmt.Fprintln(b.w, b.lines[i])
		}
	})
	b.progs[i] = p
	return p
}

func (b *board) finish(i int, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case errors.Is(err, run.ErrInterrupted):
		b.state[i] = "interrupted"
		b.lines[i] = fmt.Sprintf("%s: %v", b.jobs[i].Dir, err)
	case err != nil:
		b.state[i] = "failed"
		b.lines[i] = fmt.Sprintf("%s: FAILED: %v", b.jobs[i].Dir, err)
	default:
		b.state[i] = "done"
	}
	if !b.terminal {
		fmt.Fprintf(b.w, "%s: %s\n%s\n", b.jobs[i].Dir, b.state[i], b.overallLocked())
	}
}

// start redraws the board every half second on a terminal until stopped.
func (b *board) start() (stop func()) {
	b.started = time.Now()
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				b.draw()
				return
			case <-t.C:
				b.draw()
			}
		}
	}()
	return func() { close(done); <-finished }
}

// overallLocked is the experiment's status line; b.mu must be held. Its ETA
// comes from the iterations this process ran, so runs finished or
// checkpointed by an earlier call do not make a resumed grid look fast.
func (b *board) overallLocked() string {
	total, doneIters, here := 0, 0, 0
	for i, j := range b.jobs {
		total += j.Config.Meta.Iterations
		reached := 0
		switch b.state[i] {
		case "done", "failed":
			reached = j.Config.Meta.Iterations
		case "running", "interrupted":
			reached = b.progs[i].Iteration()
		}
		doneIters += reached
		if from, started := b.progs[i].Resumed(); started {
			here += reached - from
		}
	}
	elapsed := time.Since(b.started)
	eta := "?"
	if here > 0 {
		eta = (time.Duration(float64(total-doneIters)/float64(here)*elapsed.Seconds()) * time.Second).Round(time.Second).String()
	}
	return fmt.Sprintf("experiment: %d/%d iterations over %d runs, elapsed %s, ETA %s",
		doneIters, total, len(b.jobs), elapsed.Round(time.Second), eta)
}

func (b *board) draw() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.terminal {
		return
	}
	var active []string
	for i := range b.jobs {
		if b.state[i] == "running" && b.lines[i] != "" {
			active = append(active, b.lines[i])
		}
	}
	overall := b.overallLocked()
	if b.drawn > 0 {
		fmt.Fprintf(b.w, "\033[%dA", b.drawn)
	}
	for _, l := range append(active, overall) {
		fmt.Fprintf(b.w, "\r%s\033[K\n", l)
	}
	fmt.Fprint(b.w, "\033[J")
	b.drawn = len(active) + 1
}
