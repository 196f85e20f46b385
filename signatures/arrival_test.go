package signatures

import (
	"slices"
	"testing"
)

func TestIdleBefore(t *testing.T) {
	tl := Timeline{
		{Sig: 0, Device: 0, Start: 0, Dur: 1000},
		{Sig: 1, Device: 1, Start: 500, Dur: 100},  // first on device 1
		{Sig: 2, Device: 0, Start: 800, Dur: 1000}, // overlaps: 0
		{Sig: 1, Device: 0, Start: 3300, Dur: 700}, // 1500 after 1800
		{Sig: 1, Device: 1, Start: 600, Dur: 10},   // right after: 0
		{Sig: 0, Device: 0, Start: 3500, Dur: 100}, // inside the one before
		{Sig: 1, Device: 0, Start: 6000, Dur: 700}, // 2000 after 4000
	}
	want := []int64{-1, -1, 0, 1500, 0, 0, 2000}
	if got := IdleBefore(tl); !slices.Equal(got, want) {
		t.Errorf("IdleBefore = %v, want %v", got, want)
	}
}

// Host-launched memsets 1.2 µs up to 2.0 µs after idle count; a kernel
// or a CUDA graph's memset in the window does not.
func TestWindowArrivals(t *testing.T) {
	s := &Set{
		Signatures: []*Signature{{Class: ClassMemset}, {Class: ClassElementwise}, {Class: ClassMemset, Graph: true}},
		Timeline: Timeline{
			{Sig: 1, Start: 0, Dur: 8000},
			{Sig: 0, Start: 9500, Dur: 1000},  // 1500: in the window
			{Sig: 1, Start: 11700, Dur: 8000}, // 1200 after the memset, but an elementwise kernel
			{Sig: 0, Start: 21700, Dur: 700},  // 2000: out
			{Sig: 2, Start: 23600, Dur: 700},  // 1200: a graph's
			{Sig: 0, Start: 25500, Dur: 700},  // 1200: in
			{Sig: 0, Start: 27399, Dur: 700},  // 1199: out
			{Sig: 7, Start: 29400, Dur: 700},  // no such signature: skipped
		},
	}
	if got, want := s.WindowArrivals(), []Arrivals{{N: 2, EarlyNS: 500 + 800}, {}, {}}; !slices.Equal(got, want) {
		t.Errorf("WindowArrivals = %v, want %v", got, want)
	}
}

// Two real captures: a bf16 SDPA prefill, whose memset class came out
// short with paced replays (results/h100/memset-pacing/README.md), has memsets in the window
// (its cuDNN memsets queue 1.2-2.0 µs behind an elementwise kernel); the
// CUDA-graph prefill's memsets, 1.2-2.0 µs apart too, count none.
func TestWindowArrivalsTraces(t *testing.T) {
	for _, tc := range []struct {
		path   string
		lo, hi int // window arrivals expected
	}{
		{"testdata/l1b-bf16-sdpa_prefill.s16.trace.json.gz", 16, 49},
		{"testdata/l1b-ro_prefill/trace.json.gz", 0, 0},
	} {
		set, err := ImportFile(tc.path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		n, memsets := 0, 0
		for i, a := range set.WindowArrivals() {
			if sig := set.Signatures[i]; sig.Class == ClassMemset {
				memsets += sig.Count
				n += a.N
				if a.EarlyNS < 0 || a.EarlyNS > int64(a.N)*(ArrivalWindowHiNS-ArrivalWindowLoNS) {
					t.Errorf("%s: %s: %d arrivals, %d ns early in all: outside the window", tc.path, sig.ID, a.N, a.EarlyNS)
				}
			} else if a.N != 0 {
				t.Errorf("%s: %s (%s): %d window arrivals counted", tc.path, sig.ID, sig.Class, a.N)
			}
		}
		if memsets == 0 || n < tc.lo || n > tc.hi || n > memsets {
			t.Errorf("%s: %d window arrivals of %d memsets, want %d to %d", tc.path, n, memsets, tc.lo, tc.hi)
		}
		t.Logf("%s: %d of %d memsets arrived 1.2-2.0 µs after idle", tc.path, n, memsets)
	}
}
