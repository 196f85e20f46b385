// Command sweep times a 1-byte device-to-host copy (and a 4-byte memset)
// by CUPTI right after work that sweeps much memory (TLB and L2), against
// alone; and with fresh host or device pages each time.
package main

import (
	"fmt"
	"os"
	"runtime"
	"slices"

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
	const gb = 1 << 30
	big, err := cuda.MemAlloc(2 * gb)
	must(err)
	pinned, err := cuda.HostAlloc(1)
	must(err)
	var hosts []*cuda.HostBuffer
	for i := 0; i < 25; i++ {
		h, err := cuda.HostAlloc(1 << 21)
		must(err)
		hosts = append(hosts, h)
	}
	sweep := func(n int) func(int) error {
		return func(int) error { return cuda.MemcpyDtoDAsync(big.Add(gb), big, n, s) }
	}
	dtoh := func(int) error { return cuda.MemcpyDtoHAsync(pinned.Ptr(), small, 1, s) }
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
		{"memset4", nil, func(int) error { return cuda.MemsetD8Async(small, 0, 4, s) }, cupti.KindMemset},
		{"sweep1G,memset4", sweep(gb), func(int) error { return cuda.MemsetD8Async(small, 0, 4, s) }, cupti.KindMemset},
	}
	for pass := 0; pass < 2; pass++ {
		for _, op := range ops {
			must(ctx.Synchronize())
			must(cupti.Flush())
			cupti.Drain()
			for i := 0; i < 25; i++ {
				if op.before != nil {
					must(op.before(i))
				}
				must(op.fn(i))
				must(s.Synchronize())
			}
			must(cupti.Flush())
			var d []float64
			for _, r := range cupti.Drain() {
				if r.Kind == op.kind && (r.Kind == cupti.KindMemset || r.CopyKind == cupti.MemcpyDtoH) {
					d = append(d, float64(r.Duration()))
				}
			}
			slices.Sort(d)
			fmt.Printf("%d %-16s n=%d med %5.0f p10 %5.0f p90 %5.0f max %5.0f\n", pass, op.name, len(d), d[len(d)/2], d[len(d)/10], d[9*len(d)/10], d[len(d)-1])
		}
	}
}
