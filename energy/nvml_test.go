package energy

import (
	"errors"
	"testing"
)

// TestNoNVML checks that every entry point reports ErrNoNVML, without
// panicking, on a machine without NVML (this development machine and CI).
func TestNoNVML(t *testing.T) {
	if err := Open(); err == nil {
		Close()
		t.Skip("NVML is present here; this test is for machines without it")
	} else if !errors.Is(err, ErrNoNVML) {
		t.Fatalf("Open: %v, want ErrNoNVML", err)
	} else {
		t.Logf("Open: %v", err)
	}
	// The failed Open must leave nothing to close.
	if err := Close(); err == nil {
		t.Error("Close after failed Open: no error")
	}
	d, err := OpenDevice(0)
	if !errors.Is(err, ErrNoNVML) || d != nil {
		t.Errorf("OpenDevice: %v, %v; want nil, ErrNoNVML", d, err)
	}
	if _, err := DeviceCount(); !errors.Is(err, ErrNoNVML) {
		t.Errorf("DeviceCount: %v", err)
	}
	if _, err := DriverVersion(); !errors.Is(err, ErrNoNVML) {
		t.Errorf("DriverVersion: %v", err)
	}
	// A second attempt behaves the same (nothing cached from the first).
	if err := Open(); !errors.Is(err, ErrNoNVML) {
		t.Errorf("second Open: %v", err)
	}
	if lib.refs != 0 {
		t.Errorf("refs = %d after failed opens", lib.refs)
	}
}
