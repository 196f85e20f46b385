package launch

import "math"

// F32ToFP8 encodes f as an FP8 code of dtype, as PyTorch's casts to
// float8_e4m3fn and float8_e5m2 do (c10's conversions from float): to the
// nearest value, ties to even, subnormals included. float8_e4m3fn has no
// Inf: what rounds beyond its largest value, 448, and Inf and NaN become
// NaN (S.1111.111). float8_e5m2 rounds beyond 57344 to Inf, and NaN stays
// NaN (S.11111.11). Other dtypes give 0 and false.
func F32ToFP8(dtype string, f float32) (byte, bool) {
	var mbits, bias int
	switch dtype {
	case "f8e4m3":
		mbits, bias = 3, 7
	case "f8e5m2":
		mbits, bias = 2, 15
	default:
		return 0, false
	}
	u := math.Float32bits(f)
	sign := byte(u >> 24 & 0x80)
	u &= 0x7fffffff
	if u > 0x7f800000 { // NaN: S.1111.111 in both formats
		return sign | 0x7f, true
	}
	a := float64(math.Float32frombits(u))
	// The subnormals' step, 2^(1-bias-mbits): below the smallest normal,
	// 2^(1-bias), the code is the number of steps, rounded to even.
	if a < math.Ldexp(1, 1-bias) {
		return sign | byte(math.RoundToEven(math.Ldexp(a, bias+mbits-1))), true
	}
	// A normal: round the float32's mantissa to mbits, ties to even (a
	// carry into the exponent is the next binade's first value).
	drop := uint32(23 - mbits)
	r := u + (1<<(drop-1) - 1) + (u >> drop & 1)
	e := int(r>>23) - 127 + bias
	code := e<<mbits | int(r>>drop)&(1<<mbits-1)
	switch {
	case dtype == "f8e4m3" && code > 0x7e:
		return sign | 0x7f, true
	case dtype == "f8e5m2" && code >= 0x7c:
		return sign | 0x7c, true
	}
	return sign | byte(code), true
}
