package cuda

// #include <stdlib.h>
// #include <string.h>
// #include "kr_cuda.h"
import "C"

import (
	"fmt"
	"runtime"
	"unsafe"
)

// DevicePtr is a device address (a CUdeviceptr). It is an integer, not a Go
// pointer: the garbage collector ignores it and it must be freed with Free.
type DevicePtr uintptr

// Add returns p advanced by off bytes.
func (p DevicePtr) Add(off int) DevicePtr { return p + DevicePtr(off) }

// Host allocation flags for cuMemHostAlloc (CU_MEMHOSTALLOC_*).
const (
	hostAllocPortable      = 1
	hostAllocDeviceMap     = 2
	hostAllocWriteCombined = 4
)

func checkSize(call string, n int) error {
	if n < 0 {
		return fmt.Errorf("%s: negative size %d", call, n)
	}
	return nil
}

// streamOp is the shared body of the asynchronous copies and sets: it
// checks that the driver is ready, that n is a valid size for call and
// that s is usable, then checks the result of issue, called with s's
// handle, as call.
func streamOp(call string, n int, s *Stream, issue func(sh C.kr_CUstream) C.kr_CUresult) error {
	if err := ready(); err != nil {
		return err
	}
	if err := checkSize(call, n); err != nil {
		return err
	}
	sh, err := s.handle()
	if err != nil {
		return err
	}
	return check(call, issue(sh))
}

// MemAlloc allocates n bytes of device memory in the current context.
func MemAlloc(n int) (DevicePtr, error) {
	if err := ready(); err != nil {
		return 0, err
	}
	if err := checkSize("cuMemAlloc", n); err != nil {
		return 0, err
	}
	var p C.kr_CUdeviceptr
	if err := check("cuMemAlloc", C.kr_cuMemAlloc(&p, C.size_t(n))); err != nil {
		return 0, err
	}
	return DevicePtr(p), nil
}

// MemFree frees device memory returned by MemAlloc.
func MemFree(p DevicePtr) error {
	if err := ready(); err != nil {
		return err
	}
	return check("cuMemFree", C.kr_cuMemFree(C.kr_CUdeviceptr(p)))
}

// Free is MemFree(p).
func (p DevicePtr) Free() error { return MemFree(p) }

// MemGetInfo returns the free and total device memory of the current
// context's device, in bytes.
func MemGetInfo() (free, total int, err error) {
	if err := ready(); err != nil {
		return 0, 0, err
	}
	var f, t C.size_t
	if err := check("cuMemGetInfo", C.kr_cuMemGetInfo(&f, &t)); err != nil {
		return 0, 0, err
	}
	return int(f), int(t), nil
}

// HostBuffer is host memory outside the Go heap: pinned (page-locked)
// memory from HostAlloc, or ordinary pageable C memory from PageableAlloc.
// Either kind may be passed to the asynchronous copies, because the garbage
// collector never moves or frees it; it stays valid until Free.
type HostBuffer struct {
	p      unsafe.Pointer
	n      int
	pinned bool
}

// HostAlloc allocates n bytes of pinned host memory (cuMemHostAlloc,
// portable to all contexts). Copies from and to pinned memory are truly
// asynchronous and run at full PCIe/NVLink speed. Needs a current context.
func HostAlloc(n int) (*HostBuffer, error) {
	if err := ready(); err != nil {
		return nil, err
	}
	if err := checkSize("cuMemHostAlloc", n); err != nil {
		return nil, err
	}
	var p unsafe.Pointer
	if err := check("cuMemHostAlloc", C.kr_cuMemHostAlloc(&p, C.size_t(n), hostAllocPortable)); err != nil {
		return nil, err
	}
	return &HostBuffer{p: p, n: n, pinned: true}, nil
}

// PageableAlloc allocates n zeroed bytes of ordinary (pageable) host memory
// with C's calloc. Copies from pageable memory are staged by the driver
// and are synchronous with respect to the host buffer.
func PageableAlloc(n int) (*HostBuffer, error) {
	if n < 0 {
		return nil, fmt.Errorf("cuda: PageableAlloc: negative size %d", n)
	}
	sz := n
	if sz == 0 {
		sz = 1
	}
	p := C.calloc(C.size_t(sz), 1)
	if p == nil {
		return nil, fmt.Errorf("cuda: PageableAlloc: calloc(%d) failed", n)
	}
	return &HostBuffer{p: p, n: n}, nil
}

// FreeHost frees pinned memory obtained from cuMemHostAlloc; prefer
// HostBuffer.Free.
func FreeHost(p unsafe.Pointer) error {
	if err := ready(); err != nil {
		return err
	}
	return check("cuMemFreeHost", C.kr_cuMemFreeHost(p))
}

// Ptr returns the buffer's address (nil after Free).
func (b *HostBuffer) Ptr() unsafe.Pointer { return b.p }

// Len returns the buffer's size in bytes.
func (b *HostBuffer) Len() int { return b.n }

// Pinned reports whether the buffer is page-locked.
func (b *HostBuffer) Pinned() bool { return b.pinned }

// Bytes returns the buffer as a byte slice aliasing the C memory. The slice
// must not be used after Free.
func (b *HostBuffer) Bytes() []byte {
	if b.p == nil {
		return nil
	}
	return unsafe.Slice((*byte)(b.p), b.n)
}

// Free releases the buffer; a second Free is a no-op.
func (b *HostBuffer) Free() error {
	if b == nil || b.p == nil {
		return nil
	}
	if b.pinned {
		if err := FreeHost(b.p); err != nil {
			return err
		}
	} else {
		C.free(b.p)
	}
	b.p, b.n = nil, 0
	return nil
}

// MemcpyHtoDAsync queues a copy of n bytes from host src to device dst on
// stream s (nil: legacy default stream). src must be memory the Go garbage
// collector does not manage (a HostBuffer or other C memory) and must stay
// valid until the copy finished; never pass a pointer into a Go slice.
func MemcpyHtoDAsync(dst DevicePtr, src unsafe.Pointer, n int, s *Stream) error {
	return streamOp("cuMemcpyHtoDAsync", n, s, func(sh C.kr_CUstream) C.kr_CUresult {
		return C.kr_cuMemcpyHtoDAsync(C.kr_CUdeviceptr(dst), src, C.size_t(n), sh)
	})
}

// MemcpyDtoHAsync queues a copy of n bytes from device src to host dst on
// stream s. The rule for dst is that of MemcpyHtoDAsync's src.
func MemcpyDtoHAsync(dst unsafe.Pointer, src DevicePtr, n int, s *Stream) error {
	return streamOp("cuMemcpyDtoHAsync", n, s, func(sh C.kr_CUstream) C.kr_CUresult {
		return C.kr_cuMemcpyDtoHAsync(dst, C.kr_CUdeviceptr(src), C.size_t(n), sh)
	})
}

// MemcpyDtoDAsync queues a copy of n bytes between device buffers on s.
func MemcpyDtoDAsync(dst, src DevicePtr, n int, s *Stream) error {
	return streamOp("cuMemcpyDtoDAsync", n, s, func(sh C.kr_CUstream) C.kr_CUresult {
		return C.kr_cuMemcpyDtoDAsync(C.kr_CUdeviceptr(dst), C.kr_CUdeviceptr(src), C.size_t(n), sh)
	})
}

// MemsetD8Async queues setting n bytes at dst to v on s.
func MemsetD8Async(dst DevicePtr, v uint8, n int, s *Stream) error {
	return streamOp("cuMemsetD8Async", n, s, func(sh C.kr_CUstream) C.kr_CUresult {
		return C.kr_cuMemsetD8Async(C.kr_CUdeviceptr(dst), C.uchar(v), C.size_t(n), sh)
	})
}

// MemsetD32Async queues setting n 32-bit words (4n bytes) at dst to v on
// s; dst must be 4-byte aligned.
func MemsetD32Async(dst DevicePtr, v uint32, n int, s *Stream) error {
	return streamOp("cuMemsetD32Async", n, s, func(sh C.kr_CUstream) C.kr_CUresult {
		return C.kr_cuMemsetD32Async(C.kr_CUdeviceptr(dst), C.uint(v), C.size_t(n), sh)
	})
}

// CopyHtoD copies len(src) bytes from a Go slice to dst, ordered after the
// work already queued on s, and returns once the copy has finished. Go
// memory is safe here because the call does not return before the driver
// is done with it. Not usable while s is being captured into a graph.
func CopyHtoD(dst DevicePtr, src []byte, s *Stream) error {
	if len(src) == 0 {
		return nil
	}
	err := MemcpyHtoDAsync(dst, unsafe.Pointer(&src[0]), len(src), s)
	if err == nil {
		err = s.Synchronize()
	}
	runtime.KeepAlive(src)
	return err
}

// CopyDtoH copies len(dst) bytes from device src into a Go slice, ordered
// after the work already queued on s, and returns once the copy finished.
func CopyDtoH(dst []byte, src DevicePtr, s *Stream) error {
	if len(dst) == 0 {
		return nil
	}
	err := MemcpyDtoHAsync(unsafe.Pointer(&dst[0]), src, len(dst), s)
	if err == nil {
		err = s.Synchronize()
	}
	runtime.KeepAlive(dst)
	return err
}
