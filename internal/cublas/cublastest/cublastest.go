// Package cublastest is test support for the GPU tests of the cuBLAS,
// cuBLASLt and CUPTI bindings: the project's skip-or-fail rule
// (internal/gputest) and a device-0 context with memory helpers built on
// internal/cuda (the header probes are internal/dl/dltest's). Only
// _test.go files import it; the bindings themselves depend on neither
// internal/cuda nor this package.
package cublastest

import (
	"testing"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/cuda/cudatest"
)

// Require skips the test unless a CUDA device is usable and every check
// (typically a library's Load) passes; with KREPLAY_REQUIRE_GPU=1 it
// fails the test instead (see internal/gputest).
func Require(t testing.TB, checks ...func() error) {
	t.Helper()
	cudatest.RequireDevices(t, 1, checks...)
}

// Device is device 0's primary context, current on the calling
// goroutine's OS thread, which Open locks; Close unlocks it.
type Device struct {
	ctx *cuda.Context
}

// Open retains device 0's primary context and makes it current on the
// calling goroutine, locked to its OS thread. Call Close (usually
// deferred) on the same goroutine.
func Open() (*Device, error) {
	if err := cuda.Init(); err != nil {
		return nil, err
	}
	d, err := cuda.DeviceGet(0)
	if err != nil {
		return nil, err
	}
	ctx, err := d.RetainPrimaryContext()
	if err != nil {
		return nil, err
	}
	if err := ctx.Lock(); err != nil {
		ctx.Release()
		return nil, err
	}
	return &Device{ctx: ctx}, nil
}

// Close unlocks the OS thread and releases the primary context.
func (d *Device) Close() error {
	d.ctx.Unlock()
	return d.ctx.Release()
}

// Alloc allocates n bytes of device memory.
func (d *Device) Alloc(n int) (uintptr, error) {
	p, err := cuda.MemAlloc(n)
	return uintptr(p), err
}

// Free frees device memory from Alloc.
func (d *Device) Free(p uintptr) error { return cuda.MemFree(cuda.DevicePtr(p)) }

// CopyHtoD copies src to device memory at dst and waits for the copy.
func (d *Device) CopyHtoD(dst uintptr, src []byte) error {
	return cuda.CopyHtoD(cuda.DevicePtr(dst), src, nil)
}

// CopyDtoH copies len(dst) bytes from device memory at src and waits.
func (d *Device) CopyDtoH(dst []byte, src uintptr) error {
	return cuda.CopyDtoH(dst, cuda.DevicePtr(src), nil)
}

// Memset sets n bytes at dst to v and waits.
func (d *Device) Memset(dst uintptr, v byte, n int) error {
	if err := cuda.MemsetD8Async(cuda.DevicePtr(dst), v, n, nil); err != nil {
		return err
	}
	return d.Synchronize()
}

// Synchronize waits for all work in the context.
func (d *Device) Synchronize() error { return d.ctx.Synchronize() }

// Bind makes the context current on the calling goroutine, locked to its
// OS thread, for subtests (which run on goroutines of their own). Call the
// returned function, usually deferred, on the same goroutine.
func (d *Device) Bind() (unbind func(), err error) {
	if err := d.ctx.Lock(); err != nil {
		return nil, err
	}
	return d.ctx.Unlock, nil
}
