package energy

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kreplay/kreplay/internal/gputest"
)

// The tests in this file need an NVIDIA GPU with NVML. Without NVML they
// skip, unless KREPLAY_REQUIRE_GPU=1, which turns the skip into a failure
// (for the GPU machine, where a silent skip would hide a broken setup).
//
//	KREPLAY_REQUIRE_GPU=1 go test -race -run GPU -v ./energy/

// requireNVML opens GPU index or skips (fails with KREPLAY_REQUIRE_GPU=1)
// when NVML is absent. The device is closed when the test ends.
func requireNVML(t *testing.T, index int) *Device {
	t.Helper()
	d, err := OpenDevice(index)
	if errors.Is(err, ErrNoNVML) {
		gputest.Require(t, func() error { return err })
	}
	if err != nil {
		t.Fatalf("OpenDevice(%d): %v", index, err)
	}
	t.Cleanup(func() {
		if err := d.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return d
}

func TestGPUOpen(t *testing.T) {
	d := requireNVML(t, 0)
	t.Logf("%v, driver %s", d, d.DriverVersion())
	if d.Name() == "" || !strings.HasPrefix(d.UUID(), "GPU-") || d.DriverVersion() == "" {
		t.Errorf("name %q uuid %q driver %q", d.Name(), d.UUID(), d.DriverVersion())
	}
	if v, err := DriverVersion(); err != nil || v != d.DriverVersion() {
		t.Errorf("DriverVersion() = %q, %v", v, err)
	}
	n, err := DeviceCount()
	if err != nil || n < 1 {
		t.Fatalf("DeviceCount = %d, %v", n, err)
	}
	limit, err := d.PowerLimit()
	if err != nil || limit < 50 || limit > 1500 {
		t.Errorf("PowerLimit = %.1f W, %v", limit, err)
	}
	t.Logf("%d GPUs, power limit %.0f W", n, limit)

	// Reference counting: a second handle outlives closing the first, and
	// every GPU can be open at once.
	other, err := OpenDevice(0)
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Close(); err != nil {
		t.Fatal(err)
	}
	if err := other.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := other.State(); !errors.Is(err, ErrClosed) {
		t.Errorf("State after Close: %v", err)
	}
	if _, err := d.State(); err != nil {
		t.Errorf("State with the other handle closed: %v", err)
	}
	for i := 1; i < n; i++ {
		requireNVML(t, i)
	}
}

func TestGPUState(t *testing.T) {
	d := requireNVML(t, 0)
	s, err := d.State()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("state: %v", s)
	if s.SMClockMHz == 0 || s.MemClockMHz == 0 {
		t.Errorf("clocks SM %d mem %d MHz", s.SMClockMHz, s.MemClockMHz)
	}
	if s.PowerSource == PowerUnknown || s.PowerW <= 10 || s.PowerW >= 1000 {
		t.Errorf("power %.1f W (%v), want 10-1000 W", s.PowerW, s.PowerSource)
	}
	if s.TemperatureC == 0 || s.TemperatureC > 110 {
		t.Errorf("temperature %d C", s.TemperatureC)
	}
	if w, src, err := d.Power(); err != nil || w <= 10 || w >= 1000 || src != s.PowerSource {
		t.Errorf("Power = %.1f W %v, %v", w, src, err)
	}
}

func TestGPUCounterAdvances(t *testing.T) {
	d := requireNVML(t, 0)
	first, err := d.EnergyCounter()
	if errors.Is(err, ErrNotSupported) {
		t.Skipf("no total-energy counter on %v: %v", d, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for time.Since(start) < 300*time.Millisecond {
		v, err := d.EnergyCounter()
		if err != nil {
			t.Fatal(err)
		}
		if v < first {
			t.Fatalf("counter went back: %d after %d mJ", v, first)
		}
		if v > first {
			t.Logf("counter advanced %d mJ after %v", v-first, time.Since(start).Round(time.Microsecond))
			return
		}
		time.Sleep(500 * time.Microsecond)
	}
	t.Errorf("energy counter stuck at %d mJ for 300 ms", first)
}

func TestGPUIdlePower(t *testing.T) {
	d := requireNVML(t, 0)
	r, err := d.IdlePower(context.Background(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("idle: %v; states %v", r, r.States)
	if r.Watts < 20 || r.Watts > 300 {
		t.Errorf("idle power %.1f W, want 20-300 W", r.Watts)
	}
	if r.Method == MethodEnergyCounter {
		if r.Seconds < 1 || r.Ticks < 5 {
			t.Errorf("window %.3f s, %d ticks", r.Seconds, r.Ticks)
		}
		// The window's length is known to within a poll and an NVML call;
		// that must stay a small part of the window.
		if r.TimeUncertainty.Seconds() > 0.02*r.Seconds {
			t.Errorf("TimeUncertainty %v of a %.3f s window", r.TimeUncertainty, r.Seconds)
		}
	}
}

// TestGPUMeasureWindow runs the window machinery on the real counter with a
// CPU-only work function (the GPU stays idle).
func TestGPUMeasureWindow(t *testing.T) {
	d := requireNVML(t, 0)
	work := func() error { time.Sleep(2 * time.Millisecond); return nil }
	r, err := d.Measure(context.Background(), work, MeasureOptions{MinTicks: 5})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%v; states %v", r, r.States)
	if r.Method == MethodEnergyCounter && r.Ticks != 5 {
		t.Errorf("Ticks = %d, want 5", r.Ticks)
	}
	if r.Watts < 20 || r.Watts > 300 {
		t.Errorf("power %.1f W with an idle GPU", r.Watts)
	}
	if r.Calls < 10 || r.SecondsPerCall < 0.002 || r.SecondsPerCall > 0.02 {
		t.Errorf("Calls %.2f SecondsPerCall %.4f", r.Calls, r.SecondsPerCall)
	}
	if r.States.Samples == 0 {
		t.Error("no states sampled")
	}
}

func TestGPUSampler(t *testing.T) {
	d := requireNVML(t, 0)
	n, err := DeviceCount()
	if err != nil {
		t.Fatal(err)
	}
	devs := []*Device{d}
	for i := 1; i < n; i++ {
		devs = append(devs, requireNVML(t, i))
	}
	const (
		interval = DefaultSampleInterval
		length   = 500 * time.Millisecond
	)
	s, err := StartSampler(interval, devs...)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(length)
	samples, err := s.Stop()
	if err != nil {
		t.Fatal(err)
	}
	for _, dev := range devs {
		states := DeviceStates(samples, dev.Index())
		sum := Summarize(states)
		t.Logf("GPU %d: %v", dev.Index(), sum)
		want := int(length / interval)
		if len(states) < want/2 || len(states) > want+2 {
			t.Errorf("GPU %d: %d samples in %v at %v, want about %d", dev.Index(), len(states), length, interval, want)
			continue
		}
		mean := sum.Span / time.Duration(len(states)-1)
		if mean < interval*8/10 || mean > interval*2 {
			t.Errorf("GPU %d: mean sample spacing %v, want about %v", dev.Index(), mean, interval)
		}
		if sum.MinPowerW <= 10 || sum.MaxPowerW >= 1000 || sum.MinSMClockMHz == 0 {
			t.Errorf("GPU %d: implausible samples %v", dev.Index(), sum)
		}
	}
}

// On a GPU: the maximum clocks and the bus width are there and in range,
// and the DRAM bandwidth from them is a data-center GPU's (100 GB/s to
// 20 TB/s).
func TestGPUHardware(t *testing.T) {
	d := requireNVML(t, 0)
	h, err := d.Hardware()
	t.Logf("%+v: DRAM %.1f GB/s", h, h.DRAMBytesPerSecond()/1e9)
	if err != nil {
		t.Fatalf("Hardware: %v", err)
	}
	if h.MaxSMClockMHz < 300 || h.MaxSMClockMHz > 5000 || h.MaxMemClockMHz < 300 || h.MemoryBusWidthBits < 64 {
		t.Errorf("hardware %+v out of range", h)
	}
	if bw := h.DRAMBytesPerSecond(); bw < 100e9 || bw > 20e12 {
		t.Errorf("DRAM %.1f GB/s: want 100 to 20000", bw/1e9)
	}
}
