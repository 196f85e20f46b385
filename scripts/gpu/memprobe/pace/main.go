// Command pace times 4-byte memsets by CUPTI under different launch pacing and
// queueing, and prints each memset's duration with the idle gap before it.
package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/cupti"
	"github.com/kreplay/kreplay/scripts/gpu/memprobe/probe"
)

type rec struct {
	Kind       string `json:"k"`
	Start, End uint64
}

func main() {
	ctx, s, small := probe.Start()
	big := 64 << 20
	a, b := probe.Alloc(big), probe.Alloc(big)
	memset := func(st *cuda.Stream) error { return cuda.MemsetD8Async(small, 0, 4, st) }
	type cfg struct {
		name string
		st   *cuda.Stream
		run  func(st *cuda.Stream) error
	}
	loop := func(n int, gap time.Duration, before func(st *cuda.Stream) error) func(st *cuda.Stream) error {
		return func(st *cuda.Stream) error {
			for i := 0; i < n; i++ {
				if before != nil {
					if err := before(st); err != nil {
						return err
					}
				}
				if err := memset(st); err != nil {
					return err
				}
				probe.Spin(gap)
			}
			return nil
		}
	}
	blocked := func(st *cuda.Stream) error { // a long copy first: the memsets queue behind it
		if err := cuda.MemcpyDtoDAsync(b, a, big, st); err != nil {
			return err
		}
		return loop(400, 0, nil)(st)
	}
	copyFirst := func(st *cuda.Stream) error { return cuda.MemcpyDtoDAsync(b, a, 32<<10, st) }
	var cfgs []cfg
	for _, st := range []struct {
		n string
		s *cuda.Stream
	}{{"nb", s}, {"legacy", nil}} {
		cfgs = append(cfgs,
			cfg{st.n + "/tight", st.s, loop(1000, 0, nil)},
			cfg{st.n + "/gap1us", st.s, loop(400, time.Microsecond, nil)},
			cfg{st.n + "/gap3us", st.s, loop(400, 3*time.Microsecond, nil)},
			cfg{st.n + "/gap10us", st.s, loop(400, 10*time.Microsecond, nil)},
			cfg{st.n + "/queued", st.s, blocked},
			cfg{st.n + "/aftercopy", st.s, loop(400, 0, copyFirst)},
			cfg{st.n + "/aftercopy_gap10us", st.s, loop(400, 10*time.Microsecond, copyFirst)},
		)
	}
	out := map[string][]rec{}
	for pass := 0; pass < 2; pass++ {
		for _, c := range cfgs {
			probe.Reset(ctx)
			t := time.Now()
			probe.Must(c.run(c.st))
			el := time.Since(t)
			var rs []rec
			for _, r := range probe.Records(ctx) {
				k := "copy"
				if r.Kind == cupti.KindMemset {
					k = "set"
				} else if r.Kind != cupti.KindMemcpy {
					continue
				}
				rs = append(rs, rec{k, r.Start, r.End})
			}
			slices.SortFunc(rs, func(x, y rec) int { return cmp.Compare(x.Start, y.Start) })
			key := fmt.Sprintf("%d/%s", pass, c.name)
			out[key] = rs
			fmt.Fprintf(os.Stderr, "%s: %d records, CPU %v\n", key, len(rs), el)
		}
	}
	probe.Must(json.NewEncoder(os.Stdout).Encode(out))
}
