package tier3

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/kreplay/kreplay/internal/launch"
)

// Reading tensors' bytes as values, and comparing values with a reference.

// elem reads element i of raw, a storage of dtype, as a float64.
func elem(raw []byte, i int64, dtype string) float64 {
	switch dtype {
	case "f16":
		return float64(launch.F16ToF32(binary.LittleEndian.Uint16(raw[2*i:])))
	case "bf16":
		return float64(math.Float32frombits(uint32(binary.LittleEndian.Uint16(raw[2*i:])) << 16))
	case "f32":
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:])))
	case "f64":
		return math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:]))
	case "i64":
		return float64(int64(binary.LittleEndian.Uint64(raw[8*i:])))
	case "i32":
		return float64(int32(binary.LittleEndian.Uint32(raw[4*i:])))
	case "bool", "u8":
		return float64(raw[i])
	case "f8e4m3", "f8e5m2":
		return float64(launch.FP8ToF32(dtype, raw[i]))
	}
	panic("dtype " + dtype)
}

// tolerance is the relative error allowed for an output dtype.
func tolerance(dtype string) float64 {
	switch dtype {
	case "f16":
		return 2e-3
	case "bf16":
		return 1.6e-2
	case "f32":
		return 1e-5
	}
	return 0
}

// checkClose compares got with want by ||got-want|| / ||want|| within the
// dtype's tolerance; NaN never passes.
func checkClose(t *testing.T, name string, got, want []float64, dtype string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", name, len(got), len(want))
	}
	var num, den float64
	for i := range got {
		if math.IsNaN(got[i]) != math.IsNaN(want[i]) {
			t.Fatalf("%s: element %d = %v, want %v", name, i, got[i], want[i])
		}
		if math.IsNaN(want[i]) {
			continue
		}
		d := got[i] - want[i]
		num += d * d
		den += want[i] * want[i]
	}
	tol := tolerance(dtype)
	if den == 0 {
		den = 1
	}
	if rel := math.Sqrt(num / den); rel > tol || math.IsNaN(rel) {
		t.Errorf("%s: relative error %.3g, tolerance %.3g", name, rel, tol)
	}
}

// viewValues reads the strided view x of the storage raw as float64
// values in row-major order of its shape (bool and integers as their
// values).
func viewValues(raw []byte, x *Tensor) []float64 {
	n := x.Numel()
	out := make([]float64, n)
	idx := make([]int64, len(x.Shape))
	for i := int64(0); i < n; i++ {
		var off int64
		for d := range idx {
			off += idx[d] * x.Strides[d]
		}
		out[i] = elem(raw, off, x.DType)
		for d := len(idx) - 1; d >= 0; d-- {
			idx[d]++
			if idx[d] < x.Shape[d] {
				break
			}
			idx[d] = 0
		}
	}
	return out
}
