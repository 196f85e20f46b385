// Command gap times 4-byte memsets and 1-byte device-to-host copies by
// CUPTI with 0-60 µs of host time between launches, and the copies with
// a stream synchronize after each, as PyTorch's tensor.item() waits.
package main

import (
	"fmt"
	"time"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/cupti"
	"github.com/kreplay/kreplay/scripts/gpu/memprobe/probe"
)

func main() {
	ctx, s, small := probe.Start()
	pinned := probe.Pinned(1)
	pageable, err := cuda.PageableAlloc(1)
	probe.Must(err)
	dtoh := func(h *cuda.HostBuffer) func() error {
		return func() error { return cuda.MemcpyDtoHAsync(h.Ptr(), small, 1, s) }
	}
	synced := func(f func() error) func() error {
		return func() error {
			if err := f(); err != nil {
				return err
			}
			return s.Synchronize()
		}
	}
	ops := []struct {
		name string
		fn   func() error
	}{
		{"memset4", func() error { return cuda.MemsetD8Async(small, 0, 4, s) }},
		{"dtoh1_pinned", dtoh(pinned)},
		{"dtoh1_pageable", dtoh(pageable)},
		{"dtoh1_pinned_sync", synced(dtoh(pinned))},
		{"dtoh1_pageable_sync", synced(dtoh(pageable))},
	}
	for pass := 0; pass < 2; pass++ {
		for _, op := range ops {
			for _, gap := range []time.Duration{0, 10 * time.Microsecond, 60 * time.Microsecond} {
				probe.Reset(ctx)
				for i := 0; i < 200; i++ {
					probe.Must(op.fn())
					probe.Spin(gap)
				}
				var d []float64
				for _, r := range probe.Records(ctx) {
					if r.Kind == cupti.KindMemset || r.Kind == cupti.KindMemcpy {
						d = append(d, float64(r.Duration()))
					}
				}
				d = d[len(d)/10:]
				med, p10, p90 := probe.Quantiles(d)
				fmt.Printf("%d %-15s gap %5v n=%d med %5.0f p10 %5.0f p90 %5.0f\n", pass, op.name, gap, len(d), med, p10, p90)
			}
		}
	}
}
