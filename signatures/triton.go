package signatures

import (
	"fmt"
	"strconv"
	"strings"
)

// TritonKind returns the kind of an Inductor-generated kernel name
// (triton_{poi,red,per,tem}_fused_<ops>_<n>): "poi", "red", "per" or
// "tem"; "" for any other name.
func TritonKind(name string) string {
	kind, ok := strings.CutPrefix(name, "triton_")
	if !ok || len(kind) < 4 || kind[3] != '_' {
		return ""
	}
	switch k := kind[:3]; k {
	case "poi", "red", "per", "tem":
		return k
	}
	return ""
}

// deriveTriton computes the stand-in parameters of an Inductor kernel from
// the arguments the profiler recorded for its launch: the tensors it was
// passed (Inductor's in_out_ptr, in_ptr and out_ptr arguments, in that
// order, unnamed in the trace) and, last, its iteration sizes as integer
// scalars (xnumel; ynumel and xnumel for a 2-d tiled pointwise kernel,
// tiled2D; xnumel and r0_numel for reductions).
//
// The cost model is a guess, labelled as one where it is shown: each
// tensor argument is moved once, at most as many of its elements as the
// kernel iterates over (a gather, such as a fused embedding lookup or a
// rotary table indexed by position, never reads more than it indexes).
// An argument both read and written (in_out_ptr) is counted once, so a
// kernel that updates a tensor in place is charged one pass less than it
// moves. Numel is the rows of a reduction (xnumel), the elements of a
// pointwise kernel (its iteration space).
func deriveTriton(kind, op string, ins []Input) (*TensorParams, error) {
	var tensors []Input
	var sizes []int64
	for _, in := range ins {
		switch {
		case in.IsTensor():
			tensors = append(tensors, in)
		case in.Type == "Scalar":
			if n, err := strconv.ParseInt(strings.TrimSpace(in.Value), 10, 64); err == nil && n > 0 && n <= maxNumel {
				sizes = append(sizes, n)
			}
		}
	}
	if len(tensors) == 0 {
		return nil, fmt.Errorf("%s has no tensor arguments", op)
	}
	want := 1
	if kind == "red" || kind == "per" || kind == "poi" && tiled2D(sizes, tensors) {
		want = 2
	}
	if len(sizes) < want {
		names := "xnumel"
		if want == 2 {
			names = "xnumel and r0_numel"
		}
		return nil, fmt.Errorf("%s: want %d integer size argument(s) (%s) after its tensors, the trace gives %d",
			op, want, names, len(sizes))
	}
	sizes = sizes[len(sizes)-want:]
	iter := sizes[0]
	if want == 2 {
		if sizes[0] > maxNumel/sizes[1] {
			return nil, fmt.Errorf("%s: iteration space %d x %d: %w", op, sizes[0], sizes[1], errAbsurd)
		}
		iter *= sizes[1]
	}
	p := &TensorParams{Numel: sizes[0], Shape: sizes}
	if kind == "poi" {
		p.Numel = iter // a pointwise kernel writes its whole iteration space
	}
	for _, t := range tensors {
		p.DTypes = append(p.DTypes, DType(t.Type))
		size := DTypeSize(DType(t.Type))
		if size <= 0 {
			size = 2
		}
		n := t.Numel()
		if n != iter {
			p.Broadcast = true
		}
		p.Bytes += min(n, iter) * size
	}
	if kind == "red" && writesRows(tensors, iter) {
		p.Passes = 2
	}
	p.Math = tritonMath(op, readsAngles(tensors, iter))
	return p, nil
}

// writesRows guesses whether a looped reduction writes a tensor of its
// iteration space, which its epilogue computes from the finished
// reduction in a second loop over the rows (an RMSNorm's normalized
// output): its last tensor argument (Inductor passes out_ptr arguments
// last) has the iteration space's size, or two of its tensors have (a
// kernel that updates its in_out_ptr, first, in place reads a second).
// A plain reduction reads one such tensor and writes a row per xnumel.
func writesRows(tensors []Input, iter int64) bool {
	full := 0
	for _, t := range tensors {
		if t.Numel() == iter {
			full++
		}
	}
	return full >= 2 || tensors[len(tensors)-1].Numel() == iter
}

// tiled2D reports whether a pointwise kernel's last two size arguments
// are a 2-d tiling's ynumel and xnumel (Inductor tiles a pointwise kernel
// in two dimensions to transpose, as the rotary embedding's kernels that
// write q and k in [B, H, S, D] do): their product is the element count of
// one of its tensors. Size variables before a 1-d kernel's xnumel
// (dynamic shapes: ks0, ks1, ...) do not multiply to one.
func tiled2D(sizes []int64, tensors []Input) bool {
	if len(sizes) < 2 {
		return false
	}
	y, x := sizes[len(sizes)-2], sizes[len(sizes)-1]
	if y > maxNumel/x {
		return false
	}
	for _, t := range tensors {
		if t.Numel() == y*x {
			return true
		}
	}
	return false
}

// readsAngles reports whether an Inductor kernel reads an f32 tensor with
// fewer elements than it iterates over, as the angles of a rotary
// embedding are read (computed in f32, broadcast over heads). Inductor
// names every kernel of a fusion group after all its ops: in a compiled
// Llama prefill four kernels carry "cos" and "sin" in their names, and
// only the two that read the angles [32, 512] f32 run slower than their
// bytes, several times slower than a kernel of the same name that reads
// no angles.
func readsAngles(tensors []Input, iter int64) bool {
	for _, t := range tensors {
		if DType(t.Type) == "f32" && t.Numel() < iter {
			return true
		}
	}
	return false
}

// tritonMath returns the transcendental functions that the fused ops in an
// Inductor kernel's name evaluate per element, in a fixed order: sin and
// cos (rotary embeddings), exp (exp, and sigmoid, silu and softmax through
// it), log (log and log_softmax), tanh, erf (gelu's exact form); sin and
// cos only where the kernel reads the angles (readsAngles). Other ops
// (pow, rsqrt, mul, ...) are left to the bytes.
func tritonMath(op string, angles bool) []string {
	_, names, ok := strings.Cut(op, "_fused_")
	if !ok {
		return nil
	}
	has := map[string]bool{}
	for _, w := range strings.Split(names, "_") { // log_softmax: "log" and "softmax"
		if f := tritonFuncs[w]; f != "" && (angles || f != "sin" && f != "cos") {
			has[f] = true
		}
	}
	var out []string
	for _, f := range []string{"sin", "cos", "exp", "log", "tanh", "erf"} {
		if has[f] {
			out = append(out, f)
		}
	}
	return out
}

// tritonFuncs maps a fused op's name to the transcendental it evaluates.
var tritonFuncs = map[string]string{
	"sin": "sin", "cos": "cos", "exp": "exp", "sigmoid": "exp", "silu": "exp", "softmax": "exp",
	"log": "log", "tanh": "tanh", "erf": "erf", "gelu": "erf",
}

// TritonStandIn says how a plain trace's Inductor kernel is stood in for
// (sig.Op names one, TritonKind), or "" when sig is not one: the bytes
// of deriveTriton's model and the transcendentals of its name.
func TritonStandIn(sig *Signature) string {
	kind := TritonKind(sig.Op)
	if kind == "" || kind == "tem" {
		return ""
	}
	what := "moves each tensor argument's bytes once"
	if p := sig.Tensor; p != nil && p.Passes == 2 {
		what += ", its rows a second time after each block's reduction (a looped reduction's epilogue)"
	}
	if p := sig.Tensor; p != nil && len(p.Math) > 0 {
		what += " and evaluates " + strings.Join(p.Math, ", ") + " per element"
	}
	return "Inductor kernel without its binary: a stand-in that " + what + " (a guess from its arguments and name; capture the workload to replay the kernel itself)"
}
