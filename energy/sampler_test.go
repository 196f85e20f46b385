package energy

import (
	"errors"
	"runtime"
	"testing"
	"time"
)

// noLeak fails t if goroutines started during the test are still running
// shortly after it ends.
func noLeak(t *testing.T) {
	t.Helper()
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(2 * time.Second)
		for runtime.NumGoroutine() > before {
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<16)
				t.Errorf("goroutines leaked: %d > %d\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	})
}

func TestSamplerSim(t *testing.T) {
	noLeak(t)
	gpus := []stateReader{
		&simGPU{index: 0, watts: 100},
		&simGPU{index: 3, watts: 200},
	}
	s := startSampler(2*time.Millisecond, gpus)
	if s.Interval() != 2*time.Millisecond {
		t.Errorf("Interval = %v", s.Interval())
	}
	time.Sleep(60 * time.Millisecond)
	samples, err := s.Stop()
	if err != nil {
		t.Fatal(err)
	}
	again, err2 := s.Stop()
	if len(again) != len(samples) || err2 != nil {
		t.Errorf("second Stop differs: %d samples, %v", len(again), err2)
	}
	for i := 1; i < len(samples); i++ {
		if samples[i].Time.Before(samples[i-1].Time) {
			t.Fatalf("samples not in time order at %d", i)
		}
	}
	for _, dev := range []int{0, 3} {
		n := len(DeviceStates(samples, dev))
		// 60 ms at 2 ms: about 30; generous bounds for loaded CI machines.
		if n < 5 || n > 32 {
			t.Errorf("device %d: %d samples in 60 ms at 2 ms", dev, n)
		}
	}
	if n := len(DeviceStates(samples, 1)); n != 0 {
		t.Errorf("device 1 has %d samples", n)
	}
	if got := Summarize(DeviceStates(samples, 3)).MeanPowerW; got != 200 {
		t.Errorf("device 3 mean power %v", got)
	}
}

func TestSamplerErrors(t *testing.T) {
	noLeak(t)
	closing := &simGPU{index: 0, watts: 100, failAfter: 3}
	flaky := &simGPU{index: 1, watts: 100, failAfter: -1}
	s := startSampler(time.Millisecond, []stateReader{closing, flaky})
	time.Sleep(30 * time.Millisecond)
	samples, err := s.Stop()
	if !errors.Is(err, ErrClosed) {
		t.Errorf("err = %v, want ErrClosed from device 0", err)
	}
	if n := len(DeviceStates(samples, 0)); n != 3 {
		t.Errorf("device 0: %d samples, want 3 before it closed", n)
	}
	if n := closing.states.Load(); n != 4 {
		t.Errorf("device 0 sampled %d times after closing, want it to stop", n)
	}
	if len(DeviceStates(samples, 1)) == 0 {
		t.Errorf("flaky device has no samples")
	}
}

func TestStartSamplerArgs(t *testing.T) {
	if _, err := StartSampler(0); err == nil {
		t.Error("StartSampler() without devices: no error")
	}
	if _, err := StartSampler(0, nil); err == nil {
		t.Error("StartSampler(nil device): no error")
	}
}

// TestSamplerSamples reads the samples while the goroutines still add to
// them (the race detector checks the locking), then after Stop.
func TestSamplerSamples(t *testing.T) {
	noLeak(t)
	s := startSampler(time.Millisecond, []stateReader{&simGPU{index: 0, watts: 100}, &simGPU{index: 1, watts: 100}})
	prev := 0
	for i := 0; i < 5; i++ {
		time.Sleep(3 * time.Millisecond)
		got := s.Samples()
		if len(got) < prev {
			t.Errorf("Samples went from %d to %d", prev, len(got))
		}
		for j := 1; j < len(got); j++ {
			if got[j].Time.Before(got[j-1].Time) {
				t.Fatalf("samples not in time order at %d", j)
			}
		}
		prev = len(got)
	}
	if prev == 0 {
		t.Error("no samples while sampling")
	}
	all, err := s.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Samples(); len(got) != len(all) {
		t.Errorf("Samples after Stop: %d, Stop returned %d", len(got), len(all))
	}
}
