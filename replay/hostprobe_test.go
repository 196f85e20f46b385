package replay

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/kreplay/kreplay/internal/cupti"
)

// probeCall, probeKernel and probeCopy build synthetic CUPTI records.
func probeCall(thread, corr uint32, start, end uint64) cupti.Record {
	return cupti.Record{Kind: cupti.KindDriver, ThreadID: thread, CorrelationID: corr, Start: start, End: end}
}

func probeKernel(corr uint32, start, end uint64) cupti.Record {
	return cupti.Record{Kind: cupti.KindConcurrentKernel, CorrelationID: corr, Start: start, End: end}
}

func probeCopy(corr uint32, start, end uint64) cupti.Record {
	return cupti.Record{Kind: cupti.KindMemcpy, CorrelationID: corr, Start: start, End: end, Bytes: 8}
}

// threeRounds is a synchronize round, a copy round and a late round
// (the host entered its synchronize after the kernel ended), with a call
// of another thread inside the first round and records out of order.
func threeRounds() []cupti.Record {
	return []cupti.Record{
		probeKernel(20, 105000, 125000),
		probeCall(7, 10, 1000, 3000), probeKernel(10, 6000, 26000), probeCall(9, 12, 3100, 3150), probeCall(7, 11, 3200, 27500),
		probeCall(7, 20, 100000, 102000), probeCall(7, 21, 102100, 127000), probeCopy(21, 125500, 126000), probeCall(7, 22, 127100, 127400),
		probeCall(7, 30, 200000, 202000), probeKernel(30, 203000, 204000), probeCall(7, 31, 205000, 205500),
	}
}

func TestHostRounds(t *testing.T) {
	rounds, err := hostRounds(threeRounds())
	if err != nil {
		t.Fatal(err)
	}
	want := []HostRound{
		{LaunchEndNS: 2000, KernelStartNS: 5000, KernelEndNS: 25000, WaitStartNS: 2200, WaitEndNS: 26500},
		{LaunchEndNS: 2000, KernelStartNS: 5000, KernelEndNS: 25000, Copy: true, CopyCallStartNS: 2100, CopyCallEndNS: 27000,
			CopyStartNS: 25500, CopyEndNS: 26000, WaitStartNS: 27100, WaitEndNS: 27400},
		{LaunchEndNS: 2000, KernelStartNS: 3000, KernelEndNS: 4000, WaitStartNS: 5000, WaitEndNS: 5500},
	}
	if len(rounds) != len(want) {
		t.Fatalf("%d rounds, want %d: %+v", len(rounds), len(want), rounds)
	}
	for i := range want {
		if rounds[i] != want[i] {
			t.Errorf("round %d:\n got %+v\nwant %+v", i, rounds[i], want[i])
		}
	}
	for i, w := range []struct {
		submit, wake int64
		waited       bool
	}{{5000, 1500, true}, {5000, 1400, true}, {3000, 1500, false}} {
		r := rounds[i]
		if r.SubmitNS() != w.submit || r.WakeNS() != w.wake || r.Waited() != w.waited {
			t.Errorf("round %d: submit %d wake %d waited %v, want %d %d %v", i, r.SubmitNS(), r.WakeNS(), r.Waited(), w.submit, w.wake, w.waited)
		}
	}

	var p HostProbe
	if err := p.setRounds(rounds); err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want float64
	}{
		{"SubmitNS", p.SubmitNS, 5000}, {"WakeNS", p.WakeNS, 1500}, {"CopyWakeNS", p.CopyWakeNS, 1400},
		{"Submit.N", float64(p.Submit.N), 3}, {"Submit.MinNS", p.Submit.MinNS, 3000},
		{"Launch.MedianNS", p.Launch.MedianNS, 2000}, {"Wake.N", float64(p.Wake.N), 1},
		{"TracedRoundTrip.MedianNS", p.TracedRoundTrip.MedianNS, 16000}, {"Late", float64(p.Late), 1},
		{"Rounds", float64(len(p.Rounds)), 2}, {"CopyRounds", float64(len(p.CopyRounds)), 1},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %g, want %g", c.name, c.got, c.want)
		}
	}
}

func TestHostRoundsErrors(t *testing.T) {
	cases := []struct {
		name string
		recs []cupti.Record
		want string
	}{
		{"no launch call", []cupti.Record{probeKernel(10, 6000, 7000), probeCall(7, 11, 3200, 8000)}, "no driver call"},
		{"kernel before its launch", []cupti.Record{probeCall(7, 10, 5000, 6000), probeKernel(10, 4000, 7000), probeCall(7, 11, 6100, 8000)}, "disagree"},
		{"no synchronize", []cupti.Record{probeCall(7, 10, 1000, 2000), probeKernel(10, 3000, 4000)}, "no synchronize"},
		{"copy without synchronize", []cupti.Record{probeCall(7, 10, 1000, 2000), probeKernel(10, 3000, 4000), probeCall(7, 11, 2100, 5000),
			probeCopy(11, 4100, 4200)}, "no synchronize"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := hostRounds(c.recs)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one containing %q", err, c.want)
			}
		})
	}
	// Rounds where the host never waited give no wake.
	late := []HostRound{{LaunchEndNS: 2000, KernelStartNS: 3000, KernelEndNS: 4000, WaitStartNS: 5000, WaitEndNS: 5500}}
	var p HostProbe
	if err := p.setRounds(late); err == nil || !strings.Contains(err.Error(), "lengthen WakeKernel") {
		t.Errorf("setRounds of late rounds: %v", err)
	}
}

func TestQueueRun(t *testing.T) {
	base := []cupti.Record{
		probeCall(7, 1, 0, 2000), probeKernel(1, 3000, 50000),
		probeCall(7, 2, 2100, 2600), probeKernel(2, 50500, 51500),
		probeCall(7, 3, 2700, 3200), probeKernel(3, 52000, 53000),
		probeCall(7, 4, 3300, 3800), probeKernel(4, 53800, 54800),
		probeCall(7, 5, 60000, 60500), probeKernel(5, 70000, 71000), // launched after the blocker ended
	}
	q, err := queueRun(base)
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want float64
	}{
		{"Kernels", float64(q.Kernels), 4}, {"Queued", float64(q.Queued), 3}, {"BlockerNS", q.BlockerNS, 47000},
		{"SpanNS", q.SpanNS, 4300}, {"BusyNS", q.BusyNS, 3000}, {"GapNS", q.GapNS, 650},
		{"Gap.MedianNS", q.Gap.MedianNS, 650}, {"Gap.MinNS", q.Gap.MinNS, 500}, {"Gap.MaxNS", q.Gap.MaxNS, 800},
		{"Kernel.MedianNS", q.Kernel.MedianNS, 1000}, {"Launch.MedianNS", q.Launch.MedianNS, 500},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %g, want %g", c.name, c.got, c.want)
		}
	}
	if len(q.GapsNS) != 2 || q.GapsNS[0] != 500 || q.GapsNS[1] != 800 {
		t.Errorf("GapsNS = %v, want [500 800]", q.GapsNS)
	}

	errs := []struct {
		name string
		recs []cupti.Record
		want string
	}{
		{"too few kernels", base[:4], "recorded 2 kernels"},
		{"host behind", []cupti.Record{probeCall(7, 1, 0, 2000), probeKernel(1, 3000, 5000), probeCall(7, 2, 6000, 6500), probeKernel(2, 7000, 8000),
			probeCall(7, 3, 9000, 9500), probeKernel(3, 10000, 11000)}, "did not keep ahead"},
		{"no launch call", []cupti.Record{probeCall(7, 1, 0, 2000), probeKernel(1, 3000, 50000), probeKernel(2, 50500, 51500), probeKernel(3, 52000, 53000)}, "no driver call"},
	}
	for _, c := range errs {
		t.Run(c.name, func(t *testing.T) {
			_, err := queueRun(c.recs)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one containing %q", err, c.want)
			}
			// measureQueue runs the probe again, its blocker longer, on this error only.
			if retried := errors.Is(err, errNotAhead); retried != (c.name == "host behind") {
				t.Errorf("errors.Is(%v, errNotAhead) = %v", err, retried)
			}
		})
	}
}

func TestWaitPower(t *testing.T) {
	// 1000 back-to-back kernels of 2.5 µs at 0.5 mJ each (200 W).
	kernel := Energy{Ops: 1000, Seconds: 0.0025, JoulesPerOp: 0.0005}
	cases := []struct {
		name   string
		window Energy
		kernel Energy
		wantW  float64
		err    string
	}{
		// 50000 kernels in 2 s at 120 W: 240 J − 25 J over 2 s − 0.125 s.
		{"waiting", Energy{Ops: 50000, Seconds: 2, Watts: 120}, kernel, 215 / 1.875, ""},
		{"kernels fill the window", Energy{Ops: 1e6, Seconds: 2, Watts: 120}, kernel, 0, "fills"},
		{"kernels' energy exceeds", Energy{Ops: 50000, Seconds: 2, Watts: 120}, Energy{Ops: 1000, Seconds: 0.0025, JoulesPerOp: 0.01}, 0, "exceeds"},
		{"no back-to-back window", Energy{Ops: 50000, Seconds: 2, Watts: 120}, Energy{}, 0, "nothing to subtract"},
		{"empty wait window", Energy{}, kernel, 0, "nothing measured"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w, err := waitPower(20*time.Microsecond, c.window, c.kernel)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one containing %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(w.WaitPowerW-c.wantW) > 1e-9 {
				t.Errorf("WaitPowerW = %g, want %g", w.WaitPowerW, c.wantW)
			}
			if w.GapNS != 20000 || math.Abs(w.CycleNS-40000) > 1e-6 || math.Abs(w.KernelJoules-25) > 1e-9 ||
				math.Abs(w.KernelSeconds-0.125) > 1e-12 || math.Abs(w.WaitSeconds-1.875) > 1e-12 {
				t.Errorf("window %+v", w)
			}
		})
	}
}

func TestHostProbeOptions(t *testing.T) {
	o, err := HostProbeOptions{}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if o.Rounds != DefaultHostRounds || o.IdleGap != DefaultHostIdleGap || o.WakeKernel != DefaultHostWakeKernel ||
		o.QueueKernels != DefaultHostQueueKernels || o.WaitKernel != DefaultHostWaitKernel || len(o.Gaps) != 1 ||
		o.Gaps[0] != DefaultHostGap || o.Ticks != DefaultHostTicks || o.IdleTicks != DefaultHostIdleTicks || o.Warmup != DefaultHostWarmup {
		t.Errorf("defaults %+v", o)
	}
	kept, err := HostProbeOptions{Rounds: 7, Gaps: []time.Duration{5 * time.Microsecond, time.Millisecond}}.withDefaults()
	if err != nil || kept.Rounds != 7 || len(kept.Gaps) != 2 {
		t.Errorf("set fields not kept: %+v %v", kept, err)
	}
	bad := []struct {
		o    HostProbeOptions
		want string
	}{
		{HostProbeOptions{Rounds: 2}, "Rounds"},
		{HostProbeOptions{QueueKernels: -1}, "QueueKernels"},
		{HostProbeOptions{Ticks: -3}, "Ticks"},
		{HostProbeOptions{IdleTicks: -1}, "IdleTicks"},
		{HostProbeOptions{WakeKernel: -time.Microsecond}, "WakeKernel"},
		{HostProbeOptions{Gaps: []time.Duration{time.Microsecond, 0}}, "Gaps[1]"},
	}
	for _, b := range bad {
		if _, err := b.o.withDefaults(); err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%+v: error %v, want one naming %s", b.o, err, b.want)
		}
	}
}

func TestSpreadOf(t *testing.T) {
	cases := []struct {
		v    []float64
		want Spread
	}{
		{nil, Spread{}},
		{[]float64{7}, Spread{N: 1, MedianNS: 7, P10NS: 7, P90NS: 7, MinNS: 7, MaxNS: 7}},
		{[]float64{10, 0, 5}, Spread{N: 3, MedianNS: 5, P10NS: 1, P90NS: 9, MinNS: 0, MaxNS: 10}},
		{[]float64{4, 1, 3, 2}, Spread{N: 4, MedianNS: 2.5, P10NS: 1.3, P90NS: 3.7, MinNS: 1, MaxNS: 4}},
	}
	for _, c := range cases {
		got := spreadOf(c.v)
		if got.N != c.want.N || math.Abs(got.MedianNS-c.want.MedianNS) > 1e-9 || math.Abs(got.P10NS-c.want.P10NS) > 1e-9 ||
			math.Abs(got.P90NS-c.want.P90NS) > 1e-9 || got.MinNS != c.want.MinNS || got.MaxNS != c.want.MaxNS {
			t.Errorf("spreadOf(%v) = %+v, want %+v", c.v, got, c.want)
		}
	}
}

// The graph launch's line goes through the two sizes' medians, never
// below the smallest, and says nothing without a measurement.
func TestGraphLaunchCost(t *testing.T) {
	g := GraphLaunch{Nodes: []int{1, 256}, Spreads: []Spread{{MedianNS: 2500}, {MedianNS: 5050}}}
	g.fit()
	for _, tc := range []struct {
		n    int
		want int64
	}{{1, 2500}, {256, 5050}, {128, 3770}, {0, 2500}, {1024, 12730}} {
		if got := g.CostNS(tc.n); got != tc.want {
			t.Errorf("CostNS(%d) = %d, want %d (base %g, per node %g)", tc.n, got, tc.want, g.BaseNS, g.PerNodeNS)
		}
	}
	if (GraphLaunch{}).CostNS(10) != 0 {
		t.Error("no measurement, a cost")
	}
	flat := GraphLaunch{Nodes: []int{1, 256}, Spreads: []Spread{{MedianNS: 3000}, {MedianNS: 2900}}}
	flat.fit()
	if flat.PerNodeNS != 0 || flat.CostNS(256) != 3000 {
		t.Errorf("a larger graph launched faster: per node %g, cost %d", flat.PerNodeNS, flat.CostNS(256))
	}
}
