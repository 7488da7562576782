package run

import (
	"sync/atomic"
	"time"

	"github.com/trmaml/trmaml/rundir"
)

// activeRuns counts the runs training or evaluating in this process, among
// which cpuMeter splits the process's processor time.
var activeRuns atomic.Int32

// cpuMeter measures a run's share of the process's processor time in laps:
// each lap is the time since the previous one, divided by the number of
// runs active at its end (one, unless trmaml experiment -jobs runs several
// in this process).
type cpuMeter struct {
	last  time.Duration // the process's CPU time at the last lap
	total rundir.CPUTime
	// known is false when the run's earlier time is not known (a checkpoint
	// from before CPU times) or the platform cannot measure it.
	known bool
}

// newCPUMeter starts a meter at the totals prev (nil: unknown, unless
// fresh, a run with no earlier time) and counts the run as active until
// stop.
func newCPUMeter(prev *rundir.CPUTime, fresh bool) *cpuMeter {
	activeRuns.Add(1)
	m := &cpuMeter{known: prev != nil || fresh}
	if prev != nil {
		m.total = *prev
	}
	if m.known {
		m.last, m.known = processCPU()
	}
	return m
}

// lap returns the run's share of the processor time since the last lap.
func (m *cpuMeter) lap() float64 {
	if !m.known {
		return 0
	}
	now, ok := processCPU()
	if !ok {
		m.known = false
		return 0
	}
	d := now - m.last
	m.last = now
	if n := activeRuns.Load(); n > 1 {
		m.total.Shared = true
		d /= time.Duration(n)
	}
	return d.Seconds()
}

// train and eval add a lap to the training and the evaluation time; skip
// drops one (bookkeeping such as writing checkpoints).
func (m *cpuMeter) train() { m.total.TrainSeconds += m.lap() }
func (m *cpuMeter) eval()  { m.total.EvalSeconds += m.lap() }
func (m *cpuMeter) skip()  { m.lap() }

// stop ends the run's activity in the process.
func (m *cpuMeter) stop() { activeRuns.Add(-1) }

// times returns the totals, nil when unknown.
func (m *cpuMeter) times() *rundir.CPUTime {
	if !m.known {
		return nil
	}
	t := m.total
	return &t
}
