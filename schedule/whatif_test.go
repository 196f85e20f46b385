package schedule

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
)

// decode is a host-bound decode-like schedule: three steps 250 µs apart on
// the clock, each 10 launches entering 20 µs apart and lasting 4 µs, then
// a sync on the token that the capture's (slower) GPU held 46 µs.
func decode(t *testing.T) *Schedule {
	var b strings.Builder
	for i := 0; i < 3; i++ {
		fmt.Fprintf(&b, "inference %d\n%sW 184000 230000 s 0x0\n", 250000*i, launches(10, 20000, 4000))
	}
	return parse(t, b.String())
}

// decodeConstants: submit 3 µs, queue gap 1 µs, wake 1 µs.
var decodeConstants = Constants{SubmitNS: 3000, QueueGapNS: 1000, WakeNS: 1000}

// decodeOps: every launch runs a 2 µs kernel.
func decodeOps() [][]Op { return ops(repeat(2000, 10), repeat(2000, 10), repeat(2000, 10)) }

// steps writes the decode schedule's what-if in parse's text: three steps
// starting at starts, each the same calls.
func steps(starts [3]int64, calls string) string {
	var b strings.Builder
	for _, st := range starts {
		fmt.Fprintf(&b, "inference %d\n%s\n", st, calls)
	}
	return b.String()
}

func TestFasterHost(t *testing.T) {
	for _, tc := range []struct {
		name   string
		factor float64
		// want is the what-if schedule (parse's text); wall its simulated
		// steady wall with decodeConstants and decodeOps, ns.
		want string
		wall float64
	}{{
		// The captured schedule simulates to a wall of 206 µs per step:
		// the host's 20 µs between steps, 9 x 20 µs between the first and
		// the last launch and the last launch's 4 µs (204 µs), then the GPU
		// tail past the last launch's exit: submit 3 + kernel 2 + wake 1 -
		// 4 = 2 µs (the sync's own cost is the wake, 1 µs, not its 46).
		name: "the same host", factor: 1,
		want: steps([3]int64{0, 250000, 500000}, launches(10, 20000, 4000)+"W 184000 230000 s 0x0"),
		wall: 206000,
	}, {
		// Twice as fast: the gaps (16 µs between launches, 20 µs between
		// steps) and the launches (4 µs) halve; the sync keeps its 46 µs.
		// Steps start 138 + 10 µs apart on the clock. The wall: the host's
		// 204 / 2 = 102 µs, then the tail 3 + 2 + 1 - 2 = 4 µs: 106 µs.
		name: "twice as fast", factor: 2,
		want: steps([3]int64{0, 148000, 296000}, launches(10, 10000, 2000)+"W 92000 138000 s 0x0"),
		wall: 106000,
	}, {
		// Twice as slow: steps start 414 + 40 µs apart on the clock. The
		// host's 408 µs; each kernel (3 + 2 µs) ends before its launch's 8
		// µs do, so the sync costs its own wake, 1 µs: 409 µs.
		name: "twice as slow", factor: 0.5,
		want: steps([3]int64{0, 454000, 908000}, launches(10, 40000, 8000)+"W 368000 414000 s 0x0"),
		wall: 409000,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			s := decode(t)
			before := cloneSchedule(s)
			got, err := FasterHost(s, tc.factor)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(s, before) {
				t.Error("FasterHost changed its input")
			}
			if want := parse(t, tc.want); !sameSchedule(got, want) {
				t.Errorf("what-if schedule\n%s\nwant\n%s", text(t, got), text(t, want))
			}
			r, err := Simulate(got, decodeOps(), decodeConstants)
			if err != nil {
				t.Fatal(err)
			}
			if r.WallNS != tc.wall || r.BusyNS != 20000 || r.Bound != "host" {
				t.Errorf("wall %g busy %g %s-bound; want %g, 20000, host-bound", r.WallNS, r.BusyNS, r.Bound, tc.wall)
			}
		})
	}
}

// TestFasterHostOverlap: a call entering before the previous one's exit
// (another thread's) gets no gap; the rounding is to the nearest ns.
func TestFasterHostOverlap(t *testing.T) {
	s := parse(t, "inference 0\nL 0 10 0x0 1 1,1,1 1,1,1\nQ 5 9 e 0x0 notready\nM 12 15 1")
	got, err := FasterHost(s, 2)
	if err != nil {
		t.Fatal(err)
	}
	// L 0..5; Q 5..7 (no gap, 4 / 2 = 2); M 7 + round(3 / 2) = 9 (2 is
	// 1.5 rounded away from 0) .. 9 + 2 = 11.
	want := parse(t, "inference 0\nL 0 5 0x0 1 1,1,1 1,1,1\nQ 5 7 e 0x0 notready\nM 9 11 1")
	if !sameSchedule(got, want) {
		t.Errorf("what-if schedule\n%s\nwant\n%s", text(t, got), text(t, want))
	}
}

func TestUnderGraphs(t *testing.T) {
	for _, tc := range []struct {
		name     string
		launchNS int64
		want     string
		wall     float64
	}{{
		// Each step's 10 launches become one graph (5 µs of host time),
		// followed at once by the sync (46 µs captured); steps keep their
		// 20 µs between them: 51 + 20 = 71 µs apart on the clock. The
		// graph's kernels start at submit (3 µs) after its enter and run
		// back to back 1 µs apart: 3 + 10 x 2 + 9 x 1 = 32 µs, past the
		// graph launch; the sync returns 1 µs (wake) later. The wall: the
		// host's 20 µs between steps + 32 + 1 = 53 µs (against the captured
		// 206): the kernels, their gaps, the launch latency and the wake.
		name: "decode", launchNS: 5000,
		want: steps([3]int64{0, 71000, 142000}, "G 0 5000 0x0 0x1\nW 5000 51000 s 0x0"),
		wall: 53000,
	}, {
		// A graph launch longer than its kernels (40 µs against 32): the
		// host is the critical path again: 20 + 40 + the sync's own 1 µs.
		name: "slow graph launch", launchNS: 40000,
		want: steps([3]int64{0, 106000, 212000}, "G 0 40000 0x0 0x1\nW 40000 86000 s 0x0"),
		wall: 61000,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			s := decode(t)
			before := cloneSchedule(s)
			got, err := UnderGraphs(s, tc.launchNS)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(s, before) {
				t.Error("UnderGraphs changed its input")
			}
			if want := parse(t, tc.want); !sameSchedule(got, want) {
				t.Errorf("what-if schedule\n%s\nwant\n%s", text(t, got), text(t, want))
			}
			o, err := GraphOps(s, decodeOps())
			if err != nil {
				t.Fatal(err)
			}
			if len(o[0]) != 1 || len(o[0][0].DurNS) != 10 || o[0][0].Label != GraphLabel {
				t.Fatalf("graph ops %+v, want one graph of the 10 kernels", o[0])
			}
			r, err := Simulate(got, o, decodeConstants)
			if err != nil {
				t.Fatal(err)
			}
			if r.WallNS != tc.wall || r.BusyNS != 20000 {
				t.Errorf("wall %g busy %g; want %g, 20000", r.WallNS, r.BusyNS, tc.wall)
			}
		})
	}
}

// TestUnderGraphsCalls: marks, an event across two streams, a not-ready
// query, a sync copy, an event wait and a run with no wait after it.
func TestUnderGraphsCalls(t *testing.T) {
	s := parse(t, `inference 0
		M 0 100 1
		L 1000 3000 0x1 1 1,1,1 1,1,1
		R 3500 3700 0xe 0x1
		E 4000 4200 0x2 0xe
		L 4500 6000 0x2 1 1,1,1 1,1,1
		M 6500 6600 2
		Q 7000 7100 s 0x2 notready
		C 8000 20000 0x2 4 DtoH sync
		L 21000 22000 0x2 1 1,1,1 1,1,1
		W 23000 30000 e 0xe
		M 30500 30600 3
		inference 40000
		L 0 1000 0x2 1 1,1,1 1,1,1
		G 2000 3000 0x3 0x9`)
	got, err := UnderGraphs(s, 2000)
	if err != nil {
		t.Fatal(err)
	}
	// The first run (two launches, on 0x1 and 0x2) becomes graph 1 on 0x1,
	// entering the captured 900 ns after the mark; stream 0x2 is 0x1 from
	// then on. The record and the stream wait follow it with no time, the
	// mark and the query with their 100 ns. The sync copy ends the run: it
	// follows at once and keeps its 12 µs. The next run (one launch on
	// 0x2, so 0x1) is graph 2, 1 µs after the copy; the event wait
	// follows at once (7 µs), the last mark its 500 ns later. The second
	// inference starts 40000 - 30600 = 9.4 µs after the first's last exit
	// (25800): its run (a launch on 0x2 and a graph on 0x3), to its end,
	// is graph 1 on 0x1.
	want := parse(t, `inference 0
		M 0 100 1
		G 1000 3000 0x1 0x1
		R 3000 3000 0xe 0x1
		E 3000 3000 0x1 0xe
		M 3000 3100 2
		Q 3100 3200 s 0x1 notready
		C 3200 15200 0x1 4 DtoH sync
		G 16200 18200 0x1 0x2
		W 18200 25200 e 0xe
		M 25700 25800 3
		inference 35200
		G 0 2000 0x1 0x1`)
	if !sameSchedule(got, want) {
		t.Errorf("what-if schedule\n%s\nwant\n%s", text(t, got), text(t, want))
	}
	groups, err := GraphGroups(s)
	if err != nil {
		t.Fatal(err)
	}
	if want := [][][]int{{{0, 1}, {2}, {3}}, {{0, 1}}}; !reflect.DeepEqual(groups, want) {
		t.Errorf("groups %v, want %v", groups, want)
	}
	orig := [][]Op{
		{{DurNS: []int64{1}, Label: "a"}, {DurNS: []int64{2}, Label: "b"}, {DurNS: []int64{3}, Label: "copy"}, {DurNS: []int64{4}, Label: "c"}},
		{{DurNS: []int64{5}, Label: "d"}, {DurNS: []int64{6, 7}, Label: "g"}},
	}
	o, err := GraphOps(s, orig)
	if err != nil {
		t.Fatal(err)
	}
	wantOps := [][]Op{
		{{DurNS: []int64{1, 2}, Label: GraphLabel}, {DurNS: []int64{3}, Label: "copy"}, {DurNS: []int64{4}, Label: GraphLabel}},
		{{DurNS: []int64{5, 6, 7}, Label: GraphLabel}},
	}
	if !reflect.DeepEqual(o, wantOps) {
		t.Errorf("ops %+v, want %+v", o, wantOps)
	}
	if _, err := Simulate(got, o, decodeConstants); err != nil {
		t.Errorf("the what-if does not simulate: %v", err)
	}
}

func TestWhatIfErrors(t *testing.T) {
	s := decode(t)
	for _, tc := range []struct {
		name string
		run  func() error
		want string
	}{
		{"no schedule", func() error { _, err := FasterHost(nil, 2); return err }, "no schedule"},
		{"factor 0", func() error { _, err := FasterHost(s, 0); return err }, "factor 0"},
		{"negative factor", func() error { _, err := FasterHost(s, -2); return err }, "factor -2"},
		{"NaN factor", func() error { _, err := FasterHost(s, math.NaN()); return err }, "factor NaN"},
		{"infinite factor", func() error { _, err := FasterHost(s, math.Inf(1)); return err }, "factor +Inf"},
		{"times past 2^62", func() error { _, err := FasterHost(s, 1e-300); return err }, "the result"},
		{"invalid schedule", func() error { _, err := UnderGraphs(&Schedule{Version: 1}, 0); return err }, "source"},
		{"negative graph launch", func() error { _, err := UnderGraphs(s, -1); return err }, "graph launch -1"},
		{"ops for fewer inferences", func() error { _, err := GraphOps(s, decodeOps()[:2]); return err }, "ops for 2 inferences"},
		{"ops missing", func() error {
			o := decodeOps()
			o[1] = o[1][:9]
			_, err := GraphOps(s, o)
			return err
		}, "inference 1 has 10 GPU ops, 9 ops given"},
		{"groups of no schedule", func() error { _, err := GraphGroups(nil); return err }, "no schedule"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.run(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%v, want an error saying %q", err, tc.want)
			}
		})
	}
}

// text writes a schedule for a failure's message.
func text(t *testing.T, s *Schedule) string {
	var b strings.Builder
	if err := Write(&b, s); err != nil {
		return err.Error()
	}
	return b.String()
}
