package replay

import (
	"testing"

	"github.com/kreplay/kreplay/internal/gputest"
	"github.com/kreplay/kreplay/signatures"
)

// On a GPU the pause follows the rule from one signature's measurement to
// the next on the same device: the first pauses, the next as
// pauseNeeded judges the first's sampled power; other work through Do
// makes the one after it pause; PauseAbove negative pauses every time and
// a negative Pause never. It logs the power that decided, for the
// calibration the default share has not had.
func TestGPUPauseFollowsPower(t *testing.T) {
	d := openMeteredGPU(t)
	limit, err := d.Meter.PowerLimit()
	if err != nil {
		gputest.Skipf(t, "no power limit: %v", err)
	}
	sig := lastSig(t, "h100_bloom-560m_prefill.trace.json.gz", func(s *signatures.Signature) bool { return s.Class == signatures.ClassElementwise })
	p, err := d.PrepareFor(sig, Warm)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	measure := func(o Options) *Result {
		t.Helper()
		r, err := d.Measure(p, o)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	first := measure(quick)
	if !first.Paused {
		t.Error("the device's first measurement did not pause")
	}
	if first.GPU == nil {
		t.Fatalf("no sampled GPU state (%s): the rule cannot skip a pause", first.SamplerErr)
	}
	t.Logf("%s: max %.0f W of the %.0f W limit, throttled %v", sig.Label, first.GPU.MaxPowerW, limit, first.Throttled)
	second := measure(quick)
	if want := pauseNeeded(first.GPU, limit, DefaultPauseAbove, false, nil); second.Paused != want {
		t.Errorf("after %s: paused %v, want %v", first.GPU, second.Paused, want)
	}
	if err := d.Do(func() error { return nil }); err != nil {
		t.Fatal(err)
	}
	if !measure(quick).Paused {
		t.Error("after other work through Do: no pause")
	}
	always := quick
	always.PauseAbove = -1
	for i := range 2 {
		if !measure(always).Paused {
			t.Errorf("PauseAbove -1: measurement %d without the pause", i+1)
		}
	}
	never := quick
	never.Pause = -1
	if measure(never).Paused {
		t.Error("Pause -1: a measurement paused")
	}
}
