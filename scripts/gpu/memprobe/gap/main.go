// Command gap times 4-byte memsets and 1-byte device-to-host copies by
// CUPTI with 0-60 µs of host time between launches.
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

func spin(d time.Duration) {
	for t := time.Now(); time.Since(t) < d; {
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
	pinned, err := cuda.HostAlloc(1)
	must(err)
	pageable, err := cuda.PageableAlloc(1)
	must(err)
	ops := []struct {
		name string
		fn   func() error
	}{
		{"memset4", func() error { return cuda.MemsetD8Async(small, 0, 4, s) }},
		{"dtoh1_pinned", func() error { return cuda.MemcpyDtoHAsync(pinned.Ptr(), small, 1, s) }},
		{"dtoh1_pageable", func() error { return cuda.MemcpyDtoHAsync(pageable.Ptr(), small, 1, s) }},
		{"dtoh1_pinned_sync", func() error {
			if err := cuda.MemcpyDtoHAsync(pinned.Ptr(), small, 1, s); err != nil {
				return err
			}
			return s.Synchronize()
		}},
		{"dtoh1_pageable_sync", func() error {
			if err := cuda.MemcpyDtoHAsync(pageable.Ptr(), small, 1, s); err != nil {
				return err
			}
			return s.Synchronize()
		}},
	}
	for pass := 0; pass < 2; pass++ {
		for _, op := range ops {
			for _, gap := range []time.Duration{0, 10 * time.Microsecond, 60 * time.Microsecond} {
				must(ctx.Synchronize())
				must(cupti.Flush())
				cupti.Drain()
				for i := 0; i < 200; i++ {
					must(op.fn())
					spin(gap)
				}
				must(ctx.Synchronize())
				must(cupti.Flush())
				var d []float64
				for _, r := range cupti.Drain() {
					if r.Kind == cupti.KindMemset || r.Kind == cupti.KindMemcpy {
						d = append(d, float64(r.Duration()))
					}
				}
				d = d[len(d)/10:]
				slices.Sort(d)
				fmt.Printf("%d %-15s gap %5v n=%d med %5.0f p10 %5.0f p90 %5.0f\n", pass, op.name, gap, len(d), d[len(d)/2], d[len(d)/10], d[9*len(d)/10])
			}
		}
	}
}
