package schedule

import (
	"fmt"
	"sync"
)

// SimulateGroup simulates the ranks of a tensor-parallel group together:
// rank r's schedule ss[r] with its ops ops[r] and the constants of its
// GPU cs[r], as Simulate simulates one, except that the k-th collective op
// (Op.Collective) of every rank starts only once every rank's stream has
// reached its k-th: an NCCL kernel makes no progress before its peers
// launch theirs, so each rank's collective ends at the latest rank's
// arrival plus its own time. The time a rank's collective waited is its
// Result.PeerWaitNS. The ranks start together, at time 0 of one clock (the
// capture starts their runs behind a barrier). Ranks whose schedules launch
// different numbers of collectives are an error.
func SimulateGroup(ss []*Schedule, ops [][][]Op, cs []Constants) ([]Result, error) {
	if len(ss) == 0 || len(ops) != len(ss) || len(cs) != len(ss) {
		return nil, fmt.Errorf("simulate group: %d schedules, %d op lists, %d constants", len(ss), len(ops), len(cs))
	}
	for r := range ss {
		if err := checkInput(ss[r], ops[r], cs[r]); err != nil {
			return nil, fmt.Errorf("simulate group: rank %d: %w", r, err)
		}
	}
	rv := newRendezvous(len(ss))
	sims := make([]*sim, len(ss))
	var wg sync.WaitGroup
	for r := range ss {
		m := newSim(ss[r], cs[r])
		m.peers = rv.arrive
		sims[r] = m
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer rv.finish()
			for i := range m.s.Inferences {
				m.inference(i, ops[r][i])
			}
		}()
	}
	wg.Wait()
	out := make([]Result, len(ss))
	for r, m := range sims {
		if m.err != nil {
			return nil, fmt.Errorf("simulate group: rank %d: %w", r, m.err)
		}
		if m.colls != sims[0].colls {
			return nil, fmt.Errorf("simulate group: rank %d launches %d collectives, rank 0 %d", r, m.colls, sims[0].colls)
		}
		out[r] = m.result()
	}
	return out, nil
}

// rendezvous gathers the ranks' arrivals at each collective.
type rendezvous struct {
	mu      sync.Mutex
	cond    *sync.Cond
	ranks   int
	arrived map[int]int   // k: ranks arrived at collective k
	latest  map[int]int64 // k: the latest arrival at it
	done    int           // ranks that finished their schedule
	broken  bool          // a rank waited for one that finished
}

func newRendezvous(ranks int) *rendezvous {
	v := &rendezvous{ranks: ranks, arrived: map[int]int{}, latest: map[int]int64{}}
	v.cond = sync.NewCond(&v.mu)
	return v
}

// arrive records a rank's arrival at its k-th collective at t and waits
// for every rank's: it returns the latest arrival, or false where a rank
// finished its schedule without reaching collective k.
func (v *rendezvous) arrive(k int, t int64) (int64, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.arrived[k]++
	v.latest[k] = max(v.latest[k], t)
	v.cond.Broadcast()
	for v.arrived[k] < v.ranks && !v.broken && v.done == 0 {
		v.cond.Wait()
	}
	if v.arrived[k] < v.ranks {
		v.broken = true
		v.cond.Broadcast()
		return 0, false
	}
	return v.latest[k], true
}

// finish records a rank's end of schedule.
func (v *rendezvous) finish() {
	v.mu.Lock()
	v.done++
	v.cond.Broadcast()
	v.mu.Unlock()
}
