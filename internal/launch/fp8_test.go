package launch

import (
	"math"
	"testing"
)

// F32ToFP8 rounds to the nearest code, ties to even, with each format's
// overflow: table cases at the edges, then every code's value and the
// midpoints between neighbours against FP8ToF32.
func TestF32ToFP8(t *testing.T) {
	nan := float32(math.NaN())
	inf := float32(math.Inf(1))
	for _, c := range []struct {
		dtype string
		f     float32
		want  byte
	}{
		{"f8e4m3", 0, 0x00},
		{"f8e4m3", 1, 0x38},
		{"f8e4m3", -1, 0xb8},
		{"f8e4m3", 448, 0x7e},
		{"f8e4m3", 464, 0x7e},   // the tie with 480 (NaN's code) goes to even, 448
		{"f8e4m3", 464.5, 0x7f}, // beyond it: NaN, no Inf in e4m3fn
		{"f8e4m3", 1e6, 0x7f},
		{"f8e4m3", inf, 0x7f},
		{"f8e4m3", -inf, 0xff},
		{"f8e4m3", nan, 0x7f},
		{"f8e4m3", 0x1p-9, 0x01},  // the smallest subnormal
		{"f8e4m3", 0x1p-10, 0x00}, // half of it: a tie, to even 0
		{"f8e4m3", 0x1.8p-10, 0x01},
		{"f8e4m3", 0x1.ep-7, 0x08}, // 15/16 of 2^-6 rounds up to the smallest normal
		{"f8e5m2", 1, 0x3c},
		{"f8e5m2", 57344, 0x7b},
		{"f8e5m2", 61439, 0x7b},
		{"f8e5m2", 61440, 0x7c}, // the tie between 57344 (odd) and Inf's code goes to even: Inf
		{"f8e5m2", inf, 0x7c},
		{"f8e5m2", -inf, 0xfc},
		{"f8e5m2", nan, 0x7f},
		{"f8e5m2", 0x1p-16, 0x01},
		{"f8e5m2", 0x1p-17, 0x00},
	} {
		got, ok := F32ToFP8(c.dtype, c.f)
		if !ok || got != c.want {
			t.Errorf("F32ToFP8(%s, %g) = %#02x, %v; want %#02x", c.dtype, c.f, got, ok, c.want)
		}
	}
	for _, dtype := range []string{"f8e4m3", "f8e5m2"} {
		for code := 0; code < 256; code++ {
			v := FP8ToF32(dtype, byte(code))
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				continue
			}
			if got, _ := F32ToFP8(dtype, v); got != byte(code) && !(v == 0 && got&0x7f == 0) {
				t.Errorf("%s: %g (code %#02x) encodes as %#02x", dtype, v, code, got)
			}
			// Between this code and the next larger magnitude: below the
			// midpoint it stays, above it moves; at it, the even one.
			next := FP8ToF32(dtype, byte(code+1))
			if code&0x7f == 0x7f || math.IsNaN(float64(next)) || math.IsInf(float64(next), 0) {
				continue
			}
			mid := float32((float64(v) + float64(next)) / 2) // exact in float32
			below, _ := F32ToFP8(dtype, math.Nextafter32(mid, v))
			above, _ := F32ToFP8(dtype, math.Nextafter32(mid, next))
			at, _ := F32ToFP8(dtype, mid)
			even := byte(code)
			if code&1 == 1 {
				even = byte(code + 1)
			}
			if below != byte(code) || above != byte(code+1) || at != even {
				t.Errorf("%s: around %g (between %#02x and %#02x): %#02x below, %#02x at, %#02x above", dtype, mid, code, code+1, below, at, above)
			}
		}
	}
	if _, ok := F32ToFP8("f16", 1); ok {
		t.Error("F32ToFP8 encoded an f16")
	}
}
