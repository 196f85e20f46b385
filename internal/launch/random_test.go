package launch

import (
	"encoding/binary"
	"math"
	"testing"
)

func TestF16RoundTrip(t *testing.T) {
	for _, tc := range []struct {
		f    float32
		bits uint16
	}{
		{0, 0}, {1, 0x3c00}, {-2, 0xc000}, {0.5, 0x3800}, {65504, 0x7bff},
		{6.103515625e-05, 0x0400}, // smallest normal
		{5.960464477539063e-08, 0x0001},
		{0.1, 0x2e66},
	} {
		if got := F32ToF16(tc.f); got != tc.bits {
			t.Errorf("F32ToF16(%v) = %#04x, want %#04x", tc.f, got, tc.bits)
		}
		if back := F16ToF32(tc.bits); tc.f != 0.1 && back != tc.f {
			t.Errorf("F16ToF32(%#04x) = %v, want %v", tc.bits, back, tc.f)
		}
	}
	// Every finite half converts to float32 and back to itself.
	for h := 0; h < 0x10000; h++ {
		if h&0x7c00 == 0x7c00 {
			continue
		}
		if got := F32ToF16(F16ToF32(uint16(h))); got != uint16(h) && !(h == 0x8000 && got == 0x8000) {
			t.Fatalf("%#04x -> %v -> %#04x", h, F16ToF32(uint16(h)), got)
		}
	}
}

func TestRandomPattern(t *testing.T) {
	for _, dt := range []string{"f16", "bf16", "f32", "f64", "i64", "i32", "bool", "u8"} {
		b, err := RandomPattern(dt, 4096, 1)
		if err != nil {
			t.Fatal(err)
		}
		zeros := 0
		for i := 0; i < len(b); i += 2 {
			if b[i] == 0 && b[i+1] == 0 {
				zeros++
			}
		}
		if dt != "i64" && dt != "i32" && zeros > len(b)/4 {
			t.Errorf("%s: %d of %d half-words are zero", dt, zeros, len(b)/2)
		}
		switch dt {
		case "f16":
			for i := 0; i < len(b); i += 2 {
				v := F16ToF32(binary.LittleEndian.Uint16(b[i:]))
				if v < -1 || v > 1 || math.IsNaN(float64(v)) {
					t.Fatalf("f16 value %v out of [-1,1]", v)
				}
			}
		case "f32":
			for i := 0; i < len(b); i += 4 {
				v := math.Float32frombits(binary.LittleEndian.Uint32(b[i:]))
				if v < -1 || v >= 1 {
					t.Fatalf("f32 value %v out of [-1,1)", v)
				}
			}
		}
	}
	if _, err := RandomPattern("c64", 8, 1); err == nil {
		t.Error("unknown dtype gave no error")
	}
}

func TestSetsFor(t *testing.T) {
	const l2 = 50 << 20
	for _, tc := range []struct {
		foot, budget int64
		max, want    int
	}{
		{1 << 30, 0, 64, 1},         // larger than L2: one set
		{10 << 20, 0, 64, 11},       // 2*50/10 + 1
		{1 << 10, 0, 64, 64},        // tiny: capped
		{10 << 20, 30 << 20, 64, 3}, // memory budget
		{0, 0, 64, 1},
	} {
		if got := SetsFor(tc.foot, l2, tc.budget, tc.max); got != tc.want {
			t.Errorf("SetsFor(%d, L2, %d, %d) = %d, want %d", tc.foot, tc.budget, tc.max, got, tc.want)
		}
	}
}

// FP8 decoding against the formats' known values, and random FP8
// patterns: every code finite, most codes met.
func TestFP8(t *testing.T) {
	for _, tc := range []struct {
		dtype string
		code  byte
		want  float64
	}{
		{"f8e4m3", 0x00, 0}, {"f8e4m3", 0x38, 1}, {"f8e4m3", 0xb8, -1}, {"f8e4m3", 0x7e, 448},
		{"f8e4m3", 0x01, math.Ldexp(1, -9)}, {"f8e4m3", 0x08, math.Ldexp(1, -6)}, {"f8e4m3", 0x3c, 1.5},
		{"f8e5m2", 0x3c, 1}, {"f8e5m2", 0x7b, 57344}, {"f8e5m2", 0x01, math.Ldexp(1, -16)}, {"f8e5m2", 0xc0, -2},
		{"f8e5m2", 0x7c, math.Inf(1)},
	} {
		if got := float64(FP8ToF32(tc.dtype, tc.code)); got != tc.want {
			t.Errorf("FP8ToF32(%s, %#02x) = %v, want %v", tc.dtype, tc.code, got, tc.want)
		}
	}
	for _, c := range []byte{0x7f, 0xff} {
		if v := FP8ToF32("f8e4m3", c); !math.IsNaN(float64(v)) {
			t.Errorf("e4m3 %#02x = %v, want NaN", c, v)
		}
	}
	for _, dt := range []string{"f8e4m3", "f8e5m2"} {
		b, err := RandomPattern(dt, 1<<16, 3)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[byte]bool{}
		for _, c := range b {
			v := float64(FP8ToF32(dt, c))
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("%s code %#02x is not finite", dt, c)
			}
			seen[c] = true
		}
		if len(seen) < 240 {
			t.Errorf("%s: %d distinct codes in 64 KiB", dt, len(seen))
		}
	}
}
