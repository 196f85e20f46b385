package cublas

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Float32ToHalf converts f to IEEE 754 binary16 bits, rounding to nearest
// even; overflow gives infinity and NaN stays NaN.
func Float32ToHalf(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int(b>>23) & 0xff
	mant := b & 0x7fffff
	if exp == 0xff {
		if mant != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	}
	e := exp - 127 + 15
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e <= 0 {
		if e < -10 {
			return sign
		}
		sig := mant | 0x800000
		shift := uint(14 - e)
		h := sig >> shift
		rem := sig & (1<<shift - 1)
		halfway := uint32(1) << (shift - 1)
		if rem > halfway || (rem == halfway && h&1 == 1) {
			h++
		}
		return sign | uint16(h)
	}
	h := uint32(e)<<10 | mant>>13
	rem := mant & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && h&1 == 1) {
		h++ // a carry into the exponent rounds up correctly, to infinity at most
	}
	return sign | uint16(h)
}

// HalfToFloat32 converts IEEE 754 binary16 bits to float32 exactly.
func HalfToFloat32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	case exp == 0:
		if mant == 0 {
			return math.Float32frombits(sign)
		}
		e := uint32(127 - 15 + 1)
		for mant&0x400 == 0 {
			mant <<= 1
			e--
		}
		return math.Float32frombits(sign | e<<23 | (mant&0x3ff)<<13)
	default:
		return math.Float32frombits(sign | (exp+127-15)<<23 | mant<<13)
	}
}

// Float32ToBFloat16 converts f to bfloat16 bits, rounding to nearest even.
func Float32ToBFloat16(f float32) uint16 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 { // NaN: keep it quiet
		return uint16(b>>16) | 0x40
	}
	return uint16((b + 0x7fff + (b>>16)&1) >> 16)
}

// BFloat16ToFloat32 converts bfloat16 bits to float32 exactly.
func BFloat16ToFloat32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// ScalarBytes encodes v as one host scalar of type t (little endian), as
// cuBLAS and cuBLASLt read alpha and beta in host pointer mode. Supported
// types are CUDA_R_16F, CUDA_R_16BF, CUDA_R_32F, CUDA_R_64F and
// CUDA_R_32I; use ComputeType.ScaleType to pick t for a GEMM.
func ScalarBytes(t DataType, v float64) ([]byte, error) {
	switch t {
	case R16F:
		return binary.LittleEndian.AppendUint16(nil, Float32ToHalf(float32(v))), nil
	case R16BF:
		return binary.LittleEndian.AppendUint16(nil, Float32ToBFloat16(float32(v))), nil
	case R32F:
		return binary.LittleEndian.AppendUint32(nil, math.Float32bits(float32(v))), nil
	case R64F:
		return binary.LittleEndian.AppendUint64(nil, math.Float64bits(v)), nil
	case R32I:
		if v != math.Trunc(v) || v < math.MinInt32 || v > math.MaxInt32 {
			return nil, fmt.Errorf("cublas: scalar %v is not representable as %v", v, t)
		}
		return binary.LittleEndian.AppendUint32(nil, uint32(int32(v))), nil
	}
	return nil, fmt.Errorf("cublas: unsupported scalar type %v", t)
}
