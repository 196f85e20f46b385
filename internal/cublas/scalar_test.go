package cublas

import (
	"bytes"
	"math"
	"testing"
)

func TestHalfKnownValues(t *testing.T) {
	cases := []struct {
		f float32
		h uint16
	}{
		{0, 0x0000},
		{float32(math.Copysign(0, -1)), 0x8000},
		{1, 0x3c00},
		{-2, 0xc000},
		{0.5, 0x3800},
		{65504, 0x7bff},
		{65520, 0x7c00}, // rounds to infinity
		{1e6, 0x7c00},
		{float32(math.Inf(-1)), 0xfc00},
		{5.9604645e-08, 0x0001}, // smallest subnormal
		{2.9802322e-08, 0x0000}, // exactly half of it: ties to even (0)
		{8.940697e-08, 0x0002},  // 1.5 * smallest: ties to even (2)
		{6.1035156e-05, 0x0400}, // smallest normal
		{1.0009765625, 0x3c01},  // 1 + 2^-10
		{1.00048828125, 0x3c00}, // 1 + 2^-11: tie, rounds to even
		{1.00146484375, 0x3c02}, // 1 + 3*2^-11: tie, rounds to even
		{0.333333333, 0x3555},
	}
	for _, c := range cases {
		if got := Float32ToHalf(c.f); got != c.h {
			t.Errorf("Float32ToHalf(%g) = %#04x, want %#04x", c.f, got, c.h)
		}
	}
	if h := Float32ToHalf(float32(math.NaN())); h&0x7c00 != 0x7c00 || h&0x3ff == 0 {
		t.Errorf("NaN -> %#04x", h)
	}
}

func TestHalfRoundTripAll(t *testing.T) {
	for i := 0; i < 1<<16; i++ {
		h := uint16(i)
		f := HalfToFloat32(h)
		if math.IsNaN(float64(f)) {
			if h&0x7c00 != 0x7c00 || h&0x3ff == 0 {
				t.Fatalf("%#04x decoded to NaN", h)
			}
			continue
		}
		if back := Float32ToHalf(f); back != h {
			t.Fatalf("%#04x -> %g -> %#04x", h, f, back)
		}
	}
}

func TestBFloat16(t *testing.T) {
	cases := []struct {
		f float32
		h uint16
	}{
		{1, 0x3f80}, {-2, 0xc000}, {0.5, 0x3f00},
		{1.00390625, 0x3f80}, // 1 + 2^-8: tie, rounds to even
		{1.01171875, 0x3f82}, // 1 + 3*2^-8: tie, rounds to even
		{float32(math.Inf(1)), 0x7f80},
	}
	for _, c := range cases {
		if got := Float32ToBFloat16(c.f); got != c.h {
			t.Errorf("Float32ToBFloat16(%g) = %#04x, want %#04x", c.f, got, c.h)
		}
		if c.f == BFloat16ToFloat32(c.h) && Float32ToBFloat16(BFloat16ToFloat32(c.h)) != c.h {
			t.Errorf("round trip of %#04x", c.h)
		}
	}
	if !math.IsNaN(float64(BFloat16ToFloat32(Float32ToBFloat16(float32(math.NaN()))))) {
		t.Error("NaN lost")
	}
}

func TestScalarBytes(t *testing.T) {
	cases := []struct {
		t    DataType
		v    float64
		want []byte
	}{
		{R16F, 1, []byte{0x00, 0x3c}},
		{R16BF, 1, []byte{0x80, 0x3f}},
		{R32F, 1, []byte{0, 0, 0x80, 0x3f}},
		{R64F, 1, []byte{0, 0, 0, 0, 0, 0, 0xf0, 0x3f}},
		{R32I, -2, []byte{0xfe, 0xff, 0xff, 0xff}},
	}
	for _, c := range cases {
		got, err := ScalarBytes(c.t, c.v)
		if err != nil || !bytes.Equal(got, c.want) {
			t.Errorf("ScalarBytes(%v, %v) = %x, %v; want %x", c.t, c.v, got, err, c.want)
		}
	}
	if _, err := ScalarBytes(R32I, 0.5); err == nil {
		t.Error("0.5 accepted as int32")
	}
	if _, err := ScalarBytes(C32F, 1); err == nil {
		t.Error("complex scalar accepted")
	}
}
