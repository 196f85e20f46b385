package roofline

import (
	"strings"

	"github.com/kreplay/kreplay/signatures"
)

// PeakDType says which GEMM peak holds sig's FLOPs: for a GEMM or
// attention, its input dtype's ("f8e5m2" is held to "f8e4m3"'s peak, the
// same tensor-core rate); for every other kernel "f32", the CUDA cores'
// FP32 rate, since PyTorch's elementwise, reduction, norm and softmax
// kernels compute in f32 whatever the tensors' dtype. why is not empty
// for a signature the roofline does not place: a collective (bounded by
// the interconnect) or a copy to or from the host (bounded by the host
// link).
func PeakDType(sig *signatures.Signature) (dtype, why string) {
	switch {
	case sig.Class == signatures.ClassCollective || sig.Collective != nil:
		return "", "a collective: its roof is the interconnect"
	case sig.Memory != nil:
		if k := sig.Memory.Kind; k != "" && k != signatures.DtoD {
			return "", "a " + string(k) + " copy: its roof is the host link"
		}
		return "", ""
	case sig.Class == signatures.ClassGEMM || sig.Class == signatures.ClassAttention:
		dt := ""
		if g := sig.GEMM; g != nil {
			dt = g.AType
		} else {
			dt = firstFloat(sig)
		}
		if strings.HasPrefix(dt, "f8") {
			dt = "f8e4m3"
		}
		if dt != "" {
			return dt, ""
		}
	}
	return "f32", ""
}

// firstFloat is the dtype of sig's first floating-point tensor input, or
// "".
func firstFloat(sig *signatures.Signature) string {
	var dts []string
	if t := sig.Tensor; t != nil {
		dts = t.DTypes
	}
	for _, in := range sig.Inputs {
		if in.IsTensor() {
			dts = append(dts, signatures.DType(in.Type))
		}
	}
	for _, d := range dts {
		switch {
		case d == "f16", d == "bf16", d == "f32", d == "f64", strings.HasPrefix(d, "f8"):
			return d
		}
	}
	return ""
}
