// Command idle times a 1-byte device-to-host copy and a 4-byte memset by
// CUPTI after 0.1-50 ms of host idle, alone or right after a warm-up copy.
package main

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"time"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/cupti"
)

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func main() {
	runtime.LockOSThread()
	must(cuda.Init())
	dev, err := cuda.DeviceGet(0)
	must(err)
	ctx, err := dev.RetainPrimaryContext()
	must(err)
	must(ctx.SetCurrent())
	must(cupti.Enable(cupti.KindConcurrentKernel, cupti.KindMemcpy, cupti.KindMemset))
	s, err := cuda.NewStream()
	must(err)
	small, err := cuda.MemAlloc(4)
	must(err)
	a, err := cuda.MemAlloc(1 << 20)
	must(err)
	pinned, err := cuda.HostAlloc(1)
	must(err)
	dtoh := func() error { return cuda.MemcpyDtoHAsync(pinned.Ptr(), small, 1, s) }
	memset := func() error { return cuda.MemsetD8Async(small, 0, 4, s) }
	warm := func() error { return cuda.MemcpyDtoDAsync(a, a.Add(1<<19), 32<<10, s) }
	ops := []struct {
		name   string
		before func() error
		fn     func() error
	}{
		{"dtoh1", nil, dtoh},
		{"memset4", nil, memset},
		{"dtod32k,dtoh1", warm, dtoh},
	}
	for pass := 0; pass < 2; pass++ {
		for _, op := range ops {
			for _, gap := range []time.Duration{100 * time.Microsecond, time.Millisecond, 5 * time.Millisecond, 20 * time.Millisecond, 50 * time.Millisecond} {
				must(ctx.Synchronize())
				must(cupti.Flush())
				cupti.Drain()
				for i := 0; i < 25; i++ {
					time.Sleep(gap)
					if op.before != nil {
						must(op.before())
					}
					must(op.fn())
					must(s.Synchronize())
				}
				must(cupti.Flush())
				var d []float64
				for _, r := range cupti.Drain() {
					if (r.Kind == cupti.KindMemset) || (r.Kind == cupti.KindMemcpy && r.CopyKind == cupti.MemcpyDtoH) {
						d = append(d, float64(r.Duration()))
					}
				}
				slices.Sort(d)
				fmt.Printf("%d %-14s idle %6v n=%d med %5.0f p10 %5.0f p90 %5.0f\n", pass, op.name, gap, len(d), d[len(d)/2], d[len(d)/10], d[9*len(d)/10])
			}
		}
	}
}
