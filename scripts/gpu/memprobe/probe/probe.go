// Package probe holds what the memory-operation probes share: device 0's
// primary context current on a locked thread, with CUPTI recording
// kernels, copies and memsets, and the records' durations. Every helper
// exits the program with the error's message on failure: a probe has
// nothing to go on with.
package probe

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"time"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/cupti"
)

// Must exits with err's message when err is not nil.
func Must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// Open locks the calling goroutine to its thread, makes device 0's primary
// context current there and enables CUPTI's concurrent-kernel, memcpy and
// memset records.
func Open() *cuda.Context {
	runtime.LockOSThread()
	Must(cuda.Init())
	dev, err := cuda.DeviceGet(0)
	Must(err)
	ctx, err := dev.RetainPrimaryContext()
	Must(err)
	Must(ctx.SetCurrent())
	Must(cupti.Enable(cupti.KindConcurrentKernel, cupti.KindMemcpy, cupti.KindMemset))
	return ctx
}

// Stream returns a new non-blocking stream.
func Stream() *cuda.Stream {
	s, err := cuda.NewStream()
	Must(err)
	return s
}

// Alloc returns n bytes of device memory.
func Alloc(n int) cuda.DevicePtr {
	p, err := cuda.MemAlloc(n)
	Must(err)
	return p
}

// Pinned returns n bytes of pinned host memory.
func Pinned(n int) *cuda.HostBuffer {
	b, err := cuda.HostAlloc(n)
	Must(err)
	return b
}

// Spin waits d on the host without yielding the thread.
func Spin(d time.Duration) {
	for t := time.Now(); time.Since(t) < d; {
	}
}

// Reset waits for the device and drops the records so far.
func Reset(ctx *cuda.Context) {
	Must(ctx.Synchronize())
	Must(cupti.Flush())
	cupti.Drain()
}

// Records waits for the device and returns the records since Reset.
func Records(ctx *cuda.Context) []cupti.Record {
	Must(ctx.Synchronize())
	Must(cupti.Flush())
	return cupti.Drain()
}

// Quantiles sorts v and returns its median, tenth and ninetieth
// percentiles; v must not be empty.
func Quantiles(v []float64) (med, p10, p90 float64) {
	slices.Sort(v)
	return v[len(v)/2], v[len(v)/10], v[9*len(v)/10]
}

// Start opens the GPU (Open) with one stream (Stream) and a 4-byte
// buffer, the target of the probes' memsets and small copies.
func Start() (*cuda.Context, *cuda.Stream, cuda.DevicePtr) {
	ctx := Open()
	return ctx, Stream(), Alloc(4)
}
