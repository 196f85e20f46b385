// Package cudatest holds the CUDA setup that GPU tests of other packages
// share (package cuda's own tests cannot import it).
package cudatest

import (
	"fmt"
	"testing"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/gputest"
)

// HasDevice is the check GPU tests hand gputest.Require: the driver
// initializes and reports at least one device.
func HasDevice() error {
	if err := cuda.Init(); err != nil {
		return err
	}
	if n, err := cuda.DeviceCount(); err != nil || n == 0 {
		return fmt.Errorf("no CUDA device (%v)", err)
	}
	return nil
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
