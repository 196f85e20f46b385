package replay

import (
	"errors"
	"fmt"
	"time"
)

// Pacing says how the host paces a timeline's launches, as a recorded
// host schedule did, in the order Invocations gives. With At, launch k
// goes no earlier than At[k] after the pass's start or after the return
// of the last synchronize before it (the recorded time of its call since
// the host's last wait), so that a launch path slower or faster than the
// recorded one does not add up over the pass; with Sync[k] the host
// synchronizes the stream after launch k, no earlier than WaitAt[k] after
// that same point (where the host entered its wait). Without At, the host
// spins for Gap[k] after the previous launch's call returned, then
// launches k. Launches past the slices' ends go at once, without a sync.
type Pacing struct {
	At     []time.Duration
	WaitAt []time.Duration
	Gap    []time.Duration
	Sync   []bool
}

// PacedResult is a timeline launched from the host at a pacing: each pass
// launches every invocation once, directly (no graph), spinning before
// each and synchronizing where the pacing says, then synchronizes.
type PacedResult struct {
	// Passes is how many passes were timed; Wall their host time, from
	// the first spin to the last synchronize's return.
	Passes int    `json:"passes"`
	Wall   Spread `json:"wall"`
	// Energy is one pass's, from a window of whole counter ticks over
	// passes back to back (with Options.Energy); EnergyErr why not.
	Energy    *Energy `json:"energy,omitempty"`
	EnergyErr string  `json:"energy_error,omitempty"`
}

// pacedPasses bounds the timed passes of MeasurePaced.
const (
	pacedMinPasses = 5
	pacedMaxPasses = 200
)

// Invocations returns, for each launch of the timeline in order, its
// invocation's index in the set's Timeline (a substitute's: its run's
// first; -1 for a launch TimelineOptions.Again added).
func (t *Timeline) Invocations() []int { return append([]int(nil), t.orderInv...) }

// MeasurePaced launches the timeline from the host at pacing p: a warm-up
// pass, then passes until o.Budget is spent (at least 5, at most 200),
// each timed on the host; then, with o.Energy, one pass's energy over a
// window of whole counter ticks of passes back to back. The independent
// check of the whole-inference model: the host's gaps are spent for
// real, the kernels run as replayed.
func (t *Timeline) MeasurePaced(p Pacing, o Options) (*PacedResult, error) {
	if t.graph == nil {
		return nil, errors.New("paced timeline: closed")
	}
	o.defaults()
	r := &PacedResult{}
	err := t.dev.Do(func() error {
		if _, err := t.pass(p); err != nil {
			return err
		}
		var walls []float64
		end := time.Now().Add(o.Budget)
		for len(walls) < pacedMinPasses || (time.Now().Before(end) && len(walls) < pacedMaxPasses) {
			w, err := t.pass(p)
			if err != nil {
				return err
			}
			walls = append(walls, float64(w.Nanoseconds()))
		}
		r.Passes, r.Wall = len(walls), spreadOf(walls)
		if !o.Energy {
			return nil
		}
		if t.dev.Meter == nil {
			r.EnergyErr = fmt.Sprintf("%v: %v", ErrNoMeter, t.dev.NVMLErr)
			return nil
		}
		rd, err := t.dev.energyWindow(func() error { _, err := t.pass(p); return err }, o)
		if err != nil {
			r.EnergyErr = err.Error()
			return nil
		}
		e := energyOf(rd, 1)
		r.Energy = &e
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("paced timeline: %w", err)
	}
	return r, nil
}

// pass launches the timeline once at pacing p and returns its host time.
// Call inside Do.
func (t *Timeline) pass(p Pacing) (time.Duration, error) {
	s := t.dev.stream
	start := time.Now()
	base := start // the pass's start, then the last synchronize's return
	for k, q := range t.order {
		switch {
		case k < len(p.At):
			spinUntil(base.Add(p.At[k]))
		case k < len(p.Gap):
			spin(p.Gap[k])
		}
		if err := q.Kernel.Launch(s, 0); err != nil {
			return 0, sigErr(q.Sig, "paced launch", err)
		}
		if k < len(p.Sync) && p.Sync[k] {
			if k < len(p.WaitAt) {
				spinUntil(base.Add(p.WaitAt[k]))
			}
			if err := s.Synchronize(); err != nil {
				return 0, err
			}
			base = time.Now()
		}
	}
	if err := s.Synchronize(); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}

// spinUntil spins until t.
func spinUntil(t time.Time) {
	for time.Now().Before(t) {
	}
}
