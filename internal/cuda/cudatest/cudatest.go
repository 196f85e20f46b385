// Package cudatest holds the CUDA setup that GPU tests of other packages
// share (package cuda's own tests cannot import it).
package cudatest

import (
	"testing"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/gputest"
)

// HasDevice is the check GPU tests hand gputest.Require: the driver
// initializes and reports at least one device (cuda.HasDevice).
func HasDevice() error { return cuda.HasDevice() }

// RequireDevices skips t unless a CUDA device is usable and every check
// passes, or fails it under KREPLAY_REQUIRE_GPU=1 (gputest.Require). With
// fewer than n devices it skips t even under KREPLAY_REQUIRE_GPU=1: a
// multi-GPU run is a separate job on a machine that has them.
func RequireDevices(t testing.TB, n int, checks ...func() error) {
	t.Helper()
	gputest.Require(t, func() error {
		if err := cuda.HasDevice(); err != nil {
			return err
		}
		for _, c := range checks {
			if err := c(); err != nil {
				return err
			}
		}
		return nil
	})
	have, err := cuda.DeviceCount()
	if err != nil {
		t.Fatal(err)
	}
	if have < n {
		t.Skipf("needs %d GPUs, this machine has %d (the multi-GPU run is separate)", n, have)
	}
}

// PrimaryContext skips t without a CUDA device (or fails it under
// KREPLAY_REQUIRE_GPU=1; see gputest.Require) and returns device 0 with
// its primary context retained until t ends.
func PrimaryContext(t testing.TB) (cuda.Device, *cuda.Context) {
	t.Helper()
	gputest.Require(t, HasDevice)
	dev, err := cuda.DeviceGet(0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, err := dev.RetainPrimaryContext()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ctx.Release() })
	return dev, ctx
}
