// Command streams times tiny memsets and device copies per stream, by CUPTI.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/cupti"
	"github.com/kreplay/kreplay/scripts/gpu/memprobe/probe"
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

func main() {
	ctx := probe.Open()
	names := []string{"legacy"}
	streams := []*cuda.Stream{nil}
	for i := 0; i < 8; i++ {
		names = append(names, fmt.Sprintf("nb%d", i))
		streams = append(streams, probe.Stream())
	}
	small := probe.Alloc(4)
	big := 8 << 20
	a, b := probe.Alloc(big), probe.Alloc(big)
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
				probe.Reset(ctx)
				for i := 0; i < op.reps; i++ {
					probe.Must(op.fn(s))
				}
				var d []float64
				var id uint32
				for _, r := range probe.Records(ctx) {
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
				probe.Must(enc.Encode(row{pass, names[si], op.name, len(d), q(d, .5), q(d, .1), q(d, .9), id}))
			}
		}
	}
}
