package replay

import (
	"errors"
	"testing"

	"github.com/kreplay/kreplay/energy"
	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/gputest"
)

// Each CUDA device's meter is its own GPU's, found by its PCI address: two
// devices never share a meter, whatever CUDA_VISIBLE_DEVICES renumbers.
func TestGPUMeterIsTheDevice(t *testing.T) {
	gputest.Require(t, cuda.Init)
	if err := energy.Open(); errors.Is(err, energy.ErrNoNVML) {
		gputest.Skipf(t, "no NVML: %v", err)
	} else if err == nil {
		defer energy.Close()
	}
	n, err := cuda.DeviceCount()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for i := range n {
		d, err := Open(i)
		if err != nil {
			t.Fatal(err)
		}
		if d.Meter == nil {
			t.Errorf("CUDA device %d: no meter: %v", i, d.NVMLErr)
		} else {
			if j, ok := seen[d.Meter.UUID()]; ok {
				t.Errorf("CUDA devices %d and %d metered by the same GPU %s", j, i, d.Meter.UUID())
			}
			seen[d.Meter.UUID()] = i
			t.Logf("CUDA device %d: NVML %d, %s", i, d.Meter.Index(), d.Meter.UUID())
		}
		if err := d.Close(); err != nil {
			t.Error(err)
		}
	}
}
