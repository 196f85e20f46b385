package whatif

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Conversions between float32 and the 16-bit dtypes, rounding to nearest
// even as the GPU's cvt.rn instructions (and PyTorch's casts) do.

// halfToFloat converts an IEEE f16 to float32 (exact).
func halfToFloat(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	e, m := uint32(h>>10)&0x1f, uint32(h&0x3ff)
	switch {
	case e == 0 && m == 0:
		return math.Float32frombits(sign)
	case e == 31:
		return math.Float32frombits(sign | 0x7f800000 | m<<13)
	case e == 0: // subnormal: m x 2^-24
		f := float32(m) * (1.0 / (1 << 24))
		if sign != 0 {
			f = -f
		}
		return f
	}
	return math.Float32frombits(sign | (e+127-15)<<23 | m<<13)
}

// floatToHalf rounds a float32 to the nearest f16, ties to even; NaN is
// the canonical NaN, 0x7fff with f's sign.
func floatToHalf(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	abs := b & 0x7fffffff
	switch {
	case abs > 0x7f800000:
		return sign | 0x7fff
	case abs >= 0x477ff000: // 65520 and up round to infinity
		return sign | 0x7c00
	}
	e := int(abs>>23) - 127 + 15
	m := abs & 0x7fffff
	if e <= 0 {
		if e < -10 {
			return sign
		}
		m |= 0x800000
		sh := uint(14 - e)
		h, rem, half := m>>sh, m&(1<<sh-1), uint32(1)<<(sh-1)
		if rem > half || rem == half && h&1 == 1 {
			h++
		}
		return sign | uint16(h)
	}
	h := uint32(e)<<10 | m>>13
	if rem := m & 0x1fff; rem > 0x1000 || rem == 0x1000 && h&1 == 1 {
		h++ // a carry into the exponent is the next binade, as it should be
	}
	return sign | uint16(h)
}

// bf16ToFloat converts a bfloat16 to float32 (exact).
func bf16ToFloat(b uint16) float32 { return math.Float32frombits(uint32(b) << 16) }

// floatToBF16 rounds a float32 to the nearest bfloat16, ties to even; NaN
// stays a quiet NaN.
func floatToBF16(f float32) uint16 {
	u := math.Float32bits(f)
	if u&0x7fffffff > 0x7f800000 {
		return uint16(u>>16) | 0x40
	}
	return uint16((u + 0x7fff + (u>>16)&1) >> 16)
}

// round rounds v to dtype's precision ("f16", "bf16"; "f32" as it is).
func round(v float32, dtype string) float32 {
	switch dtype {
	case "f16":
		return halfToFloat(floatToHalf(v))
	case "bf16":
		return bf16ToFloat(floatToBF16(v))
	}
	return v
}

// decode reads little-endian storage of dtype ("f16", "bf16", "f32") as
// float32 values.
func decode(raw []byte, dtype string) ([]float32, error) {
	le := binary.LittleEndian
	switch dtype {
	case "f16", "bf16":
		if len(raw)%2 != 0 {
			return nil, fmt.Errorf("%d bytes of %s", len(raw), dtype)
		}
		out := make([]float32, len(raw)/2)
		for i := range out {
			h := le.Uint16(raw[2*i:])
			if dtype == "f16" {
				out[i] = halfToFloat(h)
			} else {
				out[i] = bf16ToFloat(h)
			}
		}
		return out, nil
	case "f32":
		if len(raw)%4 != 0 {
			return nil, fmt.Errorf("%d bytes of f32", len(raw))
		}
		out := make([]float32, len(raw)/4)
		for i := range out {
			out[i] = math.Float32frombits(le.Uint32(raw[4*i:]))
		}
		return out, nil
	}
	return nil, fmt.Errorf("dtype %s is not decoded", dtype)
}

// encode writes float32 values as little-endian storage of dtype, rounding
// to nearest even.
func encode(v []float32, dtype string) ([]byte, error) {
	le := binary.LittleEndian
	switch dtype {
	case "f16", "bf16":
		out := make([]byte, 2*len(v))
		for i, f := range v {
			if dtype == "f16" {
				le.PutUint16(out[2*i:], floatToHalf(f))
			} else {
				le.PutUint16(out[2*i:], floatToBF16(f))
			}
		}
		return out, nil
	case "f32":
		out := make([]byte, 4*len(v))
		for i, f := range v {
			le.PutUint32(out[4*i:], math.Float32bits(f))
		}
		return out, nil
	}
	return nil, fmt.Errorf("dtype %s is not encoded", dtype)
}
