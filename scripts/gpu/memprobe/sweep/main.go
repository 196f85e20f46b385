// Command sweep times a 1-byte device-to-host copy (and a 4-byte memset)
// by CUPTI right after work that sweeps much memory (TLB and L2), against
// alone; with fresh host or device pages each time; from two sources 1
// GiB apart in turn; and with its source written just before, queued
// behind a memset or a 1-byte device copy into it, or 50 µs before.
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
	const gb = 1 << 30
	big := probe.Alloc(2 * gb)
	pinned := probe.Pinned(1)
	var hosts []*cuda.HostBuffer
	for i := 0; i < 25; i++ {
		hosts = append(hosts, probe.Pinned(1<<21))
	}
	sweep := func(n int) func(int) error {
		return func(int) error { return cuda.MemcpyDtoDAsync(big.Add(gb), big, n, s) }
	}
	dtoh := func(int) error { return cuda.MemcpyDtoHAsync(pinned.Ptr(), small, 1, s) }
	memset := func(int) error { return cuda.MemsetD8Async(small, 0, 4, s) }
	ops := []struct {
		name   string
		before func(int) error
		fn     func(int) error
		kind   cupti.Kind
	}{
		{"dtoh1", nil, dtoh, cupti.KindMemcpy},
		{"sweep64M,dtoh1", sweep(64 << 20), dtoh, cupti.KindMemcpy},
		{"sweep1G,dtoh1", sweep(gb), dtoh, cupti.KindMemcpy},
		{"dtoh1_freshhost", nil, func(i int) error { return cuda.MemcpyDtoHAsync(hosts[i].Ptr(), small, 1, s) }, cupti.KindMemcpy},
		{"dtoh1_freshdev", nil, func(i int) error { return cuda.MemcpyDtoHAsync(pinned.Ptr(), big.Add(i<<21), 1, s) }, cupti.KindMemcpy},
		{"dtoh1_alt2", nil, func(i int) error { return cuda.MemcpyDtoHAsync(pinned.Ptr(), big.Add((i%2)*gb), 1, s) }, cupti.KindMemcpy},
		{"memset1,dtoh1", func(int) error { return cuda.MemsetD8Async(small, 1, 1, s) }, dtoh, cupti.KindMemcpy},
		{"dtod1,dtoh1", func(int) error { return cuda.MemcpyDtoDAsync(small, big, 1, s) }, dtoh, cupti.KindMemcpy},
		{"memset1,50us,dtoh1", func(int) error {
			if err := cuda.MemsetD8Async(small, 1, 1, s); err != nil {
				return err
			}
			probe.Spin(50 * time.Microsecond)
			return nil
		}, dtoh, cupti.KindMemcpy},
		{"memset4", nil, memset, cupti.KindMemset},
		{"sweep1G,memset4", sweep(gb), memset, cupti.KindMemset},
	}
	for pass := 0; pass < 2; pass++ {
		for _, op := range ops {
			probe.Reset(ctx)
			for i := 0; i < 25; i++ {
				if op.before != nil {
					probe.Must(op.before(i))
				}
				probe.Must(op.fn(i))
				probe.Must(s.Synchronize())
			}
			var d []float64
			for _, r := range probe.Records(ctx) {
				if r.Kind == op.kind && (r.Kind == cupti.KindMemset || r.CopyKind == cupti.MemcpyDtoH) {
					d = append(d, float64(r.Duration()))
				}
			}
			med, p10, p90 := probe.Quantiles(d)
			fmt.Printf("%d %-16s n=%d med %5.0f p10 %5.0f p90 %5.0f max %5.0f\n", pass, op.name, len(d), med, p10, p90, d[len(d)-1])
		}
	}
}
