package whatif

import (
	"math"
	"strings"
	"testing"
)

func TestReference(t *testing.T) {
	enc := func(v []float32, dt string) []byte {
		b, err := encode(v, dt)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	s := float32(1 / math.Sqrt(12.5))
	for _, c := range []struct {
		name  string
		rn    RowNorm
		casts bool
		x, w  []float32
		want  []float32
	}{
		// Rows whose mean square is 1 come out as w times x.
		{"unit rows f16", RowNorm{DType: "f16", Rows: 2, Cols: 4}, true, []float32{1, 1, -1, 1, 2, 0, 0, 0}, []float32{1, 2, 3, 4}, []float32{1, 2, -3, 4, 2, 0, 0, 0}},
		{"f32", RowNorm{DType: "f32", Rows: 1, Cols: 2}, false, []float32{3, 4}, []float32{1, 0.5}, []float32{3 * s, 4 * s * 0.5}},
		// eps is added to the mean square: (3+1)/2 = 2 here, so 2 is 1.
		{"eps", RowNorm{DType: "f32", Rows: 1, Cols: 2, Eps: 1}, false, []float32{1, 1}, []float32{1, 1}, []float32{float32(1 / math.Sqrt(2)), float32(1 / math.Sqrt(2))}},
		// With casts, x * rsqrt is rounded to bf16 before the multiply.
		{"bf16 rounding", RowNorm{DType: "bf16", Rows: 1, Cols: 2}, true, []float32{3, 4}, []float32{1, 1}, []float32{round(3*s, "bf16"), round(4*s, "bf16")}},
	} {
		got, err := Reference(&c.rn, c.casts, enc(c.x, c.rn.DType), enc(c.w, c.rn.DType))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if a := Compare(got, c.want, 1e-6); !a.OK() {
			t.Errorf("%s: %v, want %v (%v)", c.name, got, c.want, a)
		}
	}
	if _, err := Reference(&RowNorm{DType: "f16", Rows: 2, Cols: 4}, true, enc([]float32{1}, "f16"), enc([]float32{1}, "f16")); err == nil {
		t.Error("no error for x of the wrong size")
	}
}

func TestCompare(t *testing.T) {
	nan := float32(math.NaN())
	for _, c := range []struct {
		name      string
		got, want []float32
		beyond    int
		maxErr    float64
	}{
		{"equal", []float32{1, -2}, []float32{1, -2}, 0, 0},
		{"within", []float32{1.01, -2}, []float32{1, -2}, 0, 0.01},
		{"beyond", []float32{1.1, -2}, []float32{1, -2}, 1, 0.1},
		{"NaN both", []float32{nan, 1}, []float32{nan, 1}, 0, 0},
		{"NaN one side", []float32{nan, 1}, []float32{0, 1}, 1, 0},
		{"infinity one side", []float32{float32(math.Inf(1)), 1}, []float32{0, 1}, 1, 0},
		{"lengths", []float32{1}, []float32{1, 2}, 2, 0},
	} {
		a := Compare(c.got, c.want, 0.01)
		if a.Beyond != c.beyond || math.Abs(a.MaxAbsErr-c.maxErr) > 1e-6 || a.OK() != (c.beyond == 0) {
			t.Errorf("%s: %+v, want %d beyond, max err %g", c.name, a, c.beyond, c.maxErr)
		}
	}
	a := Compare([]float32{1.1, -2}, []float32{1, -2}, 0.01)
	if s := a.String(); !strings.Contains(s, "1 elements beyond") || !strings.Contains(s, "over 2 elements") {
		t.Errorf("String: %s", s)
	}
}
