package cuda

import (
	"testing"
	"time"
)

// A large device-to-device copy timed with events must show a plausible
// bandwidth: far above PCIe, below anything HBM can do.
func TestGPUEventTimingBandwidth(t *testing.T) {
	withContext(t, func(ctx *Context) {
		const n = 256 << 20
		start := mustEvent(t, ctx, true)
		end := mustEvent(t, ctx, true)
		s := mustStream(t, ctx)
		src := mustAlloc(t, ctx, n)
		dst := mustAlloc(t, ctx, n)
		if err := MemsetD8Async(src, 0x5a, n, s); err != nil {
			t.Fatal(err)
		}
		// Warm up, then keep the fastest of a few copies.
		if err := MemcpyDtoDAsync(dst, src, n, s); err != nil {
			t.Fatal(err)
		}
		var best time.Duration
		for range 5 {
			if err := start.Record(s); err != nil {
				t.Fatal(err)
			}
			if err := MemcpyDtoDAsync(dst, src, n, s); err != nil {
				t.Fatal(err)
			}
			if err := end.Record(s); err != nil {
				t.Fatal(err)
			}
			if err := end.Synchronize(); err != nil {
				t.Fatal(err)
			}
			if done, err := end.Query(); err != nil || !done {
				t.Fatalf("Query after Synchronize = %v, %v", done, err)
			}
			d, err := Elapsed(start, end)
			if err != nil {
				t.Fatal(err)
			}
			ms, err := ElapsedMillis(start, end)
			if err != nil {
				t.Fatal(err)
			}
			if diff := d - time.Duration(float64(ms)*1e6); diff < -time.Microsecond || diff > time.Microsecond {
				t.Errorf("Elapsed %v and ElapsedMillis %v ms disagree", d, ms)
			}
			if d <= 0 {
				t.Fatalf("elapsed time %v", d)
			}
			if best == 0 || d < best {
				best = d
			}
		}
		gbps := float64(n) / best.Seconds() / 1e9
		t.Logf("DtoD copy of %d MiB: %v, %.0f GB/s", n>>20, best, gbps)
		if gbps < 100 || gbps > 10000 {
			t.Errorf("DtoD bandwidth %.0f GB/s outside [100, 10000]", gbps)
		}

		// Events without timing cannot be used for Elapsed.
		quiet := mustEvent(t, ctx, false)
		if err := quiet.Record(s); err != nil {
			t.Fatal(err)
		}
		if err := quiet.Synchronize(); err != nil {
			t.Fatal(err)
		}
		if _, err := Elapsed(start, quiet); err == nil {
			t.Error("Elapsed with a non-timing event succeeded")
		}
	})
}
