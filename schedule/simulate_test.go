package schedule

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// parse reads a schedule from its records: "inference <start>" lines open
// an inference (numbered in order; each ends at its last exit), other
// lines are records. Kernel name 1 is "k".
func parse(t testing.TB, text string) *Schedule {
	t.Helper()
	var b strings.Builder
	b.WriteString("kreplay-schedule 1\nname 1 k\n")
	n, last := -1, int64(0)
	closeInf := func() {
		if n >= 0 {
			fmt.Fprintf(&b, "end %d %d\n", n, last)
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		line = strings.TrimSpace(line)
		if start, ok := strings.CutPrefix(line, "inference "); ok {
			closeInf()
			n++
			last = 0
			fmt.Fprintf(&b, "inference %d start %s\n", n, start)
			continue
		}
		var exit int64
		fmt.Sscanf(strings.Join(strings.Fields(line)[2:3], ""), "%d", &exit)
		last = max(last, exit)
		b.WriteString(line + "\n")
	}
	closeInf()
	s, err := Read(strings.NewReader(b.String()))
	if err != nil {
		t.Fatalf("%v in\n%s", err, b.String())
	}
	return s
}

// ops gives every GPU op of each inference one duration, the same label.
func ops(durs ...[]int64) [][]Op {
	out := make([][]Op, len(durs))
	for i, d := range durs {
		for _, v := range d {
			out[i] = append(out[i], Op{DurNS: []int64{v}, Label: "k"})
		}
	}
	return out
}

func repeat(v int64, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// launches are n launches of kernel 1 on stream 0x0, entering every
// `every` ns and lasting `dur` ns.
func launches(n int, every, dur int64) string {
	var b strings.Builder
	for k := 0; k < n; k++ {
		fmt.Fprintf(&b, "L %d %d 0x0 1 1,1,1 1,1,1\n", int64(k)*every, int64(k)*every+dur)
	}
	return b.String()
}

// twoStreamsTail ends the schedules of TestSimulate's two-stream cases,
// with or without the event between the streams: a launch on stream B
// (0x2), a second launch on stream A (0x1) and a sync on B; the cases run
// with twoStreamsConstants.
const twoStreamsTail = `L 3000 5000 0x2 1 1,1,1 1,1,1
			L 5000 7000 0x1 1 1,1,1 1,1,1
			W 7000 8000 s 0x2`

var twoStreamsConstants = Constants{SubmitNS: 1000, QueueGapNS: 500}

func TestSimulate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		sched string
		ops   [][]Op
		c     Constants
		// Wanted figures, ns; host is framework, launch path, waits.
		wall, busy, hostWait float64
		host                 HostSplit
		bound                string
	}{{
		// 10 launches 20 µs apart, each 4 µs, of 2 µs kernels: each kernel
		// finds the GPU idle and starts 3 µs (submit) after its launch.
		// wall = the last enter 180 µs + submit 3 µs + the last kernel 2 µs
		// = 185 µs; busy 10 x 2 µs; framework 9 gaps of 16 µs; launch path
		// 10 x 4 µs.
		name:  "host-bound",
		sched: "inference 0\n" + launches(10, 20000, 4000),
		ops:   ops(repeat(2000, 10)),
		c:     Constants{SubmitNS: 3000, QueueGapNS: 1000, WakeNS: 2000},
		wall:  185000, busy: 20000, hostWait: 0,
		host: HostSplit{FrameworkNS: 144000, LaunchNS: 40000}, bound: "host",
	}, {
		// 10 launches of 5 µs, 1 µs apart, of 50 µs kernels, then a stream
		// sync that blocked 450 µs. Kernel 0 starts at submit (3 µs), the
		// others queue 1 µs apart: the last ends at 3 + 10 x 50 + 9 x 1 =
		// 512 µs, and the sync returns 2 µs (wake) later: wall 514 µs. The
		// sync enters at 60 µs; a wait's own cost is capped at the wake (2
		// µs, not MaxCallNS), so the host waited 514 - 60 - 2 = 452 µs, and
		// the wait is 514 - 60 = 454 µs whole.
		name: "GPU-bound behind a sync",
		sched: "inference 0\n" + launches(10, 6000, 5000) +
			"W 60000 510000 s 0x0",
		ops:  ops(repeat(50000, 10)),
		c:    Constants{SubmitNS: 3000, QueueGapNS: 1000, WakeNS: 2000, MaxCallNS: 10000},
		wall: 514000, busy: 500000, hostWait: 452000,
		host: HostSplit{FrameworkNS: 10000, LaunchNS: 50000, WaitNS: 454000}, bound: "gpu",
	}, {
		// A launch that blocked 2 ms is capped at 20 µs of host time: the
		// second launch enters 1 µs (its gap) after, at 21 µs, and exits at
		// 25 µs; its kernel runs 21..22 µs. wall 25 µs.
		name:  "the cap",
		sched: "inference 0\nL 0 2000000 0x0 1 1,1,1 1,1,1\nL 2001000 2005000 0x0 1 1,1,1 1,1,1",
		ops:   ops([]int64{1000, 1000}),
		c:     Constants{MaxCallNS: 20000},
		wall:  25000, busy: 2000,
		host: HostSplit{FrameworkNS: 1000, LaunchNS: 24000}, bound: "host",
	}, {
		// Without the cap the blocked launch is host time: wall 2005 µs.
		name:  "no cap",
		sched: "inference 0\nL 0 2000000 0x0 1 1,1,1 1,1,1\nL 2001000 2005000 0x0 1 1,1,1 1,1,1",
		ops:   ops([]int64{1000, 1000}),
		wall:  2005000, busy: 2000,
		host: HostSplit{FrameworkNS: 1000, LaunchNS: 2004000}, bound: "host",
	}, {
		// Two streams and an event. A's 100 µs kernel runs 1..101 µs; the
		// event recorded after it completes at 101 µs; B waits on it, so
		// B's 10 µs kernel, launched at 3 µs, runs 101..111 µs. A's second
		// kernel (20 µs), launched at 5 µs, queues behind the first:
		// 101.5..121.5 µs. The host's sync on B enters at 7 µs; its own
		// cost is its captured 1 µs capped at the wake, 0: it returns at
		// 111 µs and waited 111 - 7 - 0 = 104 µs, 104 µs whole. wall = the
		// GPU's end 121.5 µs; busy = 1..121.5 µs = 120.5 µs.
		name: "event across two streams",
		sched: `inference 0
			L 0 2000 0x1 1 1,1,1 1,1,1
			R 2000 2500 0xe 0x1
			E 2500 3000 0x2 0xe
			` + twoStreamsTail,
		ops:  ops([]int64{100000, 10000, 20000}),
		c:    twoStreamsConstants,
		wall: 121500, busy: 120500, hostWait: 104000,
		host: HostSplit{FrameworkNS: 0, LaunchNS: 7000, WaitNS: 104000}, bound: "gpu",
	}, {
		// The same without the stream wait: B's kernel runs 4..14 µs, so
		// the sync on B (enter 7 µs, own cost 0: the wake) returns at 14
		// µs: waited 14 - 7 - 0 = 7 µs, 7 µs whole. A's second kernel
		// still ends at 121.5 µs. busy = 1..101 and 101.5..121.5 µs: 120
		// µs, so the GPU idled 1.5 µs, less than the host waited.
		name: "two streams, no event",
		sched: `inference 0
			L 0 2000 0x1 1 1,1,1 1,1,1
			` + twoStreamsTail,
		ops:  ops([]int64{100000, 10000, 20000}),
		c:    twoStreamsConstants,
		wall: 121500, busy: 120000, hostWait: 7000,
		host: HostSplit{FrameworkNS: 1000, LaunchNS: 6000, WaitNS: 7000}, bound: "gpu",
	}, {
		// A wait on the event: the event completes with the kernel at 1 +
		// 100 = 101 µs; the wait enters at 2.5 µs with own cost 0 (the
		// wake) and returns at 101 µs: waited 101 - 2.5 = 98.5 µs.
		name: "event wait",
		sched: `inference 0
			L 0 2000 0x1 1 1,1,1 1,1,1
			R 2000 2500 0xe 0x1
			W 2500 3000 e 0xe`,
		ops:  ops([]int64{100000}),
		c:    Constants{SubmitNS: 1000},
		wall: 101000, busy: 100000, hostWait: 98500,
		host: HostSplit{LaunchNS: 2500, WaitNS: 98500}, bound: "gpu",
	}, {
		// A wait's own cost is its captured duration capped at the wake
		// (0.5 µs), whatever MaxCallNS: the first sync's captured 30 µs
		// were spent waiting for the capture's GPU. Submit 1 µs.
		//   L enters 0, exits 1; kernel 1..3 µs.
		//   W enters 1, own min(30, 0.5) = 0.5: exits max(1 + 0.5,
		//     3 + 0.5) = 3.5: waited 3.5 - 1 - 0.5 = 2 µs, 2.5 µs whole.
		//   L enters 3.5 + its gap 9 = 12.5, exits 13.5; kernel 13.5..15.5.
		//   W enters 13.5 + its gap 4 = 17.5, own min(0.3, 0.5) = 0.3;
		//     the kernel is done (15.5 + 0.5 = 16 < 17.8): exits 17.8,
		//     waited 0, 0.3 µs whole.
		// wall 17.8 µs; busy 4 µs; framework 9 + 4 = 13 µs; launch path 2
		// µs; waits 2.5 + 0.3 = 2.8 µs.
		name: "a wait costs the wake at most",
		sched: `inference 0
			L 0 1000 0x0 1 1,1,1 1,1,1
			W 1000 31000 s 0x0
			L 40000 41000 0x0 1 1,1,1 1,1,1
			W 45000 45300 s 0x0`,
		ops:  ops([]int64{2000, 2000}),
		c:    Constants{SubmitNS: 1000, WakeNS: 500},
		wall: 17800, busy: 4000, hostWait: 2000,
		host: HostSplit{FrameworkNS: 13000, LaunchNS: 2000, WaitNS: 2800}, bound: "host",
	}, {
		// Three inferences 10 µs apart on the recorder's clock, each a
		// launch (1 µs) and a sync (captured 6 µs, own cost the wake 0.5
		// µs), with a zero submit.
		//   0: L 0..1, kernel 0..5; W enters 1, exits max(1.5, 5.5) = 5.5
		//      (waited 5.5 - 1 - 0.5 = 4). Ends 5.5.
		//   1: enters its captured gap 10 - 7 = 3 µs later, 8.5: L
		//      8.5..9.5, kernel 8.5..13.5; W enters 9.5, exits 14 (waited
		//      4, 4.5 whole). Ends 14.
		//   2: enters 17: L 17..18, kernel 17..26; W enters 18, exits 26.5
		//      (waited 8, 8.5 whole). Ends 26.5.
		// Steady (1 and 2): wall (26.5 - 5.5) / 2 = 10.5 µs; busy (5 + 9)
		// / 2 = 7 µs; the host waited (4 + 8) / 2 = 6 µs, more than the
		// GPU idled (3.5 µs): GPU-bound. Framework 3 µs, launch path 1 µs,
		// waits (4.5 + 8.5) / 2 = 6.5 µs.
		name: "back to back",
		sched: `inference 0
			L 0 1000 0x0 1 1,1,1 1,1,1
			W 1000 7000 s 0x0
			inference 10000
			L 0 1000 0x0 1 1,1,1 1,1,1
			W 1000 7000 s 0x0
			inference 20000
			L 0 1000 0x0 1 1,1,1 1,1,1
			W 1000 7000 s 0x0`,
		ops:  ops([]int64{5000}, []int64{5000}, []int64{9000}),
		c:    Constants{WakeNS: 500},
		wall: 10500, busy: 7000, hostWait: 6000,
		host: HostSplit{FrameworkNS: 3000, LaunchNS: 1000, WaitNS: 6500}, bound: "gpu",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Simulate(parse(t, tc.sched), tc.ops, tc.c)
			if err != nil {
				t.Fatal(err)
			}
			if r.WallNS != tc.wall || r.BusyNS != tc.busy || r.HostWaitNS != tc.hostWait || r.GPUIdleNS != tc.wall-tc.busy {
				t.Errorf("wall %g busy %g idle %g host wait %g; want %g %g %g %g",
					r.WallNS, r.BusyNS, r.GPUIdleNS, r.HostWaitNS, tc.wall, tc.busy, tc.wall-tc.busy, tc.hostWait)
			}
			if r.Host != tc.host {
				t.Errorf("host %+v, want %+v", r.Host, tc.host)
			}
			if r.Bound != tc.bound {
				t.Errorf("bound %q, want %q", r.Bound, tc.bound)
			}
			var sum HostSplit
			for _, sh := range r.Shares {
				sum.add(sh.HostSplit)
			}
			if sum != r.Host {
				t.Errorf("the shares sum to %+v, the host split is %+v", sum, r.Host)
			}
		})
	}
}

// TestSimulateGraph: a graph of three kernels (1, 2, 3 µs) queued 0.5 µs
// apart from submit (1 µs): 1..2, 2.5..4.5, 5..8 µs; the context sync
// (enter 0.5 µs, own cost 0: the wake) returns at 8 µs. busy 6 µs.
func TestSimulateGraph(t *testing.T) {
	s := parse(t, "inference 0\nG 0 500 0x0 0xa\nW 500 600 c 0x0")
	r, err := Simulate(s, [][]Op{{{DurNS: []int64{1000, 2000, 3000}, Label: "graph"}}}, Constants{SubmitNS: 1000, QueueGapNS: 500})
	if err != nil {
		t.Fatal(err)
	}
	if r.WallNS != 8000 || r.BusyNS != 6000 {
		t.Errorf("wall %g busy %g, want 8000 6000", r.WallNS, r.BusyNS)
	}
	if len(r.Shares) != 1 || r.Shares[0].Label != "graph" || r.Shares[0].WaitNS != 7500 || r.Shares[0].Ops != 1 {
		t.Errorf("shares %+v, want the graph's launch and its 7.5 µs wait", r.Shares)
	}
}

// TestSimulateGenerate: marks 2 before each token's copy and sync. With
// submit 1 µs, wake 0.5 µs and calls capped at 5 µs (the syncs' own cost
// at the wake, 0.5 µs):
//
//	L enter 0.1: kernel 1.1..51.1 µs
//	C enter 1.2 (async): copy queued, 51.1..52.1 µs
//	W enter 2.2: returns at max(2.2 + 0.5, 52.1 + 0.5) = 52.6 µs: token 1
//	L enter 52.6: kernel 53.6..83.6 µs
//	C enter 53.7: copy 83.6..84.6 µs
//	W enter 54.7: returns at 85.1 µs: token 2
//	M 3 at 85.1..85.2 µs: the end.
//
// TTFT 52.6 µs, TPOT 85.1 - 52.6 = 32.5 µs.
func TestSimulateGenerate(t *testing.T) {
	r := simulateGenerate(t)
	if r.Tokens != 2 || r.TTFT != (Quantiles{52600, 52600, 52600}) || r.TPOT != (Quantiles{32500, 32500, 32500}) {
		t.Errorf("tokens %g TTFT %+v TPOT %+v; want 2, 52600, 32500", r.Tokens, r.TTFT, r.TPOT)
	}
	if r.WallNS != 85200 {
		t.Errorf("wall %g, want 85200", r.WallNS)
	}
}

// simulateGenerate simulates the generate case TestSimulateGenerate
// works through: two tokens, wall 85.2 µs, GPU ops of 50, 1, 30 and 1 µs.
func simulateGenerate(t *testing.T) Result {
	t.Helper()
	s := parse(t, `inference 0
		M 0 100 1
		L 100 1100 0x0 1 1,1,1 1,1,1
		M 1100 1200 2
		C 1200 2200 0x0 4 DtoH async
		W 2200 60000 s 0x0
		L 60000 61000 0x0 1 1,1,1 1,1,1
		M 61000 61100 2
		C 61100 62100 0x0 4 DtoH async
		W 62100 100000 s 0x0
		M 100000 100100 3`)
	r, err := Simulate(s, ops([]int64{50000, 1000, 30000, 1000}), Constants{SubmitNS: 1000, WakeNS: 500, MaxCallNS: 5000})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestSimulateWallQuantiles: inferences 10 µs apart on the recorder's
// clock, each a launch (1 µs) and a sync, with the wake 0.5 µs and a zero
// submit (the "back to back" case of TestSimulate): a steady inference
// with a kernel of d enters 3 µs after the previous one's end and ends d
// + 0.5 µs after it enters, so its wall is d + 3.5 µs. The walls are the
// quantiles' input; WallNS stays their mean.
func TestSimulateWallQuantiles(t *testing.T) {
	for _, tc := range []struct {
		name    string
		kernels []int64 // per inference; the first is not steady
		mean    float64
		q       Quantiles
	}{{
		name:    "even",
		kernels: []int64{5000, 2000, 2000, 2000, 2000},
		mean:    5500,
		q:       Quantiles{5500, 5500, 5500},
	}, {
		// Steady walls 4.5, 5.5, ..., 12.5 µs and one stalled 93.5 µs: the
		// mean 17 µs, the median (8.5 + 9.5) / 2 = 9 µs.
		name:    "one stall",
		kernels: []int64{5000, 1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000, 9000, 90000},
		mean:    17000,
		q:       Quantiles{4500, 9000, 12500},
	}, {
		// Out of order: the quantiles sort, the stall second of three.
		name:    "three",
		kernels: []int64{5000, 6000, 60000, 1000},
		mean:    (9500 + 63500 + 4500) / 3.0,
		q:       Quantiles{4500, 9500, 63500},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			var sched strings.Builder
			durs := make([][]int64, len(tc.kernels))
			for i, d := range tc.kernels {
				fmt.Fprintf(&sched, "inference %d\nL 0 1000 0x0 1 1,1,1 1,1,1\nW 1000 7000 s 0x0\n", 10000*i)
				durs[i] = []int64{d}
			}
			r, err := Simulate(parse(t, sched.String()), ops(durs...), Constants{WakeNS: 500})
			if err != nil {
				t.Fatal(err)
			}
			if r.Steady != len(tc.kernels)-1 || !near(r.WallNS, tc.mean) || r.WallQ != tc.q {
				t.Errorf("%d steady, wall mean %g, quantiles %+v; want %d, %g, %+v", r.Steady, r.WallNS, r.WallQ, len(tc.kernels)-1, tc.mean, tc.q)
			}
		})
	}
}

// Under a binding power limit the median wall is raised by the mean's
// factor.
func TestEnergyMedianWall(t *testing.T) {
	r := Result{Inferences: 2, Steady: 1, WallNS: 1000, WallQ: Quantiles{800, 800, 800}, BusyNS: 1000,
		Times: []InferenceTimes{{Ops: 1}, {Ops: 1, Steady: true}}}
	e, err := Energy(r, [][]float64{{1e-3}, {1e-3}}, Constants{}, 500)
	if err != nil {
		t.Fatal(err)
	}
	// 1 mJ over 1 µs is 1000 W: at 500 W it takes 2 µs.
	if !e.PowerCapped || !near(e.WallNS, 2000) || !near(e.MedianWallNS, 1600) {
		t.Errorf("%+v; want capped, wall 2000 ns, median 1600 ns", e)
	}
}

func TestQuantiles(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want Quantiles
	}{
		{nil, Quantiles{}},
		{[]float64{7}, Quantiles{7, 7, 7}},
		{[]float64{5, 1, 3, 2}, Quantiles{1, 2.5, 5}},
		{[]float64{10, 9, 8, 7, 6, 5, 4, 3, 2, 1}, Quantiles{1, 5.5, 9}},
		{[]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, Quantiles{2, 6, 10}},
	} {
		if got := quantiles(tc.in); got != tc.want {
			t.Errorf("quantiles(%v) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

func TestSimulateErrors(t *testing.T) {
	s := parse(t, "inference 0\nL 0 10 0x0 1 1,1,1 1,1,1\nG 10 20 0x0 0x1\nW 20 30 c 0x0")
	good := func() [][]Op {
		return [][]Op{{{DurNS: []int64{5}}, {DurNS: []int64{1, 2}}}}
	}
	if _, err := Simulate(s, good(), Constants{}); err != nil {
		t.Fatalf("the good input: %v", err)
	}
	for _, tc := range []struct {
		name   string
		change func(o [][]Op, c *Constants) [][]Op
		want   string
	}{
		{"op missing", func(o [][]Op, c *Constants) [][]Op { o[0] = o[0][:1]; return o }, "GPU op 1 (record 1) has none"},
		{"op extra", func(o [][]Op, c *Constants) [][]Op { o[0] = append(o[0], Op{DurNS: []int64{1}}); return o }, "3 ops given"},
		{"inferences", func(o [][]Op, c *Constants) [][]Op { return append(o, nil) }, "ops for 2 inferences"},
		{"launch with two times", func(o [][]Op, c *Constants) [][]Op { o[0][0].DurNS = []int64{1, 2}; return o }, "has 2 times"},
		{"no time", func(o [][]Op, c *Constants) [][]Op { o[0][1].DurNS = nil; return o }, "has 0 times"},
		{"negative time", func(o [][]Op, c *Constants) [][]Op { o[0][1].DurNS[1] = -1; return o }, "lasts -1 ns"},
		{"negative constant", func(o [][]Op, c *Constants) [][]Op { c.WakeNS = -1; return o }, "negative constant"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c Constants
			o := tc.change(good(), &c)
			if _, err := Simulate(s, o, c); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%v, want an error saying %q", err, tc.want)
			}
		})
	}
}

func TestEnergy(t *testing.T) {
	// The host-bound case: wall 185 µs, busy 20 µs. Ten ops of 1 mJ: 10
	// mJ; waiting 165 µs at 100 W: 16.5 mJ; 26.5 mJ over 185 µs is 143 W.
	s := parse(t, "inference 0\n"+launches(10, 20000, 4000))
	r, err := Simulate(s, ops(repeat(2000, 10)), Constants{SubmitNS: 3000})
	if err != nil {
		t.Fatal(err)
	}
	energies := [][]float64{make([]float64, 10)}
	for j := range energies[0] {
		energies[0][j] = 0.001
	}
	c := Constants{WaitPowerW: 100}
	for _, tc := range []struct {
		limit  float64
		wallNS float64
		capped bool
	}{
		{0, 185000, false},
		{700, 185000, false},
		// At 100 W the 26.5 mJ take 265 µs.
		{100, 265000, true},
	} {
		e, err := Energy(r, energies, c, tc.limit)
		if err != nil {
			t.Fatal(err)
		}
		if !near(e.KernelJ, 0.010) || !near(e.WaitJ, 0.0165) || !near(e.TotalJ, 0.0265) || !near(e.WallNS, tc.wallNS) || !near(e.MedianWallNS, tc.wallNS) || e.PowerCapped != tc.capped {
			t.Errorf("limit %g W: %+v; want 10 mJ + 16.5 mJ, wall %g ns, capped %v", tc.limit, e, tc.wallNS, tc.capped)
		}
	}
	if _, err := Energy(r, [][]float64{{1}}, c, 0); err == nil {
		t.Error("one energy for ten ops is accepted")
	}
	if _, err := Energy(r, [][]float64{append(make([]float64, 9), math.NaN())}, c, 0); err == nil {
		t.Error("a NaN energy is accepted")
	}
}

// TestEnergyPerToken: the generate case (2 tokens, wall 85.2 µs, busy
// 50 + 1 + 30 + 1 = 82 µs): 4 ops of 2 mJ and 3.2 µs waiting at 50 W =
// 8.16 mJ, 4.08 mJ per token.
func TestEnergyPerToken(t *testing.T) {
	r := simulateGenerate(t)
	e, err := Energy(r, [][]float64{{0.002, 0.002, 0.002, 0.002}}, Constants{WaitPowerW: 50}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !near(e.TotalJ, 0.00816) || !near(e.PerTokenJ, 0.00408) {
		t.Errorf("%+v, want 8.16 mJ, 4.08 mJ per token", e)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// Recorded blocks: a Fresh inference starts a new run of back-to-back
// inferences after the host synchronized, so the seconds between blocks
// (the measured ones between them) never enter the figures: two blocks of
// two inferences predict what one block of three does, counting the two
// that follow another.
func TestSimulateFreshBlocks(t *testing.T) {
	// Each inference: 10 launches 20 µs apart of 2 µs kernels (185 µs);
	// the next one's first call 15 µs after the previous' last exit.
	inf := launches(10, 20000, 4000)
	c := Constants{SubmitNS: 3000, QueueGapNS: 1000, WakeNS: 2000}
	one := parse(t, "inference 0\n"+inf+"inference 199000\n"+inf+"inference 398000\n"+inf)
	two := parse(t, "inference 0 fresh\n"+inf+"inference 199000\n"+inf+
		"inference 5000000000 fresh\n"+inf+"inference 5000199000\n"+inf)
	if !two.Inferences[2].Fresh || two.Inferences[1].Fresh {
		t.Fatalf("fresh flags %v", two.Inferences)
	}
	a, err := Simulate(one, ops(repeat(2000, 10), repeat(2000, 10), repeat(2000, 10)), c)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Simulate(two, ops(repeat(2000, 10), repeat(2000, 10), repeat(2000, 10), repeat(2000, 10)), c)
	if err != nil {
		t.Fatal(err)
	}
	if a.Steady != 2 || b.Steady != 2 || b.FirstSteady != 1 || !b.Times[3].Steady || b.Times[2].Steady {
		t.Errorf("steady: %d and %d inferences, first %d", a.Steady, b.Steady, b.FirstSteady)
	}
	// 15 µs from the last exit + the inference's 180 µs of launches +
	// submit 3 µs + the last kernel 2 µs = 200 µs from end to end; busy 20 µs.
	for _, r := range []Result{a, b} {
		if r.WallNS != 199000 || r.BusyNS != 20000 || r.Bound != "host" {
			t.Errorf("wall %g ns, busy %g ns, %s-bound; want 199000, 20000, host", r.WallNS, r.BusyNS, r.Bound)
		}
	}
	// The host what-ifs keep the blocks.
	f, err := FasterHost(two, 2)
	if err != nil {
		t.Fatal(err)
	}
	if !f.Inferences[2].Fresh || f.Inferences[3].Fresh {
		t.Errorf("a faster host's schedule lost the fresh flags")
	}
	var sb strings.Builder
	if err := Write(&sb, two); err != nil || !strings.Contains(sb.String(), "\ninference 2 start 5000000000 fresh\n") {
		t.Errorf("written (%v):\n%s", err, sb.String())
	}
}
