package energy

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// These tests run Measure's goroutines against simGPU, a counter that
// publishes every 10 ms, to check the loop, the poller and their shutdown
// (with -race). The arithmetic itself is checked exactly in window_test.go.

func TestMeasureSim(t *testing.T) {
	noLeak(t)
	g := &simGPU{start: time.Now(), period: 10 * time.Millisecond, watts: 400}
	var n atomic.Int64
	work := func() error {
		n.Add(1)
		time.Sleep(time.Millisecond)
		return nil
	}
	r, err := measure(context.Background(), g, work, MeasureOptions{MinTicks: 20, Warmup: 15 * time.Millisecond, SampleInterval: 2 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(r)
	if r.Method != MethodEnergyCounter || r.Ticks != 20 {
		t.Errorf("Method %v Ticks %d", r.Method, r.Ticks)
	}
	// Timing noise of a loaded machine only; the simulated power is exact.
	if math.Abs(r.Watts-400)/400 > 0.15 {
		t.Errorf("Watts = %.1f, want about 400", r.Watts)
	}
	if r.Calls <= 0 || r.Calls > float64(n.Load()) || r.CompleteCalls > int(r.Calls) {
		t.Errorf("Calls %.2f CompleteCalls %d of %d calls", r.Calls, r.CompleteCalls, n.Load())
	}
	if math.Abs(r.JoulesPerCall*r.Calls-r.Joules) > 1e-9 || math.Abs(r.SecondsPerCall*r.Calls-r.Seconds) > 1e-9 {
		t.Errorf("per-call values inconsistent: %+v", r)
	}
	if r.TimeUncertainty <= 0 || r.TimeUncertainty > 20*time.Millisecond {
		t.Errorf("TimeUncertainty = %v", r.TimeUncertainty)
	}
	if r.States.Samples == 0 || r.States.MaxSMClockMHz != 1980 {
		t.Errorf("States = %+v", r.States)
	}
	if s := r.String(); !strings.Contains(s, "energy-counter") {
		t.Errorf("String = %q", s)
	}
}

func TestMeasureIdleSim(t *testing.T) {
	noLeak(t)
	g := &simGPU{start: time.Now(), period: 10 * time.Millisecond, watts: 90}
	r, err := measure(context.Background(), g, nil, MeasureOptions{MinTicks: 1, MinDuration: 50 * time.Millisecond, SampleInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	if r.Ticks < 5 || r.Calls != 0 || r.States.Samples != 0 {
		t.Errorf("idle reading %+v", r)
	}
	if math.Abs(r.Watts-90)/90 > 0.25 {
		t.Errorf("Watts = %.1f, want about 90", r.Watts)
	}
}

func TestMeasurePowerFallbackSim(t *testing.T) {
	noLeak(t)
	g := &simGPU{noCounter: true, watts: 250}
	r, err := measure(context.Background(), g, func() error { time.Sleep(time.Millisecond); return nil },
		MeasureOptions{MinTicks: 1, SampleInterval: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if r.Method != MethodPowerIntegral || r.PowerSource != PowerInstant {
		t.Errorf("Method %v PowerSource %v", r.Method, r.PowerSource)
	}
	if r.Seconds < NominalTick.Seconds() || math.Abs(r.Watts-250) > 1e-6 || r.Calls <= 0 || r.Ticks < 2 {
		t.Errorf("fallback reading %+v", r)
	}
}

func TestMeasureErrors(t *testing.T) {
	noLeak(t)
	sim := func() *simGPU { return &simGPU{start: time.Now(), period: 10 * time.Millisecond, watts: 300} }
	boom := errors.New("boom")

	t.Run("work error", func(t *testing.T) {
		calls := 0
		_, err := measure(context.Background(), sim(), func() error {
			calls++
			if calls == 3 {
				return boom
			}
			return nil
		}, MeasureOptions{MinTicks: 5})
		if !errors.Is(err, boom) {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("context", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
		defer cancel()
		_, err := measure(ctx, sim(), func() error { time.Sleep(time.Millisecond); return nil }, MeasureOptions{})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("frozen counter hits MaxDuration", func(t *testing.T) {
		g := sim()
		g.frozen = true
		_, err := measure(context.Background(), g, nil, MeasureOptions{MinTicks: 1, MaxDuration: 30 * time.Millisecond})
		if err == nil || !strings.Contains(err.Error(), "MaxDuration") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("nil work", func(t *testing.T) {
		if _, err := (&Device{}).Measure(context.Background(), nil, MeasureOptions{}); err == nil {
			t.Error("no error")
		}
	})
	t.Run("closed device", func(t *testing.T) {
		d := &Device{closed: true}
		if _, err := d.IdlePower(context.Background(), 0); !errors.Is(err, ErrClosed) {
			t.Errorf("err = %v", err)
		}
		if _, err := d.State(); !errors.Is(err, ErrClosed) {
			t.Errorf("State err = %v", err)
		}
	})
}

func TestMeasureOptionsDefaults(t *testing.T) {
	o := MeasureOptions{}.withDefaults()
	want := MeasureOptions{MinTicks: DefaultMinTicks, MaxDuration: DefaultMaxDuration,
		PollInterval: DefaultPollInterval, SampleInterval: DefaultSampleInterval}
	if o != want {
		t.Errorf("defaults = %+v, want %+v", o, want)
	}
	// One average tick must be under 1% of the energy by default.
	if share := 1 / float64(DefaultMinTicks); share >= 0.01 {
		t.Errorf("default tick share %v not under 1%%", share)
	}
	if o := (MeasureOptions{SampleInterval: -1}).withDefaults(); o.SampleInterval != -1 {
		t.Errorf("negative SampleInterval not kept: %v", o.SampleInterval)
	}
}

// Two GPUs with different powers and tick periods measured together:
// each reading has its own window, ticks and power, and both attribute
// the same work calls to their windows.
func TestMeasureDevicesSim(t *testing.T) {
	noLeak(t)
	now := time.Now()
	work := func() error { time.Sleep(time.Millisecond); return nil }
	tests := []struct {
		name    string
		gpus    []*simGPU
		opts    MeasureOptions
		method  Method
		wantErr string
	}{
		{name: "counters", gpus: []*simGPU{
			{index: 0, start: now, period: 10 * time.Millisecond, watts: 400},
			{index: 1, start: now, period: 7 * time.Millisecond, watts: 150},
		}, opts: MeasureOptions{MinTicks: 15, Warmup: 10 * time.Millisecond, SampleInterval: 2 * time.Millisecond}, method: MethodEnergyCounter},
		{name: "one without a counter", gpus: []*simGPU{
			{index: 0, start: now, period: 10 * time.Millisecond, watts: 400},
			{index: 1, noCounter: true, watts: 150},
		}, opts: MeasureOptions{MinTicks: 1, SampleInterval: 5 * time.Millisecond}, method: MethodPowerIntegral},
		{name: "one frozen", gpus: []*simGPU{
			{index: 0, start: now, period: 10 * time.Millisecond, watts: 400},
			{index: 3, start: now, frozen: true},
		}, opts: MeasureOptions{MinTicks: 2, MaxDuration: 60 * time.Millisecond}, wantErr: "GPU 3: energy: window not closed within MaxDuration"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srcs := make([]meterSource, len(tt.gpus))
			for i, g := range tt.gpus {
				srcs[i] = g
			}
			rs, err := measureAll(context.Background(), srcs, work, tt.opts)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(rs) != len(tt.gpus) {
				t.Fatalf("%d readings for %d GPUs", len(rs), len(tt.gpus))
			}
			for i, r := range rs {
				g := tt.gpus[i]
				if r.Method != tt.method {
					t.Errorf("GPU %d: Method %v, want %v", g.index, r.Method, tt.method)
				}
				if tt.method == MethodEnergyCounter && r.Ticks != tt.opts.MinTicks {
					t.Errorf("GPU %d: Ticks %d, want %d", g.index, r.Ticks, tt.opts.MinTicks)
				}
				if math.Abs(r.Watts-g.watts)/g.watts > 0.2 {
					t.Errorf("GPU %d: Watts = %.1f, want about %.0f", g.index, r.Watts, g.watts)
				}
				if r.Calls <= 0 || r.States.Samples == 0 {
					t.Errorf("GPU %d: Calls %.2f, %d states", g.index, r.Calls, r.States.Samples)
				}
			}
		})
	}
}

func TestMeasureDevicesArgs(t *testing.T) {
	tests := []struct {
		name string
		devs []*Device
		work func() error
	}{
		{"no work", []*Device{{}}, nil},
		{"no devices", nil, func() error { return nil }},
		{"nil device", []*Device{nil}, func() error { return nil }},
	}
	for _, tt := range tests {
		if _, err := MeasureDevices(context.Background(), tt.devs, tt.work, MeasureOptions{}); err == nil {
			t.Errorf("%s: no error", tt.name)
		}
	}
}
