package cuda

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"unsafe"
)

func TestGPUMemsetRoundTrip(t *testing.T) {
	withContext(t, func(ctx *Context) {
		const n = 1<<20 + 3 // odd size: the tail is not a whole word
		s := mustStream(t, ctx)
		p := mustAlloc(t, ctx, n)
		host := mustHost(t, ctx, n, true)

		// 0xA5 everywhere, then 1000 words of 0xDEADBEEF at offset 4096.
		if err := MemsetD8Async(p, 0xA5, n, s); err != nil {
			t.Fatal(err)
		}
		if err := MemsetD32Async(p.Add(4096), 0xDEADBEEF, 1000, s); err != nil {
			t.Fatal(err)
		}
		if err := MemcpyDtoHAsync(host.Ptr(), p, n, s); err != nil {
			t.Fatal(err)
		}
		if err := s.Synchronize(); err != nil {
			t.Fatal(err)
		}
		got := host.Bytes()
		for i, b := range got {
			inWords := i >= 4096 && i < 4096+4000
			if inWords {
				want := binary.LittleEndian.AppendUint32(nil, 0xDEADBEEF)[(i-4096)%4]
				if b != want {
					t.Fatalf("byte %d = %#x, want %#x (memset D32)", i, b, want)
				}
			} else if b != 0xA5 {
				t.Fatalf("byte %d = %#x, want 0xa5 (memset D8)", i, b)
			}
		}
		if done, err := s.Query(); err != nil || !done {
			t.Errorf("Query after Synchronize = %v, %v", done, err)
		}

		free, total, err := MemGetInfo()
		if err != nil {
			t.Fatal(err)
		}
		tm, _ := ctx.Device().TotalMem()
		t.Logf("MemGetInfo: %d free of %d (device total %d)", free, total, tm)
		if free <= 0 || free > total || total != tm {
			t.Errorf("MemGetInfo = %d free, %d total; device total %d", free, total, tm)
		}
	})
}

// Random bytes host -> device -> device -> host, through each kind of
// host memory.
func TestGPUCopyRoundTrip(t *testing.T) {
	withContext(t, func(ctx *Context) {
		const n = 4<<20 + 13
		s := mustStream(t, ctx)
		a := mustAlloc(t, ctx, n)
		b := mustAlloc(t, ctx, n)
		for i, kind := range []string{"pinned", "pageable C memory", "Go slice"} {
			// A subtest runs on its own goroutine, so it needs its own Do.
			t.Run(kind, func(t *testing.T) {
				if err := ctx.Do(func() error { copyRoundTrip(t, ctx, s, a, b, n, i, kind); return nil }); err != nil {
					t.Fatal(err)
				}
			})
		}
	})
}

func copyRoundTrip(t *testing.T, ctx *Context, s *Stream, a, b DevicePtr, n, i int, kind string) {
	want := randomBytes(uint64(i+1), n)
	// Clear the device buffers so a stale result cannot pass.
	if err := MemsetD8Async(a, 0, n, s); err != nil {
		t.Fatal(err)
	}
	if err := MemsetD8Async(b, 0, n, s); err != nil {
		t.Fatal(err)
	}
	var got []byte
	switch kind {
	case "Go slice":
		if err := CopyHtoD(a, want, s); err != nil {
			t.Fatal(err)
		}
		if err := MemcpyDtoDAsync(b, a, n, s); err != nil {
			t.Fatal(err)
		}
		got = make([]byte, n)
		if err := CopyDtoH(got, b, s); err != nil {
			t.Fatal(err)
		}
	default:
		src := mustHost(t, ctx, n, kind == "pinned")
		dst := mustHost(t, ctx, n, kind == "pinned")
		copy(src.Bytes(), want)
		if err := MemcpyHtoDAsync(a, src.Ptr(), n, s); err != nil {
			t.Fatal(err)
		}
		if err := MemcpyDtoDAsync(b, a, n, s); err != nil {
			t.Fatal(err)
		}
		if err := MemcpyDtoHAsync(dst.Ptr(), b, n, s); err != nil {
			t.Fatal(err)
		}
		if err := s.Synchronize(); err != nil {
			t.Fatal(err)
		}
		got = dst.Bytes()
	}
	if i := firstDiff(got, want); i >= 0 {
		t.Fatalf("round trip differs at byte %d of %d", i, n)
	}
}

func TestGPUOutOfMemory(t *testing.T) {
	withContext(t, func(ctx *Context) {
		_, err := MemAlloc(1 << 50)
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("MemAlloc(1<<50) = %v, want an *Error", err)
		}
		if e.Code != CodeOutOfMemory || e.Name != "CUDA_ERROR_OUT_OF_MEMORY" || e.Call != "cuMemAlloc" {
			t.Errorf("MemAlloc(1<<50) = %+v", e)
		}
		if !strings.HasPrefix(err.Error(), "cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY") {
			t.Errorf("message %q", err)
		}
		t.Logf("%v", err)
		// The context survives: a normal allocation still works.
		p, err := MemAlloc(1 << 20)
		if err != nil {
			t.Fatalf("allocation after OOM: %v", err)
		}
		if err := p.Free(); err != nil {
			t.Fatal(err)
		}
		if _, err := HostAlloc(-1); err == nil {
			t.Error("HostAlloc(-1) succeeded")
		}
	})
}

func TestGPUDestroyedHandles(t *testing.T) {
	withContext(t, func(ctx *Context) {
		s, err := NewStream()
		if err != nil {
			t.Fatal(err)
		}
		if s.Handle() == nil {
			t.Error("stream handle is nil")
		}
		if err := s.Destroy(); err != nil {
			t.Fatal(err)
		}
		if err := s.Destroy(); err != nil {
			t.Errorf("second Destroy: %v", err)
		}
		if err := s.Synchronize(); !errors.Is(err, ErrDestroyed) {
			t.Errorf("Synchronize on destroyed stream: %v", err)
		}
		if err := MemsetD8Async(0, 0, 1, s); !errors.Is(err, ErrDestroyed) {
			t.Errorf("memset on destroyed stream: %v", err)
		}
		e, err := NewEvent(false)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Destroy(); err != nil {
			t.Fatal(err)
		}
		if err := e.Record(nil); !errors.Is(err, ErrDestroyed) {
			t.Errorf("Record on destroyed event: %v", err)
		}
		h := mustHost(t, ctx, 16, true)
		if !h.Pinned() || len(h.Bytes()) != 16 || uintptr(h.Ptr())%unsafe.Alignof(uint64(0)) != 0 {
			t.Errorf("pinned buffer: pinned %v len %d ptr %p", h.Pinned(), len(h.Bytes()), h.Ptr())
		}
	})
}
