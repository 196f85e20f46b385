// Command streams times tiny memsets and device copies per stream, by CUPTI.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"slices"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/cupti"
)

type row struct {
	Pass   int     `json:"pass"`
	Stream string  `json:"stream"`
	Op     string  `json:"op"`
	N      int     `json:"n"`
	Med    float64 `json:"med"`
	P10    float64 `json:"p10"`
	P90    float64 `json:"p90"`
	ID     uint32  `json:"cupti_stream"`
}

func q(v []float64, p float64) float64 { return v[int(p*float64(len(v)-1))] }

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
	kinds := []cupti.Kind{cupti.KindConcurrentKernel, cupti.KindMemcpy, cupti.KindMemset}
	must(cupti.Enable(kinds...))
	names := []string{"legacy"}
	streams := []*cuda.Stream{nil}
	for i := 0; i < 8; i++ {
		s, err := cuda.NewStream()
		must(err)
		names = append(names, fmt.Sprintf("nb%d", i))
		streams = append(streams, s)
	}
	small, err := cuda.MemAlloc(4)
	must(err)
	big := 8 << 20
	a, err := cuda.MemAlloc(big)
	must(err)
	b, err := cuda.MemAlloc(big)
	must(err)
	ops := []struct {
		name string
		reps int
		fn   func(s *cuda.Stream) error
	}{
		{"memset4_v0", 400, func(s *cuda.Stream) error { return cuda.MemsetD8Async(small, 0, 4, s) }},
		{"memset4_v5a", 400, func(s *cuda.Stream) error { return cuda.MemsetD8Async(small, 0x5a, 4, s) }},
		{"memset4_d32", 400, func(s *cuda.Stream) error { return cuda.MemsetD32Async(small, 0, 1, s) }},
		{"memset4_big_off", 400, func(s *cuda.Stream) error { return cuda.MemsetD8Async(a.Add(4096), 0, 4, s) }},
		{"dtod_32k", 200, func(s *cuda.Stream) error { return cuda.MemcpyDtoDAsync(b, a, 32<<10, s) }},
		{"dtod_8m", 60, func(s *cuda.Stream) error { return cuda.MemcpyDtoDAsync(b, a, big, s) }},
	}
	enc := json.NewEncoder(os.Stdout)
	for pass := 0; pass < 2; pass++ {
		for si, s := range streams {
			for _, op := range ops {
				must(ctx.Synchronize())
				must(cupti.Flush())
				cupti.Drain()
				for i := 0; i < op.reps; i++ {
					must(op.fn(s))
				}
				must(ctx.Synchronize())
				must(cupti.Flush())
				var d []float64
				var id uint32
				for _, r := range cupti.Drain() {
					if r.Kind == cupti.KindMemset || r.Kind == cupti.KindMemcpy {
						d = append(d, float64(r.Duration()))
						id = r.StreamID
					}
				}
				if len(d) == 0 {
					continue
				}
				d = d[len(d)/10:] // drop the first tenth (warm-up)
				slices.Sort(d)
				must(enc.Encode(row{pass, names[si], op.name, len(d), q(d, .5), q(d, .1), q(d, .9), id}))
			}
		}
	}
}
