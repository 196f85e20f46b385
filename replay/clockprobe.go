package replay

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/tier3"
)

// The clock probe measures the SM clock a replay ran at, on the GPU
// itself: NVML's clock readings can stand far from it, by hundreds of MHz
// during heavy GEMM replays under the power cap against Nsight Compute's
// sm__cycles_elapsed.avg.per_second (see
// results/h100/roofline-whatif/README.md). One warp of
// kr_clock_probe, launched on a stream of its own before the measured
// launches, waits for a start flag, reads %globaltimer and clock64 when
// it sees it, polls (nanosleep between polls) until a stop flag, and
// reads both again: the effective clock is Δclock64 over Δglobaltimer. The
// one-thread kernels kr_clock_start and kr_clock_stop set the flags on the
// device's stream, before and after the measured launches; kr_clock_start
// first waits for the probe to be running, so that the measured launches
// cannot take the SMs before it. Every wait is bounded on %globaltimer:
// the probe can never hang a run, and says which wait ran out.
const clockProbeSource = `
static __device__ __forceinline__ unsigned long long kr_now() {
	unsigned long long t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

static __device__ __forceinline__ long long kr_cycles() {
	long long c;
	asm volatile("mov.u64 %0, %%clock64;" : "=l"(c));
	return c;
}

static __device__ __forceinline__ void kr_pause() {
#if __CUDA_ARCH__ >= 700
	asm volatile("nanosleep.u32 %0;" :: "r"(200u));
#endif
}

// f holds the slots named slot* in replay/clockprobe.go.
extern "C" __global__ void kr_clock_probe(volatile unsigned long long* f, unsigned long long timeout) {
	if (threadIdx.x != 0) return;
	const unsigned long long begin = kr_now();
	f[2] = 1; // ready
	__threadfence();
	while (f[0] == 0) {
		if (kr_now() - begin > timeout) { f[3] = 2; __threadfence(); return; }
		kr_pause();
	}
	const unsigned long long t0 = kr_now();
	const long long c0 = kr_cycles();
	while (f[1] == 0) {
		if (kr_now() - begin > timeout) { f[3] = 3; __threadfence(); return; }
		kr_pause();
	}
	const unsigned long long t1 = kr_now();
	const long long c1 = kr_cycles();
	f[4] = t0;
	f[5] = (unsigned long long)c0;
	f[6] = t1;
	f[7] = (unsigned long long)c1;
	__threadfence();
	f[3] = 1;
	__threadfence();
}

extern "C" __global__ void kr_clock_start(volatile unsigned long long* f, unsigned long long timeout) {
	const unsigned long long begin = kr_now();
	unsigned long long seen = 1;
	while (f[2] == 0) {
		if (kr_now() - begin > timeout) { seen = 2; break; }
		kr_pause();
	}
	f[8] = seen;
	__threadfence();
	f[0] = 1;
	__threadfence();
}

extern "C" __global__ void kr_clock_stop(volatile unsigned long long* f) {
	__threadfence();
	f[1] = 1;
	__threadfence();
}
`

// The slots of the probe's flag buffer, 64 bits each, as the kernels of
// clockProbeSource index them.
const (
	slotStart     = iota // set by kr_clock_start
	slotStop             // set by kr_clock_stop
	slotReady            // set by kr_clock_probe once it runs
	slotStatus           // kr_clock_probe's outcome: probeOK, probeNoStart, probeNoStop
	slotT0               // %globaltimer (ns) when the probe saw start
	slotC0               // clock64 then
	slotT1               // %globaltimer when it saw stop
	slotC1               // clock64 then
	slotHandshake        // kr_clock_start: 1 saw the probe ready, 2 gave up waiting
	clockSlots
)

// The probe's outcomes (slotStatus).
const (
	probeOK      = 1
	probeNoStart = 2
	probeNoStop  = 3
)

const (
	// clockProbeWindow is how long the launches under the probe should
	// last: %globaltimer may tick as coarsely as 1 µs, well under 0.1%
	// of it.
	clockProbeWindow = 2 * time.Millisecond
	// minClockWindow is the shortest window the probe's clock is trusted
	// over.
	minClockWindow = 500 * time.Microsecond
	// clockReadyTimeout bounds kr_clock_start's wait for the probe.
	clockReadyTimeout = time.Second
	// maxProbeBatches caps the batches run under the probe.
	maxProbeBatches = 10000
)

// clockProbeTimeout bounds the probe's run for launches expected to last
// expected: 2 s beyond ten times that, at most a minute.
func clockProbeTimeout(expected time.Duration) time.Duration {
	return min(2*time.Second+10*max(expected, 0), time.Minute)
}

// clockReading is what the probe read at start and stop: %globaltimer in
// nanoseconds and clock64 in SM cycles.
type clockReading struct {
	t0, c0, t1, c1 uint64
}

// window is the time between the two readings.
func (c clockReading) window() time.Duration {
	return time.Duration(int64(c.t1 - c.t0))
}

// mhz is the effective SM clock over the readings, Δclock64 /
// Δglobaltimer(ns) x 1000, or an error when the window is not one to
// trust: shorter than minClockWindow, a clock that did not advance, or a
// rate outside 1 to 10000 MHz.
func (c clockReading) mhz() (float64, error) {
	if c.t1 <= c.t0 {
		return 0, fmt.Errorf("clock probe: %%globaltimer did not advance (%d to %d ns)", c.t0, c.t1)
	}
	if c.c1 <= c.c0 {
		return 0, fmt.Errorf("clock probe: clock64 did not advance (%d to %d)", c.c0, c.c1)
	}
	if w := c.window(); w < minClockWindow {
		return 0, fmt.Errorf("clock probe: window of %v, under the %v it needs", w, minClockWindow)
	}
	mhz := float64(c.c1-c.c0) / float64(c.t1-c.t0) * 1000
	if !(mhz >= 1 && mhz <= 10000) {
		return 0, fmt.Errorf("clock probe: implausible %.4g MHz (%d cycles in %d ns)", mhz, c.c1-c.c0, c.t1-c.t0)
	}
	return mhz, nil
}

// decodeClock reads the probe's flag buffer after the probe and both
// flag kernels finished; timeout is the one the probe ran with.
func decodeClock(s [clockSlots]uint64, timeout time.Duration) (clockReading, error) {
	switch {
	case s[slotHandshake] == 0:
		return clockReading{}, errors.New("clock probe: the start kernel did not run")
	case s[slotHandshake] == 2:
		return clockReading{}, fmt.Errorf("clock probe: the probe was not running %v after its launch; the replay ran without it", clockReadyTimeout)
	}
	switch s[slotStatus] {
	case probeOK:
	case probeNoStart:
		return clockReading{}, fmt.Errorf("clock probe: timed out after %v waiting for the start flag", timeout)
	case probeNoStop:
		return clockReading{}, fmt.Errorf("clock probe: timed out after %v waiting for the stop flag (the probed launches ran longer)", timeout)
	default:
		return clockReading{}, fmt.Errorf("clock probe: did not finish (status %d)", s[slotStatus])
	}
	return clockReading{t0: s[slotT0], c0: s[slotC0], t1: s[slotT1], c1: s[slotC1]}, nil
}

// clockProbe holds the probe's kernels, its flag buffer and its stream.
type clockProbe struct {
	probe, start, stop *cuda.Function
	flags              cuda.DevicePtr
	stream             *cuda.Stream
}

func (p *clockProbe) close() error {
	return errors.Join(p.flags.Free(), p.stream.Destroy())
}

// setupProbe compiles the probe's kernels and allocates its buffer and
// stream, once per device. Call inside Do.
func (d *Device) setupProbe() (*clockProbe, error) {
	if d.probe != nil {
		return d.probe, nil
	}
	comp, err := d.compiler()
	if err != nil {
		return nil, err
	}
	p := &clockProbe{}
	src := tier3.Source{Name: "kr_clock_probe.cu", Code: clockProbeSource}
	for _, f := range []struct {
		dst  **cuda.Function
		name string
	}{{&p.probe, "kr_clock_probe"}, {&p.start, "kr_clock_start"}, {&p.stop, "kr_clock_stop"}} {
		if *f.dst, err = comp.Function(src, f.name); err != nil {
			return nil, err
		}
	}
	if p.flags, err = cuda.MemAlloc(8 * clockSlots); err != nil {
		return nil, err
	}
	if p.stream, err = cuda.NewStream(); err != nil {
		p.flags.Free()
		return nil, err
	}
	d.probe = p
	return p, nil
}

// probeClock runs enqueue, which enqueues launches on the device's stream,
// under the clock probe, and returns what the probe read. The probe's run
// is bounded by timeout: launches that last longer end it with an error.
// enqueue must not synchronize the context (the probe would then wait out
// its timeout). Call inside Do, with the device's stream idle.
func (d *Device) probeClock(enqueue func() error, timeout time.Duration) (clockReading, error) {
	p, err := d.setupProbe()
	if err != nil {
		return clockReading{}, err
	}
	if err := cuda.MemsetD8Async(p.flags, 0, 8*clockSlots, d.stream); err != nil {
		return clockReading{}, err
	}
	if err := d.stream.Synchronize(); err != nil {
		return clockReading{}, err
	}
	one := [3]uint32{1, 1, 1}
	if err := p.probe.Launch(one, [3]uint32{32, 1, 1}, 0, p.stream, p.flags, uint64(timeout.Nanoseconds())); err != nil {
		return clockReading{}, fmt.Errorf("clock probe: %w", err)
	}
	// From here the stop flag must be set whatever fails, or the probe
	// waits out its timeout.
	err = p.start.Launch(one, one, 0, d.stream, p.flags, uint64(clockReadyTimeout.Nanoseconds()))
	if err == nil {
		err = enqueue()
	}
	errs := []error{err, p.stop.Launch(one, one, 0, d.stream, p.flags), d.stream.Synchronize(), p.stream.Synchronize()}
	if err := errors.Join(errs...); err != nil {
		return clockReading{}, err
	}
	var raw [8 * clockSlots]byte
	if err := cuda.CopyDtoH(raw[:], p.flags, p.stream); err != nil {
		return clockReading{}, err
	}
	var s [clockSlots]uint64
	for i := range s {
		s[i] = binary.LittleEndian.Uint64(raw[8*i:])
	}
	return decodeClock(s, timeout)
}

// probeBatches returns how many batches of batch launches, medianNS per
// launch by the event time, last clockProbeWindow (one without a time, at
// most maxProbeBatches), and how long they are expected to take.
func probeBatches(medianNS float64, batch int) (int, time.Duration) {
	per := medianNS * float64(max(batch, 1)) // ns per batch
	if !(per > 0) || math.IsInf(per, 0) {
		return 1, 0
	}
	n := int(min(maxProbeBatches, max(1, math.Ceil(float64(clockProbeWindow.Nanoseconds())/per))))
	return n, time.Duration(float64(n) * per)
}

// probeReplayClock runs the timer's batches under the clock probe, as
// the timed samples ran them (an L2 flush before each when flush is
// set), enough of them to last clockProbeWindow by the event time
// measured, and sets r.SMClockMHz and r.ClockProbeNS, or r.ClockErr.
// Call inside Do, after the timed samples.
func (d *Device) probeReplayClock(t *timer, batch int, flush bool, r *Result) {
	n, expected := probeBatches(r.MedianNS, batch)
	c, err := d.probeClock(func() error {
		for i := 0; i < n; i++ {
			if err := t.enqueueSample(batch, flush); err != nil {
				return err
			}
		}
		return nil
	}, clockProbeTimeout(expected))
	var mhz float64
	if err == nil {
		mhz, err = c.mhz()
	}
	if err != nil {
		r.ClockErr = err.Error()
		return
	}
	r.SMClockMHz, r.ClockProbeNS = mhz, float64(c.window().Nanoseconds())
}
