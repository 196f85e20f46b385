package tier3

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kreplay/kreplay/signatures"
)

// Copies and casts: aten::copy_ (into the traced destination, any dtypes
// and strides, the source broadcast), aten::copy, aten::_to_copy,
// aten::to, aten::clone and aten::contiguous (into a new contiguous
// tensor). A copy between equal dtypes moves bits; a cast converts as
// PyTorch's static_cast does. Both run on the strided elementwise kernel,
// whose fast path (contiguous operands) is a vectorized cast.

func init() {
	Register(buildCopy, "aten::copy_", "aten::copy", "aten::_to_copy", "aten::to", "aten::clone", "aten::contiguous")
}

// ewScalarTypes maps c10::ScalarType codes, as the profiler records a
// dtype argument, to kreplay dtypes.
var ewScalarTypes = map[int64]string{
	0: "u8", 1: "i8", 2: "i16", 3: "i32", 4: "i64", 5: "f16", 6: "f32", 7: "f64", 11: "bool", 15: "bf16",
	23: "f8e5m2", 24: "f8e4m3",
}

// ewDTypeArg reads a dtype argument: "" or "None" is no dtype (the
// input's), a ScalarType code is that dtype.
func ewDTypeArg(in signatures.Input) (string, error) {
	v := ewStrip(in.Value)
	if v == "" || v == "None" {
		return "", nil
	}
	c, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return "", fmt.Errorf("%w: dtype argument %q", ErrUnsupported, in.Value)
	}
	d, ok := ewScalarTypes[c]
	if !ok {
		return "", fmt.Errorf("%w: ScalarType %d", ErrUnsupported, c)
	}
	return d, nil
}

// ewAnalyzeCopy reads a copy or cast's signature.
func ewAnalyzeCopy(sig *signatures.Signature) (*ewOpPlan, error) {
	ins := sig.Inputs
	if len(ins) == 0 || !ins[0].IsTensor() {
		return nil, fmt.Errorf("%w: %s without a tensor input", ErrUnsupported, sig.Op)
	}
	pl := &ewOpPlan{code: "COPY", inplace: -1, alpha: ewIntScalar(1)}
	src := &ins[0]
	pl.outDType = signatures.DType(src.Type)
	pl.shape = src.Shape
	switch sig.Op {
	case "aten::copy_", "aten::copy":
		if len(ins) < 2 || !ins[1].IsTensor() {
			return nil, fmt.Errorf("%w: %s without a tensor source", ErrUnsupported, sig.Op)
		}
		src = &ins[1]
		if _, ok := signatures.BroadcastShape(ins[0].Shape, src.Shape); !ok || len(src.Shape) > len(ins[0].Shape) {
			return nil, fmt.Errorf("%w: %s source %v does not broadcast to %v", ErrUnsupported, sig.Op, src.Shape, ins[0].Shape)
		}
		if sig.Op == "aten::copy_" {
			pl.out = &ins[0]
		}
	case "aten::_to_copy":
		if len(ins) > 1 {
			d, err := ewDTypeArg(ins[1])
			if err != nil {
				return nil, err
			}
			if d != "" {
				pl.outDType = d
			}
		}
	case "aten::to":
		switch {
		case len(ins) > 1 && ins[1].IsTensor(): // to.other
			pl.outDType = signatures.DType(ins[1].Type)
		case len(ins) > 1 && ins[1].Type == "Scalar": // to.dtype, to.dtype_layout
			d, err := ewDTypeArg(ins[1])
			if err != nil {
				return nil, err
			}
			if d != "" {
				pl.outDType = d
			}
		case len(ins) > 2 && ins[2].Type == "Scalar": // to.device
			d, err := ewDTypeArg(ins[2])
			if err != nil {
				return nil, err
			}
			if d != "" {
				pl.outDType = d
			}
		}
	case "aten::clone", "aten::contiguous":
	default:
		return nil, fmt.Errorf("%w: %s is not a copy", ErrUnsupported, sig.Op)
	}
	sd := signatures.DType(src.Type)
	if ewCodes[sd] == "" || ewCodes[pl.outDType] == "" {
		return nil, fmt.Errorf("%w: %s from %s to %s", ErrUnsupported, sig.Op, src.Type, pl.outDType)
	}
	pl.args[0] = ewArg{in: src, isSet: true}
	pl.ct = ewCType(sd)
	pl.raw = sd == pl.outDType
	return pl, nil
}

func buildCopy(e *Env, sig *signatures.Signature) (*Instance, error) {
	pl, err := ewAnalyzeCopy(sig)
	if err != nil {
		return nil, err
	}
	pl.pt = e.cfg.ptParse(sig)
	return e.ewInstantiate(pl)
}

// ewKernelDType guesses the element dtype from a kernel's name, for ops
// whose inputs do not say it (a TensorList): OpaqueType<N> (an element of N
// bytes, taken for bool, f16, f32 or i64), else PyTorch's explicit types
// in template arguments ("c10::Half", "c10::BFloat16", "<float", "<double",
// "<long", "<int", "<bool"); "" when the name tells nothing.
func ewKernelDType(kernel string) string {
	if i := strings.Index(kernel, "OpaqueType<"); i >= 0 {
		rest := kernel[i+len("OpaqueType<"):]
		j := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
		if j > 0 {
			switch rest[:j] {
			case "1":
				return "bool"
			case "2":
				return "f16"
			case "4":
				return "f32"
			case "8":
				return "i64"
			}
		}
	}
	for _, c := range []struct{ sub, dtype string }{
		{"c10::BFloat16", "bf16"}, {"c10::Half", "f16"}, {"<float", "f32"}, {"<double", "f64"},
		{"<long", "i64"}, {"<int", "i32"}, {"<bool", "bool"}, {"<signed char", "i8"}, {"<unsigned char", "u8"},
	} {
		if strings.Contains(kernel, c.sub) {
			return c.dtype
		}
	}
	return ""
}
