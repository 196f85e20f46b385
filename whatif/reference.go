package whatif

import (
	"fmt"
	"math"
)

// Reference computes on the host what a row-norm recipe's chain computes
// for x [rows, cols] and w [cols], given as little-endian storage of
// rn.DType, the way PyTorch's kernels do it in their dtypes: x in f32,
// the mean of its squares (an f32 sum times 1/cols), plus eps in f32,
// rsqrt, times x in f32; with casts (an f16/bf16 model) that product is
// rounded to the dtype and multiplied by w in f32, then rounded again;
// without (f32), multiplied by w. The sum's order and rsqrt's last bit
// may differ from the GPU's (rsqrtf is within 2 ulp): compare with a
// tolerance. It returns y's values.
func Reference(rn *RowNorm, casts bool, x, w []byte) ([]float32, error) {
	xs, err := decode(x, rn.DType)
	if err != nil {
		return nil, fmt.Errorf("x: %w", err)
	}
	ws, err := decode(w, rn.DType)
	if err != nil {
		return nil, fmt.Errorf("w: %w", err)
	}
	rows, cols := int(rn.Rows), int(rn.Cols)
	if len(xs) != rows*cols || len(ws) != cols {
		return nil, fmt.Errorf("x of %d values, w of %d, for %d rows of %d", len(xs), len(ws), rows, cols)
	}
	y := make([]float32, len(xs))
	eps, inv := float32(rn.Eps), 1/float32(cols)
	for r := 0; r < rows; r++ {
		row := xs[r*cols : (r+1)*cols]
		var ss float64
		for _, v := range row {
			ss += float64(v * v)
		}
		v := float32(ss)*inv + eps
		rs := float32(1 / math.Sqrt(float64(v)))
		for j, xv := range row {
			h := xv * rs
			if casts {
				y[r*cols+j] = round(ws[j]*round(h, rn.DType), rn.DType)
			} else {
				y[r*cols+j] = ws[j] * h
			}
		}
	}
	return y, nil
}

// Agreement is how close an output is to a reference.
type Agreement struct {
	// MaxAbsErr is the largest |got - want|; Scale the largest |want|;
	// RelErr MaxAbsErr / Scale.
	MaxAbsErr float64 `json:"max_abs_err"`
	Scale     float64 `json:"scale"`
	RelErr    float64 `json:"rel_err"`
	// Beyond counts the elements off by more than Tolerance x Scale, NaN
	// or infinity on one side only included.
	Beyond    int     `json:"beyond"`
	Elements  int     `json:"elements"`
	Tolerance float64 `json:"tolerance"`
}

// OK reports whether every element is within the tolerance.
func (a Agreement) OK() bool { return a.Beyond == 0 && a.Elements > 0 }

// String says it in one line.
func (a Agreement) String() string {
	verdict := "within"
	if !a.OK() {
		verdict = fmt.Sprintf("%d elements beyond", a.Beyond)
	}
	return fmt.Sprintf("max |err| %.3g of max |y| %.3g (%.2e relative), %s %.0e x max |y| over %d elements",
		a.MaxAbsErr, a.Scale, a.RelErr, verdict, a.Tolerance, a.Elements)
}

// Compare measures got against want with a tolerance relative to want's
// largest magnitude. Lengths that differ are all beyond.
func Compare(got, want []float32, tol float64) Agreement {
	a := Agreement{Elements: len(want), Tolerance: tol}
	if len(got) != len(want) {
		a.Beyond = max(len(got), len(want))
		return a
	}
	for _, v := range want {
		if f := math.Abs(float64(v)); f > a.Scale && !math.IsInf(f, 0) {
			a.Scale = f
		}
	}
	bound := tol * a.Scale
	for i := range want {
		g, w := float64(got[i]), float64(want[i])
		d := math.Abs(g - w)
		switch {
		case math.IsNaN(g) && math.IsNaN(w), g == w:
			continue
		case math.IsNaN(d) || math.IsInf(d, 0):
			a.Beyond++ // and out of MaxAbsErr, which JSON could not hold
			continue
		}
		a.MaxAbsErr = max(a.MaxAbsErr, d)
		if d > bound {
			a.Beyond++
		}
	}
	if a.Scale > 0 {
		a.RelErr = a.MaxAbsErr / a.Scale
	}
	return a
}
