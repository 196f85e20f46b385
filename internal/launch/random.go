package launch

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
)

// patternBytes is the size of the random host pattern copied over device
// buffers: large enough that data is not periodic within any cache line
// set that matters, small enough to generate quickly.
const patternBytes = 8 << 20

// RandomPattern returns n bytes of random elements of dtype: values
// uniform in [-1, 1) for floating types (never NaN or Inf, never all zero),
// small non-negative integers for integer types, and 0/1 for bool. FP8
// elements (f8e4m3, f8e5m2) are any finite code, uniform over the codes:
// quantized FP8 tensors use the format's whole range, their scale chosen
// so that the largest value is the format's largest.
func RandomPattern(dtype string, n int, seed uint64) ([]byte, error) {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	b := make([]byte, n)
	switch dtype {
	case "f16":
		for i := 0; i+2 <= n; i += 2 {
			binary.LittleEndian.PutUint16(b[i:], F32ToF16(float32(2*r.Float64()-1)))
		}
	case "bf16":
		for i := 0; i+2 <= n; i += 2 {
			binary.LittleEndian.PutUint16(b[i:], uint16(math.Float32bits(float32(2*r.Float64()-1))>>16))
		}
	case "f32":
		for i := 0; i+4 <= n; i += 4 {
			binary.LittleEndian.PutUint32(b[i:], math.Float32bits(float32(2*r.Float64()-1)))
		}
	case "f64":
		for i := 0; i+8 <= n; i += 8 {
			binary.LittleEndian.PutUint64(b[i:], math.Float64bits(2*r.Float64()-1))
		}
	case "i64":
		for i := 0; i+8 <= n; i += 8 {
			binary.LittleEndian.PutUint64(b[i:], uint64(r.IntN(1000)))
		}
	case "i32":
		for i := 0; i+4 <= n; i += 4 {
			binary.LittleEndian.PutUint32(b[i:], uint32(r.IntN(1000)))
		}
	case "bool":
		for i := range b {
			b[i] = byte(r.IntN(2))
		}
	case "f8e4m3", "f8e5m2":
		for i := range b {
			b[i] = FiniteFP8(dtype, byte(r.Uint32()))
		}
	case "", "u8", "i8", "bytes":
		for i := range b {
			b[i] = byte(r.Uint32())
		}
	default:
		return nil, fmt.Errorf("no random data for dtype %q", dtype)
	}
	return b, nil
}

// F32ToF16 converts a float32 to IEEE half precision bits, rounding to
// nearest even.
func F32ToF16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int(b>>23&0xff) - 127 + 15
	man := b & 0x7fffff
	switch {
	case b&0x7fffffff == 0:
		return sign
	case exp >= 31:
		return sign | 0x7c00 // overflow to Inf (callers stay in range)
	case exp <= 0:
		if exp < -10 {
			return sign
		}
		man |= 0x800000
		shift := uint(14 - exp)
		h := uint16(man >> shift)
		if rem := man & (1<<shift - 1); rem > 1<<(shift-1) || (rem == 1<<(shift-1) && h&1 == 1) {
			h++
		}
		return sign | h
	}
	h := sign | uint16(exp)<<10 | uint16(man>>13)
	if rem := man & 0x1fff; rem > 0x1000 || (rem == 0x1000 && h&1 == 1) {
		h++
	}
	return h
}

// F16ToF32 converts half precision bits to float32.
func F16ToF32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	man := uint32(h & 0x3ff)
	switch {
	case exp == 0 && man == 0:
		return math.Float32frombits(sign)
	case exp == 0:
		for man&0x400 == 0 {
			man <<= 1
			exp--
		}
		exp++
		man &= 0x3ff
	case exp == 31:
		return math.Float32frombits(sign | 0x7f800000 | man<<13)
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | man<<13)
}

// FiniteFP8 returns the FP8 code c of dtype (f8e4m3: float8_e4m3fn,
// f8e5m2) made finite as kr_fill makes it: a NaN or Inf code becomes the
// largest finite value of its sign; other codes and dtypes are unchanged.
func FiniteFP8(dtype string, c byte) byte {
	switch {
	case dtype == "f8e4m3" && c&0x7f == 0x7f:
		return c - 1
	case dtype == "f8e5m2" && c&0x7c == 0x7c:
		return c&0x80 | 0x7b
	}
	return c
}

// FP8ToF32 decodes an FP8 code of dtype f8e4m3 (float8_e4m3fn: bias 7, no
// Inf, NaN at S.1111.111) or f8e5m2 (IEEE-like: bias 15); it returns NaN
// for other dtypes.
func FP8ToF32(dtype string, c byte) float32 {
	var ebits, mbits, bias int
	switch dtype {
	case "f8e4m3":
		ebits, mbits, bias = 4, 3, 7
		if c&0x7f == 0x7f {
			return float32(math.NaN())
		}
	case "f8e5m2":
		ebits, mbits, bias = 5, 2, 15
		if c&0x7c == 0x7c {
			if c&0x03 != 0 {
				return float32(math.NaN())
			}
			return float32(math.Inf(1 - 2*int(c>>7)))
		}
	default:
		return float32(math.NaN())
	}
	e := int(c>>mbits) & (1<<ebits - 1)
	m := float64(int(c) & (1<<mbits - 1))
	var v float64
	if e == 0 {
		v = math.Ldexp(m, 1-bias-mbits)
	} else {
		v = math.Ldexp(1+m/float64(int(1)<<mbits), e-bias)
	}
	if c&0x80 != 0 {
		v = -v
	}
	return float32(v)
}
