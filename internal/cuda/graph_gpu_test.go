package cuda

import (
	"bytes"
	"testing"
)

// Capture memset, memcpy and a device-to-host copy into a graph, then run
// the graph (twice) and check the result.
func TestGPUGraphCapture(t *testing.T) {
	withContext(t, func(ctx *Context) {
		const n = 1 << 20
		s := mustStream(t, ctx)
		a := mustAlloc(t, ctx, n)
		b := mustAlloc(t, ctx, n)
		host := mustHost(t, ctx, n, true)
		clear(host.Bytes()) // pinned memory starts uninitialized

		if err := s.BeginCapture(CaptureModeThreadLocal); err != nil {
			t.Fatal(err)
		}
		ops := []func() error{
			func() error { return MemsetD32Async(a, 0x01020304, n/4, s) },
			func() error { return MemcpyDtoDAsync(b, a, n, s) },
			func() error { return MemsetD8Async(b, 0xEE, 100, s) },
			func() error { return MemcpyDtoHAsync(host.Ptr(), b, n, s) },
		}
		for i, op := range ops {
			if err := op(); err != nil {
				s.EndCapture()
				t.Fatalf("captured op %d: %v", i, err)
			}
		}
		g, err := s.EndCapture()
		if err != nil {
			t.Fatal(err)
		}
		cleanupIn(t, ctx, "Graph.Destroy", g.Destroy)
		nodes, err := g.NodeCount()
		if err != nil {
			t.Fatal(err)
		}
		if nodes != len(ops) {
			t.Errorf("graph has %d nodes, want %d", nodes, len(ops))
		}
		// Capturing ran nothing.
		if err := s.Synchronize(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(host.Bytes()[:8], make([]byte, 8)) {
			t.Errorf("host buffer written during capture: % x", host.Bytes()[:8])
		}

		exec, err := g.Instantiate()
		if err != nil {
			t.Fatal(err)
		}
		cleanupIn(t, ctx, "GraphExec.Destroy", exec.Destroy)
		for run := range 2 {
			clear(host.Bytes())
			if err := exec.Launch(s); err != nil {
				t.Fatal(err)
			}
			if err := s.Synchronize(); err != nil {
				t.Fatal(err)
			}
			got := host.Bytes()
			for i := range n {
				want := [4]byte{0x04, 0x03, 0x02, 0x01}[i%4]
				if i < 100 {
					want = 0xEE
				}
				if got[i] != want {
					t.Fatalf("run %d: byte %d = %#x, want %#x", run, i, got[i], want)
				}
			}
		}
		if err := exec.Destroy(); err != nil {
			t.Fatal(err)
		}
		if err := exec.Launch(s); err == nil {
			t.Error("Launch after Destroy succeeded")
		}

		// Ending a capture that never began is an error, not a crash.
		if _, err := s.EndCapture(); err == nil {
			t.Error("EndCapture without BeginCapture succeeded")
		}
		// The legacy default stream cannot be captured.
		var legacy *Stream
		if err := legacy.BeginCapture(CaptureModeGlobal); err == nil {
			legacy.EndCapture()
			t.Error("capturing the legacy stream succeeded")
		}
	})
}
