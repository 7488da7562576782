package run

import (
	"sync"
	"time"

	"github.com/trmaml/trmaml/internal/cputime"
	"github.com/trmaml/trmaml/rundir"
)

// share is the process-wide clock by which runs in one process split its
// processor time: over every interval between two events (a run starting
// or stopping, a lap), each of the n runs active during it is charged 1/n
// of the process's CPU time. clock sums those shares, so a run's time
// between two of its laps is the clock's difference.
var share struct {
	sync.Mutex
	active int           // runs started and not stopped
	last   time.Duration // the process's CPU time at the last event
	clock  time.Duration // one run's share of the process's time so far
	shared int           // intervals that had more than one active run
	failed bool          // the platform cannot measure processor time
}

// advanceLocked charges the interval since the last event to the active
// runs; share is locked.
func advanceLocked() {
	now, ok := cputime.Process()
	if !ok {
		share.failed = true
		return
	}
	if share.active > 0 {
		share.clock += (now - share.last) / time.Duration(share.active)
		if share.active > 1 {
			share.shared++
		}
	}
	share.last = now
}

// cpuMeter measures a run's share of the process's processor time in laps
// (several runs train in one process under trmaml experiment -jobs).
type cpuMeter struct {
	clock  time.Duration // share.clock at the last lap
	shared int           // share.shared at the last lap
	total  rundir.CPUTime
	// known is false when the platform cannot measure the time, or the
	// checkpoint the run resumed from did not have it.
	known bool
}

// newCPUMeter starts a meter at the totals prev (nil: unknown, unless
// fresh, a run with no earlier time) and counts the run as active until
// stop.
func newCPUMeter(prev *rundir.CPUTime, fresh bool) *cpuMeter {
	m := &cpuMeter{known: prev != nil || fresh}
	if prev != nil {
		m.total = *prev
	}
	share.Lock()
	defer share.Unlock()
	advanceLocked()
	share.active++
	m.clock, m.shared = share.clock, share.shared
	return m
}

// lap returns the run's share of the processor time since the last lap.
func (m *cpuMeter) lap() float64 {
	share.Lock()
	defer share.Unlock()
	advanceLocked()
	if share.failed {
		m.known = false
	}
	d := share.clock - m.clock
	if share.shared != m.shared {
		m.total.Shared = true
	}
	m.clock, m.shared = share.clock, share.shared
	return d.Seconds()
}

// train and eval add a lap to the training and the evaluation time; skip
// drops one (bookkeeping such as writing checkpoints).
func (m *cpuMeter) train() { m.total.TrainSeconds += m.lap() }
func (m *cpuMeter) eval()  { m.total.EvalSeconds += m.lap() }
func (m *cpuMeter) skip()  { m.lap() }

// stop ends the run's activity in the process.
func (m *cpuMeter) stop() {
	share.Lock()
	defer share.Unlock()
	advanceLocked()
	share.active--
}

// times returns the totals, nil when unknown.
func (m *cpuMeter) times() *rundir.CPUTime {
	if !m.known {
		return nil
	}
	t := m.total
	return &t
}
