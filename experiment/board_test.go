package experiment

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/trmaml/trmaml/configs"
)

// TestBoardETA checks that the overall ETA is extrapolated from the
// iterations this process ran: runs finished or checkpointed by an earlier
// call count as done but not as speed.
func TestBoardETA(t *testing.T) {
	t.Parallel()
	type cell struct {
		state         string
		from, reached int // Start's iteration (-1: never started) and the last one
	}
	tests := []struct {
		name  string
		cells []cell
		want  string // the status line's tail after "elapsed 1m40s"
	}{
		{"fresh grid, half done", []cell{{"running", 0, 50}, {"", -1, 0}}, "50/200 iterations over 2 runs, elapsed 1m40s, ETA 5m0s"},
		{"one finished earlier", []cell{{"done", -1, 0}, {"running", 0, 50}}, "150/200 iterations over 2 runs, elapsed 1m40s, ETA 1m40s"},
		{"resumed at 60", []cell{{"running", 60, 80}, {"running", 60, 80}}, "160/200 iterations over 2 runs, elapsed 1m40s, ETA 1m40s"},
		{"resumed, finished here", []cell{{"done", 90, 100}, {"interrupted", 0, 10}}, "110/200 iterations over 2 runs, elapsed 1m40s, ETA 7m30s"},
		{"nothing run yet", []cell{{"done", -1, 0}, {"running", 40, 40}}, "140/200 iterations over 2 runs, elapsed 1m40s, ETA ?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			jobs := make([]Job, len(tt.cells))
			for i := range jobs {
				var c configs.Config
				c.Meta.Iterations = 100
				jobs[i] = Job{Config: c}
			}
			b := newBoard(io.Discard, false, jobs)
			for i, c := range tt.cells {
				if c.from >= 0 {
					p := b.progress(i)
					p.Start("run", c.from, 100)
					if c.reached > c.from {
						p.Step(c.reached, 0, 0)
					}
				}
				b.state[i] = c.state
			}
			b.started = time.Now().Add(-100 * time.Second)
			got := b.overallLocked()
			if !strings.HasPrefix(got, "experiment: ") || !strings.Contains(got, tt.want) {
				t.Errorf("got %q, want it to end in %q", got, tt.want)
			}
		})
	}
}
