// Package cublastest is test support for the GPU tests of the cuBLAS,
// cuBLASLt and CUPTI bindings: a skip rule and just enough of the CUDA
// driver API (primary context, device memory, synchronous copies),
// loaded from libcuda.so.1 at run time. It exists so those tests do not
// depend on another package's CUDA wrapper; it is not meant for
// production code.
package cublastest

/*
#cgo LDFLAGS: -ldl
#include <stdlib.h>
#include "drv.h"
*/
import "C"

import (
	"fmt"
	"os"
	"runtime"
	"sync"
	"testing"
	"unsafe"
)

// EnvRequireGPU is the environment variable that turns GPU test skips
// into failures when set to "1".
const EnvRequireGPU = "KREPLAY_REQUIRE_GPU"

// Required reports whether GPU tests must run (KREPLAY_REQUIRE_GPU=1).
func Required() bool { return os.Getenv(EnvRequireGPU) == "1" }

// Require skips the test unless KREPLAY_REQUIRE_GPU=1.
func Require(t testing.TB) {
	t.Helper()
	if !Required() {
		t.Skipf("GPU test: set %s=1 to run it on a machine with an NVIDIA GPU", EnvRequireGPU)
	}
}

var (
	openOnce sync.Once
	openErr  error
)

func load() error {
	openOnce.Do(func() {
		buf := (*C.char)(C.malloc(512))
		defer C.free(unsafe.Pointer(buf))
		if C.kr_t_open(buf, 512) != 0 {
			openErr = fmt.Errorf("cublastest: libcuda.so.1: %s", C.GoString(buf))
			return
		}
		if rc := C.kr_t_init(); rc != 0 {
			openErr = drvErr("cuInit", rc)
		}
	})
	return openErr
}

func drvErr(fn string, rc C.int) error {
	if rc == 0 {
		return nil
	}
	return fmt.Errorf("%s: %s", fn, C.GoString(C.kr_t_err_name(rc)))
}

// Device is device 0's primary context, made current on the calling
// goroutine's OS thread, which Open locks; Close unlocks it.
type Device struct {
	ctx unsafe.Pointer
}

// Open initialises the driver, retains device 0's primary context and
// makes it current on the calling goroutine, which it locks to its OS
// thread. Call Close (usually deferred) on the same goroutine.
func Open() (*Device, error) {
	if err := load(); err != nil {
		return nil, err
	}
	runtime.LockOSThread()
	var ctx unsafe.Pointer
	if err := drvErr("cuDevicePrimaryCtxRetain", C.kr_t_ctx_retain(0, &ctx)); err != nil {
		runtime.UnlockOSThread()
		return nil, err
	}
	if err := drvErr("cuCtxSetCurrent", C.kr_t_ctx_set_current(ctx)); err != nil {
		C.kr_t_ctx_release(0)
		runtime.UnlockOSThread()
		return nil, err
	}
	return &Device{ctx: ctx}, nil
}

// Close releases the primary context and unlocks the OS thread.
func (d *Device) Close() error {
	err := drvErr("cuDevicePrimaryCtxRelease", C.kr_t_ctx_release(0))
	runtime.UnlockOSThread()
	return err
}

// Alloc allocates n bytes of device memory.
func (d *Device) Alloc(n int) (uintptr, error) {
	var p C.uint64_t
	if err := drvErr("cuMemAlloc", C.kr_t_alloc(&p, C.size_t(n))); err != nil {
		return 0, err
	}
	return uintptr(p), nil
}

// Free frees device memory from Alloc.
func (d *Device) Free(p uintptr) error { return drvErr("cuMemFree", C.kr_t_free(C.uint64_t(p))) }

// CopyHtoD copies src to device memory at dst (synchronous).
func (d *Device) CopyHtoD(dst uintptr, src []byte) error {
	if len(src) == 0 {
		return nil
	}
	return drvErr("cuMemcpyHtoD", C.kr_t_htod(C.uint64_t(dst), unsafe.Pointer(&src[0]), C.size_t(len(src))))
}

// CopyDtoH copies len(dst) bytes from device memory at src (synchronous).
func (d *Device) CopyDtoH(dst []byte, src uintptr) error {
	if len(dst) == 0 {
		return nil
	}
	return drvErr("cuMemcpyDtoH", C.kr_t_dtoh(unsafe.Pointer(&dst[0]), C.uint64_t(src), C.size_t(len(dst))))
}

// Memset sets n bytes at dst to v.
func (d *Device) Memset(dst uintptr, v byte, n int) error {
	return drvErr("cuMemsetD8", C.kr_t_memset8(C.uint64_t(dst), C.uchar(v), C.size_t(n)))
}

// Synchronize waits for all work in the context (cuCtxSynchronize).
func (d *Device) Synchronize() error { return drvErr("cuCtxSynchronize", C.kr_t_ctx_sync()) }
