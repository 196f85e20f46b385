package schedule

import (
	"strings"
	"testing"
)

// groupRank is a rank's schedule: a launch, a collective launched at
// collAt, then a stream sync 900 ns after the collective's call.
func groupRank(t *testing.T, collAt string) *Schedule {
	t.Helper()
	exit := map[string]string{"1000": "1100", "20000": "20100"}[collAt]
	w := map[string]string{"1000": "W 2000 2100 s 0x0", "20000": "W 21000 21100 s 0x0"}[collAt]
	return parse(t, "inference 0\nL 0 100 0x0 1 1,1,1 1,1,1\nL "+collAt+" "+exit+" 0x0 1 1,1,1 1,1,1\n"+w)
}

func groupOps(collective bool) [][]Op {
	return [][]Op{{{DurNS: []int64{2000}, Label: "k"}, {DurNS: []int64{5000}, Label: "allreduce", Collective: collective}}}
}

// A collective starts on every rank once the latest rank's stream reaches
// it: rank 1's host launches its collective at 20 µs, so rank 0's, ready
// at 3 µs, waits 18 µs for it, and both ranks end together.
func TestSimulateGroup(t *testing.T) {
	c := Constants{SubmitNS: 1000}
	ss := []*Schedule{groupRank(t, "1000"), groupRank(t, "20000")}
	res, err := SimulateGroup(ss, [][][]Op{groupOps(true), groupOps(true)}, []Constants{c, c})
	if err != nil {
		t.Fatal(err)
	}
	// Rank 0: op 0 runs 1-3 µs; its collective arrives at 3 µs, starts at
	// rank 1's arrival, 20 µs (launch) + 1 µs (submit) = 21 µs, ends at 26
	// µs, and the sync returns then. Busy 2 + 5 µs; 18 µs for the peer;
	// 1 µs waiting on the host (0-1 µs).
	for r, want := range []struct{ wall, busy, peer, idle float64 }{{26000, 7000, 18000, 1000}, {26000, 7000, 0, 19000}} {
		got := res[r]
		if got.WallNS != want.wall || got.BusyNS != want.busy || got.PeerWaitNS != want.peer || got.GPUIdleNS != want.idle {
			t.Errorf("rank %d: wall %g, busy %g, peer wait %g, GPU idle %g; want %+v", r, got.WallNS, got.BusyNS, got.PeerWaitNS, got.GPUIdleNS, want)
		}
	}
	// Alone, the same schedules do not wait: Simulate ignores Collective.
	alone, err := Simulate(ss[0], groupOps(true), c)
	if err != nil {
		t.Fatal(err)
	}
	if alone.WallNS != 8000 || alone.PeerWaitNS != 0 {
		t.Errorf("rank 0 alone: wall %g, peer wait %g; want 8000, 0", alone.WallNS, alone.PeerWaitNS)
	}
}

// Ranks that launch different collectives are an error, not a hang.
func TestSimulateGroupMismatch(t *testing.T) {
	c := Constants{SubmitNS: 1000}
	ss := []*Schedule{groupRank(t, "1000"), groupRank(t, "20000")}
	_, err := SimulateGroup(ss, [][][]Op{groupOps(true), groupOps(false)}, []Constants{c, c})
	if err == nil || !strings.Contains(err.Error(), "collective") {
		t.Errorf("mismatched collectives: %v", err)
	}
	if _, err := SimulateGroup(ss, [][][]Op{groupOps(true)}, []Constants{c, c}); err == nil {
		t.Error("one op list for two ranks: no error")
	}
}
