package tier3

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/kreplay/kreplay/signatures"
)

// smTracedSigs returns the embedded traces' softmax signatures.
func smTracedSigs(t testing.TB) []*signatures.Signature {
	t.Helper()
	return tracedTier3(t, func(s *signatures.Signature) bool { return s.Op == "aten::_softmax" || s.Op == "aten::softmax" })
}

// smPTSig is a softmax signature with a synthetic softmax_warp_forward
// kernel of log2 elements and PyTorch's launch shape for it.
func smPTSig(t *testing.T, op string, ins []rdIn, log2 int64, log bool) *signatures.Signature {
	sig := rdSig(t, op, ins...)
	x := sig.Inputs[0]

	rows := int64(1)
	for _, d := range x.Shape[:len(x.Shape)-1] {
		rows *= d
	}
	np := int64(1) << log2
	ws := min(np, 32)
	wb := int64(1)
	if np <= 128 {
		wb = 2
	}
	wpb := 128 / ws
	sig.Kernel = fmt.Sprintf("void (anonymous namespace)::softmax_warp_forward<float, float, float, %d, %s, false>(float*, float const*, int, int, int, bool const*, int, bool)", log2, strconv.FormatBool(log))
	sig.Launch = &signatures.Launch{Grid: [3]int64{(rows + wpb*wb - 1) / (wpb * wb), 1, 1}, Block: [3]int64{ws, wpb, 1}}
	return sig
}

// TestSmParsePT reads the traced softmax_warp_forward kernels: every
// traced one is replayed faithfully, with the traced launch.
func TestSmParsePT(t *testing.T) {
	n := 0
	for _, sig := range smTracedSigs(t) {
		s, err := parseSoftmax(sig)
		if err != nil {
			t.Fatal(err)
		}
		x := sig.Inputs[0]
		p, ok := (Config{}).smParsePT(sig, s, x.Shape, ContiguousStrides(x.Shape))
		if !ok {
			t.Errorf("%s %.80s: not replayed faithfully", sig.Label, sig.Kernel)
			continue
		}
		if int64(p.grid[0]) != sig.Launch.Grid[0] || int64(p.block[1]) != sig.Launch.Block[1] {
			t.Errorf("%s: launch %v %v", sig.Label, p.grid, p.block)
		}
		n++
	}
	if n == 0 {
		t.Fatal("no traced softmax_warp_forward")
	}
	sig := smPTSig(t, "aten::_softmax", []rdIn{rdT("float", 10, 100), rdS("-1"), rdS("False")}, 7, false)
	s, _ := parseSoftmax(sig)
	if _, ok := (Config{}).smParsePT(sig, s, []int64{10, 100}, []int64{100, 1}); !ok {
		t.Error("synthetic kernel not recognised")
	}
	for name, f := range map[string]func(){
		"rows too long": func() { sig.Kernel = "void softmax_warp_forward<float, float, float, 6, false, false>(float*)" },
		"log-ness":      func() { sig.Kernel = "void softmax_warp_forward<float, float, float, 7, true, false>(float*)" },
		"masked":        func() { sig.Kernel = "void softmax_warp_forward<float, float, float, 7, false, true>(float*)" },
		"other kernel":  func() { sig.Kernel = "void cunn_SoftMaxForward<8, float, float, float>(float*)" },
		"small grid":    func() { sig.Launch.Grid[0] = 1 },
	} {
		old, oldL := sig.Kernel, *sig.Launch
		f()
		if _, ok := (Config{}).smParsePT(sig, s, []int64{10, 100}, []int64{100, 1}); ok {
			t.Errorf("%s: accepted", name)
		}
		sig.Kernel, *sig.Launch = old, oldL
	}
	if _, ok := (Config{}).smParsePT(sig, s, []int64{10, 100}, []int64{1, 10}); ok {
		t.Error("transposed: accepted")
	}
	if _, ok := (Config{NoFaithful: true}).smParsePT(sig, s, []int64{10, 100}, []int64{100, 1}); ok {
		t.Error("Faithful off: accepted")
	}
}
