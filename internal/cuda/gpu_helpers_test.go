package cuda

import (
	"math/rand/v2"
	"testing"

	"github.com/kreplay/kreplay/internal/gputest"
)

// Tests named TestGPU* need a CUDA device. They skip when Init fails or
// there is no device, unless KREPLAY_REQUIRE_GPU=1 makes that a failure.

// requireGPU skips (or, under KREPLAY_REQUIRE_GPU=1, fails) the test
// unless a device is usable, and returns device 0.
func requireGPU(t *testing.T) Device {
	t.Helper()
	gputest.Require(t, HasDevice)
	d, err := DeviceGet(0)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// withContext runs fn inside Do on device 0's primary context. A t.Fatal
// in fn unwinds through Do, which unlocks the thread on the way out.
func withContext(t *testing.T, fn func(ctx *Context)) {
	t.Helper()
	d := requireGPU(t)
	ctx, err := d.RetainPrimaryContext()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := ctx.Release(); err != nil {
			t.Errorf("Release: %v", err)
		}
	})
	if err := ctx.Do(func() error { fn(ctx); return nil }); err != nil {
		t.Fatal(err)
	}
}

// cleanupIn registers fn to run at the end of the test inside ctx.Do:
// cleanups run after the test function returned, outside its Do.
func cleanupIn(t *testing.T, ctx *Context, what string, fn func() error) {
	t.Cleanup(func() {
		if err := ctx.Do(fn); err != nil {
			t.Errorf("%s: %v", what, err)
		}
	})
}

// mustAlloc allocates device memory freed at the end of the test.
func mustAlloc(t *testing.T, ctx *Context, n int) DevicePtr {
	t.Helper()
	p, err := MemAlloc(n)
	if err != nil {
		t.Fatalf("MemAlloc(%d): %v", n, err)
	}
	cleanupIn(t, ctx, "Free", p.Free)
	return p
}

// mustStream creates a stream destroyed at the end of the test.
func mustStream(t *testing.T, ctx *Context) *Stream {
	t.Helper()
	s, err := NewStream()
	if err != nil {
		t.Fatal(err)
	}
	cleanupIn(t, ctx, "Stream.Destroy", s.Destroy)
	return s
}

// mustEvent creates an event destroyed at the end of the test.
func mustEvent(t *testing.T, ctx *Context, timing bool) *Event {
	t.Helper()
	e, err := NewEvent(timing)
	if err != nil {
		t.Fatal(err)
	}
	cleanupIn(t, ctx, "Event.Destroy", e.Destroy)
	return e
}

// mustHost allocates a pinned or pageable host buffer freed at the end.
func mustHost(t *testing.T, ctx *Context, n int, pinned bool) *HostBuffer {
	t.Helper()
	var b *HostBuffer
	var err error
	if pinned {
		b, err = HostAlloc(n)
	} else {
		b, err = PageableAlloc(n)
	}
	if err != nil {
		t.Fatal(err)
	}
	cleanupIn(t, ctx, "HostBuffer.Free", b.Free)
	return b
}

func randomBytes(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// firstDiff returns the first index where a and b differ, or -1.
func firstDiff(a, b []byte) int {
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}
