package tier3

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/internal/gputest"
	"github.com/kreplay/kreplay/internal/nvrtc"
	"github.com/kreplay/kreplay/signatures"
)

// rdKernelCase is a kernel source of the reduction family and the kernels
// a replay loads from it.
type rdKernelCase struct {
	name  string
	src   Source
	funcs []string
}

// rdKernelCases derives, through the builders' own parse, plan and define
// steps, the kernels that the GPU tests' signatures compile.
func rdKernelCases(t *testing.T) []rdKernelCase {
	t.Helper()
	const sms = planSMs
	var cases []rdKernelCase
	tensor := func(sig *signatures.Signature) (shape, strides []int64, esize int64) {
		x := sig.Inputs[0]
		st := x.Strides
		if len(st) != len(x.Shape) {
			st = ContiguousStrides(x.Shape)
		}
		return x.Shape, st, signatures.DTypeSize(signatures.DType(x.Type))
	}
	for _, c := range reduceGPUCases {
		sig := rdSig(t, c.op, c.ins...)
		_, p, defs := rdCaseDefines(t, c.name, sig, parseReduce, func(s *reduceSpec) (*rdPlan, error) {
			shape, strides, esize := tensor(sig)
			op := s.op
			if s.indices {
				op = map[rdOp]rdOp{rdMax: rdArgmax, rdMin: rdArgmin, rdArgmax: rdArgmax, rdArgmin: rdArgmin}[op]
			}
			return planReduce(shape, strides, s.reduced(len(shape)), esize, op.isArg(), sms)
		}, reduceDefines)
		fn := "rd_rows"
		if p.cols {
			fn = "rd_cols"
		}
		cases = append(cases, rdKernelCase{"reduce " + c.name, rdSource("reduce.cu", reduceSource, defs), []string{fn, "rd_finish"}})
	}
	planSM := func(sig *signatures.Signature) func(*smSpec) (*smPlan, error) {
		return func(s *smSpec) (*smPlan, error) {
			shape, strides, esize := tensor(sig)
			return planSoftmax(shape, strides, s.dim, esize, sms)
		}
	}
	for _, c := range softmaxGPUCases {
		sig := rdSig(t, c.op, c.ins...)
		_, p, defs := rdCaseDefines(t, c.name, sig, parseSoftmax, planSM(sig), softmaxDefines)
		cases = append(cases, rdKernelCase{"softmax " + c.name, rdSource("softmax.cu", softmaxSource, defs), []string{p.kernel}})
	}
	for _, sig := range append(smTracedSigs(t), smPTGPUSigs(t)...) {
		s, _, defs := rdCaseDefines(t, sig.Label, sig, parseSoftmax, planSM(sig), softmaxDefines)
		shape, strides, _ := tensor(sig)
		if pt, ok := (Config{}).smParsePT(sig, s, shape, strides); ok {
			defs["SM_PT_LOG2"] = fmt.Sprint(pt.log2)
			cases = append(cases, rdKernelCase{"softmax faithful " + sig.Label, rdSource("softmax.cu", softmaxSource, defs), []string{"sm_pt_warp"}})
		}
	}
	for _, c := range layerNormGPUCases {
		sig := rdSig(t, c.op, c.ins...)
		_, p, defs := rdCaseDefines(t, c.name, sig, parseLayerNorm, func(s *lnSpec) (*lnPlan, error) {
			shape, strides, esize := tensor(sig)
			return planLayerNorm(shape, strides, s.axis, esize, sms)
		}, layerNormDefines)
		cases = append(cases, rdKernelCase{"layer norm " + c.name, rdSource("norm.cu", normSource, defs), []string{p.kernel}})
	}
	for _, c := range scanGPUCases {
		sig := rdSig(t, c.op, c.ins...)
		_, p, defs := rdCaseDefines(t, c.name, sig, parseScan, func(s *scSpec) (*scPlan, error) {
			shape, strides, _ := tensor(sig)
			return planScan(shape, strides, s.dim, sms)
		}, scanDefines)
		cases = append(cases, rdKernelCase{"scan " + c.name, rdSource("scan.cu", scanSource, defs), []string{p.kernel}})
	}
	return cases
}

// rdCaseDefines runs sig through a builder's parse, plan and define
// steps and returns their results; a failing step fails the test, naming
// the case.
func rdCaseDefines[S, P any](t *testing.T, name string, sig *signatures.Signature, parse func(*signatures.Signature) (S, error),
	plan func(S) (P, error), defines func(S, P) (map[string]string, error)) (S, P, map[string]string) {
	t.Helper()
	s, err := parse(sig)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	p, err := plan(s)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	defs, err := defines(s, p)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return s, p, defs
}

// TestRdKernelsCompile compiles, with NVRTC for sm_90 but no GPU, every
// kernel the GPU tests of the reduction family load, so that a source
// error shows on any machine with NVRTC. Binaries go through the
// Compiler's caches, so a second run is quick. Skipped without NVRTC (fails instead under KREPLAY_REQUIRE_GPU).
func TestRdKernelsCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles dozens of kernels")
	}
	gputest.Require(t, nvrtc.Init)
	c, err := NewCompiler(9, 0)
	if err != nil {
		gputest.Skipf(t, "NVRTC not usable: %v", err)
	}
	done := map[string]bool{}
	for _, kc := range rdKernelCases(t) {
		opts := kc.src.options(c.arch)
		h := sha256.New()
		fmt.Fprintf(h, "%s\x00%s\x00nvrtc %s\x00", kc.src.Code, strings.Join(opts, " "), c.ver)
		key := hex.EncodeToString(h.Sum(nil))[:32]
		if done[key] {
			continue
		}
		done[key] = true
		bin, err := c.binary(key, kc.src, opts)
		if err != nil {
			t.Errorf("%s (%v): %v", kc.name, kc.src.Defines, err)
			continue
		}
		for _, f := range kc.funcs {
			if !bytes.Contains(bin, []byte(f)) {
				t.Errorf("%s (%v): no kernel %s in the binary", kc.name, kc.src.Defines, f)
			}
		}
	}
	t.Logf("%d distinct kernel sources, %d compiled (others cached)", len(done), c.Compiles)
}
