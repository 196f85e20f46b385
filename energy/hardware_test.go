package energy

import (
	"math"
	"testing"
)

// The DRAM bandwidth from NVML's figures: an H100 SXM's HBM3 (2619 MHz,
// 5120 bits) and an A100 80GB's HBM2e (1593 MHz, 5120 bits), both the
// data sheets' figures; nothing without a figure.
func TestDRAMBytesPerSecond(t *testing.T) {
	for _, tc := range []struct {
		h    Hardware
		want float64
	}{
		{Hardware{MaxMemClockMHz: 2619, MemoryBusWidthBits: 5120}, 3352.32e9},
		{Hardware{MaxMemClockMHz: 1593, MemoryBusWidthBits: 5120}, 2039.04e9},
		{Hardware{MaxMemClockMHz: 2619}, 0},
		{Hardware{MemoryBusWidthBits: 5120}, 0},
	} {
		if got := tc.h.DRAMBytesPerSecond(); math.Abs(got-tc.want) > 1 {
			t.Errorf("%+v: %g B/s, want %g", tc.h, got, tc.want)
		}
	}
}
