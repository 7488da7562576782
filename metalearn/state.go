package metalearn

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// State is everything a run needs to continue exactly where it stopped: the
// iterates, the optimizer's moments, the output-rule accumulators and the
// random generator. It is what a checkpoint stores.
type State struct {
	Iteration int
	W, P      []float64
	// SumW and SumP accumulate the iterates for OutputAveraged.
	SumW, SumP []float64
	// Tau is the iterate kept by OutputRandom, and WTau, PTau its value.
	Tau        int
	WTau, PTau []float64
	// RNG is the binary state of the PCG generator that drives sampling.
	RNG []byte
}

// ErrNonFinite reports a NaN or infinite loss or gradient; training stops
// before the bad values reach the parameters.
var ErrNonFinite = errors.New("metalearn: non-finite loss or meta-gradient")

// ErrNonFiniteState reports an update that left w, p or the optimizer's
// state non-finite (a huge learning rate, say): training stops, as on a
// non-finite loss, before the state is saved.
var ErrNonFiniteState = errors.New("metalearn: non-finite state after the update")

// checkStep checks the updated iterates and optimizer state.
func (t *Trainer) checkStep() error {
	st := &t.State
	if i := nonFinite(st.W); i >= 0 {
		return fmt.Errorf("w[%d] = %v", i, st.W[i])
	}
	if i := nonFinite(st.P); i >= 0 {
		return fmt.Errorf("p[%d] = %v", i, st.P[i])
	}
	if err := t.Settings.Optimizer.Check(len(st.W), st.Iteration); err != nil {
		return fmt.Errorf("optimizer %v", err)
	}
	return nil
}

// Restore replaces the trainer's state with a saved one (from a checkpoint),
// refusing a state that does not fit the trainer's settings, or the
// trainer's optimizer (restored beforehand), with an error naming the field
// ("state.P", "optimizer.T").
func (t *Trainer) Restore(st State) error {
	if err := t.checkState(st); err != nil {
		return err
	}
	if err := t.Settings.Optimizer.Check(len(st.W), st.Iteration); err != nil {
		return fmt.Errorf("optimizer.%w", err)
	}
	if err := t.pcg.UnmarshalBinary(st.RNG); err != nil {
		return fmt.Errorf("state.RNG: %w", err)
	}
	t.State = st
	return nil
}

// checkState refuses a state that does not fit the trainer: sizes, the
// iteration, finite values, p on the simplex, the output rule's fields.
func (t *Trainer) checkState(st State) error {
	nw, np := t.Objective.NumParams(), t.Train.Len()
	fits := func(s []float64, n int) bool { return s == nil || len(s) == n }
	switch {
	case len(st.W) != nw:
		return fmt.Errorf("state.W: %d parameters, the run's model has %d", len(st.W), nw)
	case len(st.P) != np:
		return fmt.Errorf("state.P: %d task weights, the run has %d meta-training tasks", len(st.P), np)
	case st.Iteration < 0 || st.Iteration > t.Settings.Iterations:
		return fmt.Errorf("state.Iteration = %d: must be in [0, %d], the run's iterations", st.Iteration, t.Settings.Iterations)
	case t.Settings.Output == OutputAveraged && (len(st.SumW) != nw || len(st.SumP) != np):
		return fmt.Errorf("state.SumW, state.SumP: missing or of the wrong size for output rule T1 (was the checkpoint saved with another rule?)")
	case t.Settings.Output == OutputRandom && (st.Tau < 1 || st.Tau > t.Settings.Iterations):
		return fmt.Errorf("state.Tau = %d: no valid T2 iterate index (was the checkpoint saved with another rule?)", st.Tau)
	case !fits(st.WTau, nw) || !fits(st.PTau, np):
		return fmt.Errorf("state.WTau, state.PTau: the T2 iterate has the wrong size")
	}
	for _, f := range []struct {
		name string
		v    []float64
	}{{"W", st.W}, {"P", st.P}, {"SumW", st.SumW}, {"SumP", st.SumP}, {"WTau", st.WTau}, {"PTau", st.PTau}} {
		if i := nonFinite(f.v); i >= 0 {
			return fmt.Errorf("state.%s[%d] = %v: must be finite", f.name, i, f.v[i])
		}
	}
	return t.checkFeasible(st)
}

// checkFeasible refuses a state whose p, averaged p (T1) or kept p (T2)
// lies outside the Method's feasible set.
func (t *Trainer) checkFeasible(st State) error {
	m := t.Settings.Method
	if err := m.Check("state.P", st.P); err != nil {
		return err
	}
	if t.Settings.Output == OutputAveraged {
		if st.Iteration == 0 {
			if i := slices.IndexFunc(st.SumP, func(v float64) bool { return v != 0 }); i >= 0 {
				return fmt.Errorf("state.SumP[%d] = %v at iteration 0: no iterate has been added yet, want 0", i, st.SumP[i])
			}
		} else {
			mean := clone(st.SumP)
			for i := range mean {
				mean[i] /= float64(st.Iteration)
			}
			if err := m.Check("(state.SumP / state.Iteration)", mean); err != nil {
				return err
			}
		}
	}
	if st.PTau != nil {
		return m.Check("state.PTau", st.PTau)
	}
	return nil
}

// nonFinite returns the index of the first NaN or infinite entry, or -1.
func nonFinite(v []float64) int {
	for i, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return i
		}
	}
	return -1
}

// Snapshot returns a deep copy of the state, with the generator's state, for
// a checkpoint.
func (t *Trainer) Snapshot() (State, error) {
	st := t.State
	st.W = clone(st.W)
	st.P = clone(st.P)
	st.SumW, st.SumP = clone(st.SumW), clone(st.SumP)
	st.WTau, st.PTau = clone(st.WTau), clone(st.PTau)
	rng, err := t.pcg.MarshalBinary()
	if err != nil {
		return State{}, err
	}
	st.RNG = rng
	return st, nil
}

func clone(s []float64) []float64 {
	if s == nil {
		return nil
	}
	return append([]float64(nil), s...)
}
