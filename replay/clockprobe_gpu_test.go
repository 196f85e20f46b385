package replay

import (
	"testing"
	"time"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/signatures"
	"github.com/kreplay/kreplay/tier3"
)

// spinSource keeps every thread busy for a number of SM cycles.
const spinSource = `
extern "C" __global__ void kr_spin(long long cycles, unsigned long long* sink) {
	long long start, now;
	asm volatile("mov.u64 %0, %%clock64;" : "=l"(start));
	now = start;
	while (now - start < cycles) {
		asm volatile("mov.u64 %0, %%clock64;" : "=l"(now));
	}
	if (now == 42) *sink = (unsigned long long)now;
}
`

// The clock probe around kernels that spin for a known number of cycles
// measures a plausible SM clock over a window that holds them all; run
// again on the same device with nothing between start and stop, it
// finishes and refuses the too-short window (or a timer that did not
// tick within it).
func TestGPUClockProbe(t *testing.T) {
	d := openGPU(t)
	const cycles, launches = 4_000_000, 3
	var busy, idle clockReading
	var idleErr error
	err := d.Do(func() error {
		comp, err := d.compiler()
		if err != nil {
			return err
		}
		fn, err := comp.Function(tier3.Source{Name: "kr_spin.cu", Code: spinSource}, "kr_spin")
		if err != nil {
			return err
		}
		sink, err := cuda.MemAlloc(8)
		if err != nil {
			return err
		}
		defer sink.Free()
		busy, err = d.probeClock(func() error {
			for i := 0; i < launches; i++ {
				if err := fn.Launch([3]uint32{uint32(max(d.SMs, 1)), 1, 1}, [3]uint32{128, 1, 1}, 0, d.stream, int64(cycles), sink); err != nil {
					return err
				}
			}
			return nil
		}, 2*time.Second)
		if err != nil {
			return err
		}
		idle, idleErr = d.probeClock(func() error { return nil }, 2*time.Second)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	mhz, err := busy.mhz()
	t.Logf("busy: %+v: %.1f MHz over %v, %d cycles (%v)", busy, mhz, busy.window(), busy.c1-busy.c0, err)
	if err != nil {
		t.Fatal(err)
	}
	if mhz < 200 || mhz > 2500 {
		t.Errorf("clock %.1f MHz, want 200 to 2500", mhz)
	}
	if busy.c1-busy.c0 < uint64(0.9*launches*cycles) {
		t.Errorf("clock64 advanced %d cycles over %d launches of %d", busy.c1-busy.c0, launches, cycles)
	}
	if idleErr != nil {
		t.Fatalf("second probe: %v", idleErr)
	}
	_, err = idle.mhz()
	t.Logf("idle: %+v: window %v (%v)", idle, idle.window(), err)
	if idle.window() >= minClockWindow || err == nil {
		t.Errorf("empty window %v: %v, want refused as too short", idle.window(), err)
	}
}

// A replay with Options.ClockProbe records the SM clock of a real
// signature of the embedded BLOOM-560M prefill, with a CUDA graph
// (rotating) and with an L2 flush before each launch (cold).
func TestGPUReplayClockProbe(t *testing.T) {
	d := openGPU(t)
	sig := lastSig(t, "h100_bloom-560m_prefill.trace.json.gz", func(s *signatures.Signature) bool {
		return s.Class == signatures.ClassGEMM && s.GEMM != nil && s.Op == "aten::addmm"
	})
	for _, c := range []CacheMode{Rotating, Cold} {
		o := quick
		o.ClockProbe = true
		r := measureIn(t, d, sig, c, o)
		var nvml float64
		if r.GPU != nil {
			nvml = r.GPU.MeanSMClockMHz
		}
		t.Logf("%s %s: probe %.1f MHz over %.2f ms (%q), NVML mean %.0f MHz; %s", c, sig.Label, r.SMClockMHz, r.ClockProbeNS/1e6, r.ClockErr, nvml, r)
		if r.ClockErr != "" || r.SMClockMHz < 200 || r.SMClockMHz > 2500 || r.ClockProbeNS < float64(minClockWindow.Nanoseconds()) {
			t.Errorf("%s: clock %.1f MHz over %.0f ns, error %q", c, r.SMClockMHz, r.ClockProbeNS, r.ClockErr)
		}
	}
	// Without the option nothing is probed.
	if r := measureIn(t, d, sig, Rotating, quick); r.SMClockMHz != 0 || r.ClockErr != "" {
		t.Errorf("unprobed: clock %.1f, error %q", r.SMClockMHz, r.ClockErr)
	}
}
