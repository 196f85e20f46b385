package tier3

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/kreplay/kreplay/signatures"
)

// Scalars and PyTorch's type promotion for the elementwise family.

// ewCategory orders dtypes as PyTorch's promotion does: bool < integral <
// floating.
type ewCategory int

const (
	ewBoolCat ewCategory = iota
	ewIntCat
	ewFloatCat
)

func ewCategoryOf(dtype string) ewCategory {
	switch dtype {
	case "bool":
		return ewBoolCat
	case "f16", "bf16", "f32", "f64", "f8e4m3", "f8e5m2":
		return ewFloatCat
	}
	return ewIntCat
}

// ewScalar is a constant operand (a profiler Scalar): its value as a float
// and as an integer (the float truncated), and its category.
type ewScalar struct {
	f   float64
	i   int64
	cat ewCategory
}

// ewParseScalar reads a profiler Concrete Inputs value: "True"/"False",
// integers ("-1"), floats ("1.", "0.70710678118654757", "-inf", "nan",
// "1e-05").
func ewParseScalar(v string) (ewScalar, error) {
	v = strings.TrimSpace(v)
	switch v {
	case "True", "true":
		return ewScalar{f: 1, i: 1, cat: ewBoolCat}, nil
	case "False", "false":
		return ewScalar{cat: ewBoolCat}, nil
	case "":
		return ewScalar{}, fmt.Errorf("%w: scalar value not traced", ErrUnsupported)
	}
	if i, err := strconv.ParseInt(v, 10, 64); err == nil {
		return ewScalar{f: float64(i), i: i, cat: ewIntCat}, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return ewScalar{}, fmt.Errorf("%w: scalar %q", ErrUnsupported, v)
	}
	s := ewScalar{f: f, cat: ewFloatCat}
	if t := math.Trunc(f); !math.IsNaN(t) && t >= math.MinInt64 && t <= math.MaxInt64 {
		s.i = int64(t)
	}
	return s, nil
}

// ewIntScalar is the integer scalar i.
func ewIntScalar(i int64) ewScalar { return ewScalar{f: float64(i), i: i, cat: ewIntCat} }

// dtype is the dtype a scalar promotes as when it is a wrapped number:
// bool, i64, or the default dtype f32 for floats.
func (s ewScalar) dtype() string {
	switch s.cat {
	case ewBoolCat:
		return "bool"
	case ewIntCat:
		return "i64"
	}
	return "f32"
}

// ewPromoteTypes is torch.promote_types for the real dtypes.
func ewPromoteTypes(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "" || a == b:
		return a
	}
	ca, cb := ewCategoryOf(a), ewCategoryOf(b)
	if ca != cb {
		if ca > cb {
			return a
		}
		return b
	}
	switch ca {
	case ewFloatCat:
		if (a == "f16" && b == "bf16") || (a == "bf16" && b == "f16") {
			return "f32"
		}
		rank := map[string]int{"f16": 1, "bf16": 1, "f32": 2, "f64": 3}
		if rank[a] >= rank[b] {
			return a
		}
		return b
	case ewIntCat:
		if (a == "u8" && b == "i8") || (a == "i8" && b == "u8") {
			return "i16"
		}
		rank := map[string]int{"u8": 1, "i8": 1, "i16": 2, "i32": 3, "i64": 4}
		if rank[a] >= rank[b] {
			return a
		}
		return b
	}
	return a
}

// Operand classes of PyTorch's result-type computation.
type ewClass int

const (
	ewDimTensor ewClass = iota // a tensor with dimensions
	ewZeroDim                  // a 0-dim tensor
	ewWrapped                  // a wrapped number or a Scalar
)

// ewPromoOperand is an operand as type promotion sees it.
type ewPromoOperand struct {
	dtype string
	class ewClass
}

// ewResultType is at::result_type: dimensioned tensors decide, unless a
// 0-dim tensor or wrapped number is of a higher category (float over
// integral over bool); wrapped floats count as the default dtype f32.
func ewResultType(ops []ewPromoOperand) string {
	var dim, zero, wrapped string
	for _, o := range ops {
		switch o.class {
		case ewDimTensor:
			dim = ewPromoteTypes(dim, o.dtype)
		case ewZeroDim:
			zero = ewPromoteTypes(zero, o.dtype)
		default:
			d := o.dtype
			if ewCategoryOf(d) == ewFloatCat {
				d = "f32"
			}
			wrapped = ewPromoteTypes(wrapped, d)
		}
	}
	return ewCombine(dim, ewCombine(zero, wrapped))
}

// ewCombine is combine_categories(higher, lower).
func ewCombine(higher, lower string) string {
	switch {
	case higher == "":
		return lower
	case lower == "":
		return higher
	case ewCategoryOf(higher) == ewFloatCat:
		return higher
	case higher == "bool" || ewCategoryOf(lower) == ewFloatCat:
		return ewPromoteTypes(higher, lower)
	}
	return higher
}

// ewPromoOf classifies a traced input for type promotion. A 0-dim tensor
// of profiler type "double" is taken for a wrapped Python float (what
// PyTorch passes for `x * 0.5`), so it promotes as the default dtype; other
// 0-dim tensors promote as 0-dim tensors of their dtype. Scalars promote as
// wrapped numbers of their value's category.
func ewPromoOf(in signatures.Input) (ewPromoOperand, error) {
	if in.IsTensor() {
		d := signatures.DType(in.Type)
		switch {
		case len(in.Shape) > 0:
			return ewPromoOperand{dtype: d, class: ewDimTensor}, nil
		case in.Type == "double":
			return ewPromoOperand{dtype: d, class: ewWrapped}, nil
		}
		return ewPromoOperand{dtype: d, class: ewZeroDim}, nil
	}
	if in.Type == "Scalar" {
		s, err := ewParseScalar(in.Value)
		if err != nil {
			return ewPromoOperand{}, err
		}
		return ewPromoOperand{dtype: s.dtype(), class: ewWrapped}, nil
	}
	return ewPromoOperand{}, fmt.Errorf("%w: operand of type %q", ErrUnsupported, in.Type)
}
