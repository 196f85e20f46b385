// Command idle times a 1-byte device-to-host copy and a 4-byte memset by
// CUPTI after 0.1-50 ms of host idle, alone or right after a warm-up copy.
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
	a := probe.Alloc(1 << 20)
	pinned := probe.Pinned(1)
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
				probe.Reset(ctx)
				for i := 0; i < 25; i++ {
					time.Sleep(gap)
					if op.before != nil {
						probe.Must(op.before())
					}
					probe.Must(op.fn())
					probe.Must(s.Synchronize())
				}
				var d []float64
				for _, r := range probe.Records(ctx) {
					if r.Kind == cupti.KindMemset || (r.Kind == cupti.KindMemcpy && r.CopyKind == cupti.MemcpyDtoH) {
						d = append(d, float64(r.Duration()))
					}
				}
				med, p10, p90 := probe.Quantiles(d)
				fmt.Printf("%d %-14s idle %6v n=%d med %5.0f p10 %5.0f p90 %5.0f\n", pass, op.name, gap, len(d), med, p10, p90)
			}
		}
	}
}
