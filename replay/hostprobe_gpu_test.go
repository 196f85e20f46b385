package replay

import (
	"context"
	"testing"
	"time"

	"github.com/kreplay/kreplay/internal/cupti"
	"github.com/kreplay/kreplay/internal/gputest"
)

// The host probe's constants, measured on the GPU with the default
// options, lie in the ranges a current GPU and driver give (H100: a
// launch reaches the GPU in a few µs, queued kernels follow each other
// within about a µs, a synchronize returns a few µs after the GPU is
// done), and the powers are ordered: idle below the power waiting
// between short kernels, below the power limit.
func TestGPUMeasureHost(t *testing.T) {
	d := openGPU(t)
	gputest.Require(t, cupti.Load)
	if d.Meter == nil {
		gputest.Skipf(t, "no NVML: %v", d.NVMLErr)
	}
	start := time.Now()
	p, err := MeasureHost(context.Background(), d, HostProbeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	t.Logf("%s, probe took %v", p.Device, took.Round(time.Millisecond))
	t.Logf("submit %.2f µs (%+v), launch call %+v", p.SubmitNS/1e3, p.Submit, p.Launch)
	t.Logf("wake %.2f µs (%+v), copy wake %.2f µs (%+v), late rounds %d", p.WakeNS/1e3, p.Wake, p.CopyWakeNS/1e3, p.CopyWake, p.Late)
	t.Logf("round trip %+v untraced, %+v traced", p.RoundTrip, p.TracedRoundTrip)
	q := p.Queue
	t.Logf("queue gap %.0f ns: %d of %d queued behind a %.0f µs blocker, gaps %+v, kernels %+v, launch calls %+v",
		p.QueueGapNS, q.Queued, q.Kernels, q.BlockerNS/1e3, q.Gap, q.Kernel, q.Launch)
	if k := p.Kernel; k != nil {
		t.Logf("back to back: %.0f W, %.3g J and %.0f ns per kernel, %d ticks", k.Watts, k.JoulesPerOp, k.Seconds/k.Ops*1e9, k.Ticks)
	}
	for _, w := range p.Wait {
		t.Logf("gap %.0f µs: cycle %.2f µs, window %.0f W over %.2f s (%d ticks, %.0f kernels), kernels' share %.3g J in %.3g s, waiting %.1f W",
			w.GapNS/1e3, w.CycleNS/1e3, w.Window.Watts, w.Window.Seconds, w.Window.Ticks, w.Window.Ops, w.KernelJoules, w.KernelSeconds, w.WaitPowerW)
	}
	t.Logf("wait power %.1f W, idle %.1f W, limit %.0f W", p.WaitPowerW, p.IdleW, p.PowerLimitW)
	t.Logf("graph launch: %v nodes, %+v; %.0f ns + %.1f ns a node", p.Graph.Nodes, p.Graph.Spreads, p.Graph.BaseNS, p.Graph.PerNodeNS)
	if len(p.Graph.Spreads) != len(graphProbeNodes) || p.Graph.CostNS(1) <= 0 {
		t.Errorf("graph launch not measured: %+v", p.Graph)
	}

	ranges := []struct {
		name           string
		got, low, high float64
	}{
		{"SubmitNS", p.SubmitNS, 300, 50_000},
		{"QueueGapNS", p.QueueGapNS, 0, 5_000},
		{"WakeNS", p.WakeNS, 0, 50_000},
		{"CopyWakeNS", p.CopyWakeNS, 0, 50_000},
		{"Launch.MedianNS", p.Launch.MedianNS, 0, 50_000},
		{"Graph.CostNS(256)", float64(p.Graph.CostNS(256)), 500, 500_000},
		// Each round holds a kernel of WakeKernel (20 µs; %globaltimer may
		// end it up to 1 µs early).
		{"RoundTrip.MedianNS", p.RoundTrip.MedianNS, 19_000, 200_000},
		{"TracedRoundTrip.MedianNS", p.TracedRoundTrip.MedianNS, 19_000, 200_000},
	}
	for _, r := range ranges {
		if !(r.got > r.low && r.got < r.high) {
			t.Errorf("%s = %.0f, outside (%.0f, %.0f)", r.name, r.got, r.low, r.high)
		}
	}
	if p.Wake.N < p.Options.Rounds/2 || p.CopyWake.N < p.Options.Rounds/2 {
		t.Errorf("only %d and %d of %d rounds had the host waiting", p.Wake.N, p.CopyWake.N, p.Options.Rounds)
	}
	if q.Queued < q.Kernels/2 {
		t.Errorf("only %d of %d kernels queued behind the blocker", q.Queued, q.Kernels)
	}
	if len(p.Wait) != 1 || p.Idle == nil || p.Kernel == nil {
		t.Fatalf("power windows missing: %d wait, idle %v, back to back %v", len(p.Wait), p.Idle, p.Kernel)
	}
	if w := p.Wait[0]; w.CycleNS < w.GapNS || w.Window.Ticks < p.Options.Ticks {
		t.Errorf("wait window of %.0f ns cycles for a %.0f ns gap, %d ticks (want at least %d)",
			w.CycleNS, w.GapNS, w.Window.Ticks, p.Options.Ticks)
	}
	if !(p.IdleW > 0 && p.IdleW < p.WaitPowerW) {
		t.Errorf("idle %.1f W not below the wait power %.1f W", p.IdleW, p.WaitPowerW)
	}
	if p.PowerLimitW > 0 && p.WaitPowerW >= p.PowerLimitW {
		t.Errorf("wait power %.1f W at or above the power limit %.0f W", p.WaitPowerW, p.PowerLimitW)
	}
	if took > 20*time.Second {
		t.Errorf("the probe took %v, over the 20 s its defaults should stay well under", took)
	}
}
