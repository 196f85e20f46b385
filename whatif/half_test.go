package whatif

import (
	"math"
	"testing"
)

// Every f16 and bf16 value converts to float32 and back unchanged.
func TestHalfRoundTrip(t *testing.T) {
	for i := 0; i < 1<<16; i++ {
		h := uint16(i)
		if f := halfToFloat(h); !math.IsNaN(float64(f)) && floatToHalf(f) != h {
			t.Fatalf("f16 %#04x -> %g -> %#04x", h, f, floatToHalf(f))
		}
		if f := bf16ToFloat(h); !math.IsNaN(float64(f)) && floatToBF16(f) != h {
			t.Fatalf("bf16 %#04x -> %g -> %#04x", h, f, floatToBF16(f))
		}
	}
}

func TestFloatToHalf(t *testing.T) {
	p := func(e int) float32 { return float32(math.Ldexp(1, e)) }
	for _, c := range []struct {
		f    float32
		want uint16
	}{
		{1, 0x3c00}, {-2, 0xc000}, {0, 0}, {float32(math.Copysign(0, -1)), 0x8000},
		{65504, 0x7bff}, {65519.99, 0x7bff}, {65520, 0x7c00}, {1e9, 0x7c00}, {float32(math.Inf(-1)), 0xfc00},
		{p(-14), 0x0400}, {p(-24), 0x0001}, {p(-25), 0}, {1.5 * p(-25), 0x0001}, {1.5 * p(-24), 0x0002}, {p(-26), 0},
		{1 + p(-11), 0x3c00}, {1 + 3*p(-11), 0x3c02}, {1 + p(-10), 0x3c01},
		{float32(math.NaN()), 0x7fff},
	} {
		if got := floatToHalf(c.f); got != c.want {
			t.Errorf("floatToHalf(%g) = %#04x, want %#04x", c.f, got, c.want)
		}
	}
	for _, c := range []struct {
		f    float32
		want uint16
	}{
		{1, 0x3f80}, {1 + p(-8), 0x3f80}, {1 + 3*p(-8), 0x3f82}, {-1, 0xbf80},
	} {
		if got := floatToBF16(c.f); got != c.want {
			t.Errorf("floatToBF16(%g) = %#04x, want %#04x", c.f, got, c.want)
		}
	}
	if got := floatToBF16(float32(math.NaN())); !math.IsNaN(float64(bf16ToFloat(got))) {
		t.Errorf("floatToBF16(NaN) = %#04x, not a NaN", got)
	}
}

func TestEncodeDecode(t *testing.T) {
	v := []float32{1, -0.5, 3.140625, 1024}
	for _, dt := range []string{"f16", "bf16", "f32"} {
		raw, err := encode(v, dt)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decode(raw, dt)
		if err != nil || len(got) != len(v) {
			t.Fatalf("%s: %v, %v", dt, got, err)
		}
		for i := range v {
			if got[i] != round(v[i], dt) {
				t.Errorf("%s: %g -> %g", dt, v[i], got[i])
			}
		}
	}
	if _, err := decode([]byte{1, 2, 3}, "f16"); err == nil {
		t.Error("odd bytes of f16 decoded")
	}
	if _, err := encode(v, "i64"); err == nil {
		t.Error("i64 encoded")
	}
}
