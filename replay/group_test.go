package replay

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kreplay/kreplay/captured"
	"github.com/kreplay/kreplay/internal/launch"
	"github.com/kreplay/kreplay/signatures"
)

// A single Device refuses a collective with ErrNotImplemented and points
// to Group.
func TestDevicePrepareCollectivePointsToGroup(t *testing.T) {
	sig := &signatures.Signature{ID: "c", Class: signatures.ClassCollective, Tier: signatures.TierLibrary,
		Collective: &signatures.Collective{Op: "allreduce", Nelems: 8, DType: "f16", Ranks: 2}}
	_, _, err := (&Device{}).build(sig, launch.Options{}, captured.Options{})
	if !errors.Is(err, ErrNotImplemented) {
		t.Fatalf("err = %v, want ErrNotImplemented", err)
	}
	for _, want := range []string{"OpenGroup", "MeasureCollective"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}
}

func TestBarrier(t *testing.T) {
	for _, failing := range []int{-1, 0, 3} {
		const n = 5
		b := newBarrier(n)
		got := make([]bool, n)
		var wg sync.WaitGroup
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				time.Sleep(time.Duration(i) * time.Millisecond)
				got[i] = b.arrive(i != failing)
			}()
		}
		wg.Wait()
		for i, ok := range got {
			if ok != (failing < 0) {
				t.Errorf("failing rank %d: rank %d released with %v", failing, i, ok)
			}
		}
	}
}

// No rank passes the barrier before the last one arrives.
func TestBarrierHoldsUntilAll(t *testing.T) {
	const n = 4
	b := newBarrier(n)
	var arrived, early atomic.Int32
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Duration(i) * 2 * time.Millisecond)
			arrived.Add(1)
			b.arrive(true)
			if arrived.Load() != n {
				early.Add(1)
			}
		}()
	}
	wg.Wait()
	if early.Load() != 0 {
		t.Errorf("%d ranks passed the barrier early", early.Load())
	}
}

func TestJoinRankErrors(t *testing.T) {
	own := errors.New("out of memory")
	err := joinRankErrors([]int{4, 5, 6}, []error{errPeerFailed, own, nil})
	if err == nil || !errors.Is(err, own) || errors.Is(err, errPeerFailed) {
		t.Fatalf("err = %v", err)
	}
	if !strings.Contains(err.Error(), "rank 1 (GPU 5)") {
		t.Errorf("error %q does not name the rank", err)
	}
	if err := joinRankErrors([]int{0, 1}, []error{nil, nil}); err != nil {
		t.Errorf("no errors: %v", err)
	}
	if err := joinRankErrors([]int{0}, []error{errPeerFailed}); !errors.Is(err, errPeerFailed) {
		t.Errorf("only peer errors are kept when there is nothing else: %v", err)
	}
}

// shard runs every item once, spreads them over the workers and keeps
// each worker to one item at a time.
func TestShard(t *testing.T) {
	const workers, n = 3, 60
	items := make([]int, n)
	for i := range items {
		items[i] = i
	}
	var mu sync.Mutex
	runs := make([]int, n)
	perWorker := make([]int, workers)
	busy := make([]atomic.Bool, workers)
	left := shard(workers, items, func(w, i int) bool {
		if busy[w].Swap(true) {
			t.Errorf("worker %d ran two items at once", w)
		}
		time.Sleep(200 * time.Microsecond)
		busy[w].Store(false)
		mu.Lock()
		runs[i]++
		perWorker[w]++
		mu.Unlock()
		return true
	})
	if left != nil {
		t.Errorf("items left: %v", left)
	}
	for i, c := range runs {
		if c != 1 {
			t.Errorf("item %d ran %d times", i, c)
		}
	}
	for w, c := range perWorker {
		if c == 0 {
			t.Errorf("worker %d ran nothing (%v)", w, perWorker)
		}
	}
	shard(2, nil, func(int, int) bool { t.Error("ran an item of none"); return true })
}

// A worker whose run returns false takes no more items; the others take
// the rest, and what is left once every worker has stopped comes back in
// order.
func TestShardStop(t *testing.T) {
	items := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	for _, tt := range []struct {
		name    string
		workers int
		stop    func(w, i int) bool // whether worker w stops after item i
		ran     int                 // items run
		left    []int
	}{
		{"no workers", 0, nil, 0, items},
		{"one stops after its first", 1, func(w, i int) bool { return true }, 1, items[1:]},
		{"one stops after item 3", 1, func(w, i int) bool { return i == 3 }, 4, items[4:]},
		{"one of two stops", 2, func(w, i int) bool { return w == 0 }, 10, nil},
		{"both stop at once", 2, func(w, i int) bool { return true }, 2, items[2:]},
	} {
		var mu sync.Mutex
		var ran []int
		var started sync.WaitGroup
		started.Add(min(tt.workers, 2))
		left := shard(tt.workers, items, func(w, i int) bool {
			mu.Lock()
			ran = append(ran, i)
			first := len(ran) <= 2
			mu.Unlock()
			if tt.name == "both stop at once" && first {
				started.Done() // both workers hold an item before either stops
				started.Wait()
			}
			return !tt.stop(w, i)
		})
		if len(ran) != tt.ran || fmt.Sprint(left) != fmt.Sprint(tt.left) {
			t.Errorf("%s: ran %v, left %v; want %d run, %v left", tt.name, ran, left, tt.ran, tt.left)
		}
		seen := map[int]bool{}
		for _, i := range append(ran, left...) {
			if seen[i] {
				t.Errorf("%s: item %d ran or was left twice", tt.name, i)
			}
			seen[i] = true
		}
		if len(seen) != len(items) {
			t.Errorf("%s: items lost: ran %v, left %v", tt.name, ran, left)
		}
	}
}

// RunSet keeps the set's order and reports every entry, here with entries
// that need no GPU: parts of other signatures and a collective traced on
// more ranks than the group has GPUs.
func TestGroupRunSetOrderWithoutGPU(t *testing.T) {
	g := &Group{Devices: []*Device{{Index: 0}}}
	coll := &signatures.Signature{ID: "c1", Label: "allreduce f16[8]", Class: signatures.ClassCollective, Tier: signatures.TierLibrary, Count: 4,
		Collective: &signatures.Collective{Op: "allreduce", Nelems: 8, DType: "f16", Ranks: 2}}
	set := &signatures.Set{Signatures: []*signatures.Signature{
		{ID: "p1", Label: "part", Tier: signatures.TierKernel, PartOf: "g0", Count: 2},
		coll,
		{ID: "p2", Label: "part 2", Tier: signatures.TierMemory, PartOf: "g0", Count: 2},
	}}
	var done []string
	var progress strings.Builder
	entries := g.RunSet(set, SuiteOptions{Done: func(e Entry) { done = append(done, e.ID) }, Progress: &progress})
	var ids []string
	for _, e := range entries {
		ids = append(ids, e.ID)
	}
	if fmt.Sprint(ids) != "[p1 c1 p2]" {
		t.Errorf("entries in order %v", ids)
	}
	if len(done) != 3 || strings.Count(progress.String(), "\n") != 3 {
		t.Errorf("Done for %v; progress:\n%s", done, progress.String())
	}
	if e := entries[1]; !strings.Contains(e.Err, "traced on 2 ranks") || e.Result != nil {
		t.Errorf("collective entry %+v", e)
	}
	if e := entries[0]; e.PartOf != "g0" || e.Err != "" {
		t.Errorf("part entry %+v", e)
	}
	tiers := g.RunSet(set, SuiteOptions{Tiers: []signatures.Tier{signatures.TierMemory}})
	if len(tiers) != 1 || tiers[0].ID != "p2" {
		t.Errorf("tier filter: %+v", tiers)
	}
}

func TestOpenGroupArguments(t *testing.T) {
	if _, err := OpenGroup(); err == nil {
		t.Error("a group of no devices opened")
	}
	if _, err := OpenGroup(0, 0); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("a device twice: %v", err)
	}
}

func TestSetStats(t *testing.T) {
	var r Result
	setStats(&r, nil, 0.95)
	if r.Samples != 0 {
		t.Error("stats of no values")
	}
	setStats(&r, []float64{3, 1, 2, 2, 2, 2, 2, 2, 2, 2}, 0.95)
	if r.Samples != 10 || r.MedianNS != 2 || r.MinNS != 1 || r.MaxNS != 3 || r.MeanNS != 2 {
		t.Errorf("%+v", r)
	}
}

// shardAhead calls ahead on each item after the one handed out, in
// order, before a slow worker takes it; none after it returns.
func TestShardAhead(t *testing.T) {
	for _, tt := range []struct {
		name   string
		n      int
		stopAt int // the one worker stops after this item; -1 never
		want   []int
	}{
		{"every item after the first", 6, -1, []int{1, 2, 3, 4, 5}},
		{"one item", 1, -1, nil},
		{"the worker stops after item 2", 6, 2, []int{1, 2, 3}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			items := make([]int, tt.n)
			for i := range items {
				items[i] = i
			}
			var mu sync.Mutex
			var got []int
			called := make([]chan struct{}, tt.n+1)
			for i := range called {
				called[i] = make(chan struct{})
			}
			ahead := func(i int) {
				mu.Lock()
				got = append(got, i)
				mu.Unlock()
				close(called[i])
			}
			left := shardAhead(1, items, func(_, i int) bool {
				if i+1 < tt.n {
					select {
					case <-called[i+1]: // the next item's look ahead came first
					case <-time.After(10 * time.Second):
						t.Errorf("item %d: no look ahead at item %d", i, i+1)
					}
				}
				return i != tt.stopAt
			}, ahead)
			mu.Lock()
			after := slices.Clone(got)
			mu.Unlock()
			if !slices.Equal(after, tt.want) {
				t.Errorf("looked ahead at %v, want %v", after, tt.want)
			}
			if tt.stopAt >= 0 && !slices.Equal(left, items[tt.stopAt+1:]) {
				t.Errorf("left %v, want %v", left, items[tt.stopAt+1:])
			}
			time.Sleep(10 * time.Millisecond)
			mu.Lock()
			defer mu.Unlock()
			if len(got) != len(after) {
				t.Errorf("looked ahead at %v after returning", got[len(after):])
			}
		})
	}
}
