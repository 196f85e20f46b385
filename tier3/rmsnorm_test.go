package tier3

import (
	"encoding/binary"
	"fmt"
	"math"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/nvrtc"
	"github.com/kreplay/kreplay/signatures"
)

// The kernel names PyTorch 2.11's profiler records for the fused RMS norm
// (layer norm kernels instantiated with rms_norm = true).
const (
	rmsVecKernel     = "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float, true>(int, float, c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, float*, float*, c10::BFloat16*)"
	rmsMomentsKernel = "void at::native::(anonymous namespace)::RowwiseMomentsCUDAKernel<c10::BFloat16, float, true>(long, float, c10::BFloat16 const*, float*, float*)"
	rmsForwardKernel = "void at::native::(anonymous namespace)::LayerNormForwardCUDAKernel<c10::BFloat16, float, true>(long, c10::BFloat16 const*, float const*, float const*, c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16*)"
)

// rmsTraced returns op's signature over ins with the traced kernel and
// launch (grid rows, block (bx, by)); kernel "" keeps the test kernel.
func rmsTraced(t *testing.T, op, kernel string, rows, bx, by int64, ins ...rdIn) *signatures.Signature {
	t.Helper()
	sig := rdSig(t, op, ins...)
	if kernel != "" {
		sig.Kernel = kernel
		sig.Launch = &signatures.Launch{Grid: [3]int64{rows, 1, 1}, Block: [3]int64{bx, by, 1}}
		if bx == 32 && by > 1 {
			sig.Launch.SharedMem = by * 3 / 2 * 4
		}
	}
	return sig
}

func TestParseRMSNorm(t *testing.T) {
	for _, c := range []struct {
		name   string
		op     string
		ins    []rdIn
		n      int64
		rows   int64
		eps    float64
		acc    string
		hasW   bool
		stat   []int64
		bad    bool
		reason string
	}{
		{"fused, Llama prefill", "aten::_fused_rms_norm", []rdIn{rdT("c10::BFloat16", 4, 512, 2048), rdL("[2048]"), rdT("c10::BFloat16", 2048), rdS("1.0000000000000001e-05")},
			2048, 2048, 1e-5, "f32", true, []int64{4, 512, 1}, false, ""},
		{"rms_norm, eps None", "aten::rms_norm", []rdIn{rdT("c10::Half", 8, 64), rdL("[64]"), rdT("c10::Half", 64), rdNone()},
			64, 8, 1.1920928955078125e-07, "f32", true, []int64{8, 1}, false, ""},
		{"two normalized dims, no weight", "aten::_fused_rms_norm", []rdIn{rdT("float", 3, 4, 64), rdL("[4, 64]"), rdNone(), rdS("1e-06")},
			256, 3, 1e-6, "f32", false, []int64{3, 1, 1}, false, ""},
		{"double: double rstd and eps", "aten::_fused_rms_norm", []rdIn{rdT("double", 5, 96), rdL("[96]"), rdT("double", 96), rdNone()},
			96, 5, 2.220446049250313e-16, "f64", true, []int64{5, 1}, false, ""},
		{"weight of another dtype", "aten::rms_norm", []rdIn{rdT("c10::BFloat16", 8, 64), rdL("[64]"), rdT("float", 64), rdNone()},
			0, 0, 0, "", false, nil, true, "separate ops"},
		{"shape mismatch", "aten::_fused_rms_norm", []rdIn{rdT("float", 8, 64), rdL("[32]"), rdNone(), rdNone()}, 0, 0, 0, "", false, nil, true, "does not end"},
		{"integer input", "aten::_fused_rms_norm", []rdIn{rdT("long int", 8, 64), rdL("[64]"), rdNone(), rdNone()}, 0, 0, 0, "", false, nil, true, "of i64"},
		{"strided weight", "aten::_fused_rms_norm", []rdIn{rdT("float", 8, 64), rdL("[64]"), rdTS("float", []int64{64}, []int64{2}), rdNone()},
			0, 0, 0, "", false, nil, true, "strides"},
		{"eps unreadable", "aten::_fused_rms_norm", []rdIn{rdT("float", 8, 64), rdL("[64]"), rdNone(), rdS("x")}, 0, 0, 0, "", false, nil, true, "eps"},
	} {
		runParseCase(t, c.name, c.op, c.ins, c.bad, parseRMSNorm, func(t *testing.T, s *rmsSpec) {
			if s.n != c.n || s.rows != c.rows || s.eps != c.eps || s.acc != c.acc || s.hasW != c.hasW {
				t.Errorf("got %+v", s)
			}
			if got := s.statShape(c.ins[0].shape); !slices.Equal(got, c.stat) {
				t.Errorf("rstd shape %v, want %v", got, c.stat)
			}
		})
		if c.bad {
			if _, err := parseRMSNorm(rdSig(t, c.op, c.ins...)); err == nil || !strings.Contains(err.Error(), c.reason) {
				t.Errorf("%s: error %v, want one saying %q", c.name, err, c.reason)
			}
		}
	}
}

// planRMSNorm follows the traced kernel and launch where they are
// PyTorch's and fit the shape, else PyTorch's own choice for the shape.
func TestPlanRMSNorm(t *testing.T) {
	bf := func(shape ...int64) []rdIn {
		return []rdIn{rdT("c10::BFloat16", shape...), rdL(fmt.Sprintf("[%d]", shape[len(shape)-1])), rdT("c10::BFloat16", shape[len(shape)-1]), rdS("1e-05")}
	}
	for _, c := range []struct {
		name     string
		sig      func(t *testing.T) *signatures.Signature
		kind     rmsKind
		traced   bool
		grid     uint32
		block    [3]uint32
		shared   uint32
		strategy string
	}{
		{"traced vectorized 32x4", func(t *testing.T) *signatures.Signature {
			return rmsTraced(t, "aten::_fused_rms_norm", rmsVecKernel, 2048, 32, 4, bf(4, 512, 2048)...)
		}, rmsVec, true, 2048, [3]uint32{32, 4, 1}, 24, "rms vectorized_layer_norm<32x4>"},
		{"traced vectorized 32x1", func(t *testing.T) *signatures.Signature {
			return rmsTraced(t, "aten::rms_norm", rmsVecKernel, 16, 32, 1, bf(16, 256)...)
		}, rmsVec, true, 16, [3]uint32{32, 1, 1}, 0, "rms vectorized_layer_norm<32x1>"},
		{"traced moments kernel", func(t *testing.T) *signatures.Signature {
			return rmsTraced(t, "aten::_fused_rms_norm", rmsMomentsKernel, 8, 512, 1, bf(8, 100)...)
		}, rmsMoments, true, 8, [3]uint32{512, 1, 1}, 0, "rms RowwiseMoments<512>"},
		{"traced forward kernel", func(t *testing.T) *signatures.Signature {
			return rmsTraced(t, "aten::_fused_rms_norm", rmsForwardKernel, 8, 256, 1, bf(8, 100)...)
		}, rmsForward, true, 8, [3]uint32{256, 1, 1}, 0, "rms LayerNormForward<256>"},
		{"traced grid disagrees with the rows", func(t *testing.T) *signatures.Signature {
			return rmsTraced(t, "aten::_fused_rms_norm", rmsVecKernel, 100, 32, 4, bf(4, 512, 2048)...)
		}, rmsVec, false, 2048, [3]uint32{32, 4, 1}, 24, "rms vectorized_layer_norm<32x4> (untraced)"},
		{"vectorized kernel traced for a row it cannot take", func(t *testing.T) *signatures.Signature {
			return rmsTraced(t, "aten::_fused_rms_norm", rmsVecKernel, 8, 32, 4, bf(8, 102)...)
		}, rmsPair, false, 8, [3]uint32{512, 1, 1}, 0, "rms RowwiseMoments<512>+LayerNormForward<256> (untraced)"},
		{"unknown kernel, row of 4k: vectorized", func(t *testing.T) *signatures.Signature {
			return rmsTraced(t, "aten::_fused_rms_norm", "", 0, 0, 0, bf(2, 64)...)
		}, rmsVec, false, 2, [3]uint32{32, 4, 1}, 24, "rms vectorized_layer_norm<32x4> (untraced)"},
		{"double: the two kernels", func(t *testing.T) *signatures.Signature {
			return rmsTraced(t, "aten::_fused_rms_norm", "", 0, 0, 0, rdT("double", 5, 96), rdL("[96]"), rdNone(), rdNone())
		}, rmsPair, false, 5, [3]uint32{512, 1, 1}, 0, "rms RowwiseMoments<512>+LayerNormForward<256> (untraced)"},
	} {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			sig := c.sig(t)
			s, err := parseRMSNorm(sig)
			if err != nil {
				t.Fatal(err)
			}
			p, err := (Config{}).planRMSNorm(sig, s)
			if err != nil {
				t.Fatal(err)
			}
			if p.kind != c.kind || p.traced != c.traced || p.grid[0] != c.grid || p.block != c.block || p.shared != c.shared {
				t.Errorf("plan %+v, want kind %d traced %v grid %d block %v shared %d", p, c.kind, c.traced, c.grid, c.block, c.shared)
			}
			if got := p.strategy(); got != c.strategy {
				t.Errorf("strategy %q, want %q", got, c.strategy)
			}
			if got := FaithfulFor(sig, Config{}); got != c.traced {
				t.Errorf("FaithfulFor %v, want %v", got, c.traced)
			}
			if sl := sig.Launch; c.traced && sl != nil && int64(p.shared) != sl.SharedMem {
				t.Errorf("shared %d, traced %d", p.shared, sl.SharedMem)
			}
		})
	}
	sig := rmsTraced(t, "aten::_fused_rms_norm", rmsVecKernel, 2048, 32, 4, bf(4, 512, 2048)...)
	if FaithfulFor(sig, Config{NoFaithful: true}) {
		t.Error("faithful with Faithful off")
	}
}

// refRMSNorm is RMS norm over rows of n elements in float64; w may be nil.
func refRMSNorm(x []float64, n int64, w []float64, eps float64) (y, rstd []float64) {
	rows := int64(len(x)) / n
	rstd = make([]float64, rows)
	for r := int64(0); r < rows; r++ {
		var q float64
		for _, v := range x[r*n : (r+1)*n] {
			q += v * v
		}
		rstd[r] = 1 / math.Sqrt(q/float64(n)+eps)
	}
	y = rmsApply(x, n, rstd, w)
	return y, rstd
}

// rmsApply is y = x * rstd[row] * w in float64; w may be nil.
func rmsApply(x []float64, n int64, rstd, w []float64) []float64 {
	y := make([]float64, len(x))
	for i, v := range x {
		o := v * rstd[int64(i)/n]
		if w != nil {
			o *= w[int64(i)%n]
		}
		y[i] = o
	}
	return y
}

// rmsClose is checkClose, with a tolerance for double outputs.
func rmsClose(t *testing.T, name string, got, want []float64, dtype string) {
	t.Helper()
	if dtype != "f64" {
		checkClose(t, name, got, want, dtype)
		return
	}
	var num, den float64
	for i := range got {
		num += (got[i] - want[i]) * (got[i] - want[i])
		den += want[i] * want[i]
	}
	if rel := math.Sqrt(num / max(den, 1e-300)); rel > 1e-12 || math.IsNaN(rel) {
		t.Errorf("%s: relative error %.3g", name, rel)
	}
}

// rmsCases are the host and GPU runs' cases: every kernel and path, with
// and without a weight, in each dtype.
func rmsCases(t *testing.T) []struct {
	name string
	sig  *signatures.Signature
} {
	mk := func(typ string, shape []int64, ns string, w bool) []rdIn {
		ins := []rdIn{rdT(typ, shape...), rdL(ns), rdNone(), rdS("1e-05")}
		if w {
			n := int64(1)
			for _, d := range strings.Split(strings.Trim(ns, "[]"), ",") {
				var v int64
				fmt.Sscan(strings.TrimSpace(d), &v)
				n *= v
			}
			ins[2] = rdT(typ, n)
		}
		return ins
	}
	const op = "aten::_fused_rms_norm"
	return []struct {
		name string
		sig  *signatures.Signature
	}{
		{"bf16 vectorized 32x4 weight", rmsTraced(t, op, rmsVecKernel, 6, 32, 4, mk("c10::BFloat16", []int64{2, 3, 256}, "[256]", true)...)},
		{"f16 vectorized 32x1 no weight", rmsTraced(t, op, rmsVecKernel, 5, 32, 1, mk("c10::Half", []int64{5, 128}, "[128]", false)...)},
		{"f32 vectorized 32x8 two dims", rmsTraced(t, op, rmsVecKernel, 3, 32, 8, mk("float", []int64{3, 4, 256}, "[4, 256]", true)...)},
		{"f32 moments kernel alone", rmsTraced(t, op, rmsMomentsKernel, 4, 512, 1, mk("float", []int64{4, 100}, "[100]", true)...)},
		{"bf16 forward kernel alone", rmsTraced(t, op, rmsForwardKernel, 4, 256, 1, mk("c10::BFloat16", []int64{4, 100}, "[100]", true)...)},
		{"f64 two kernels", rmsTraced(t, op, "", 0, 0, 0, mk("double", []int64{3, 96}, "[96]", true)...)},
		{"f16 two kernels odd row no weight", rmsTraced(t, "aten::rms_norm", "", 0, 0, 0, mk("c10::Half", []int64{3, 1001}, "[1001]", false)...)},
	}
}

// rmsCheck checks an RMS norm instance's outputs against refRMSNorm of
// its inputs: with values read through get (download on the GPU, the
// host run's buffers on the host). The forward kernel alone is checked
// against its rstd input.
func rmsCheck(t *testing.T, name string, s *rmsSpec, p *rmsPlan, inst *Instance, get func(*Tensor) []float64) {
	t.Helper()
	x := get(inst.Inputs[0])
	var w []float64
	if s.hasW {
		w = get(inst.Inputs[1])
	}
	wy, wr := refRMSNorm(x, s.n, w, s.eps)
	switch p.kind {
	case rmsMoments:
		rmsClose(t, name+" rstd", get(inst.Outputs[0]), wr, s.acc)
	case rmsForward:
		rstd := get(inst.Inputs[len(inst.Inputs)-1])
		rmsClose(t, name+" y", get(inst.Outputs[0]), rmsApply(x, s.n, rstd, w), s.in)
	default:
		rmsClose(t, name+" y", get(inst.Outputs[0]), wy, s.in)
		rmsClose(t, name+" rstd", get(inst.Outputs[1]), wr, s.acc)
	}
}

func rmsRaw(v any) cuda.RawArg {
	b, _ := binary.Append(nil, binary.LittleEndian, v)
	return cuda.RawArg{Data: b, Align: len(b)}
}

// TestRdHostRMSNorm runs kernels/rms_norm.cu on the host (the g++ CUDA
// shim of reduce_host_test.go) for every case and checks y and rstd.
func TestRdHostRMSNorm(t *testing.T) {
	if testing.Short() {
		t.Skip("host runs of the kernels take seconds")
	}
	if _, err := exec.LookPath(rdHostCXX()); err != nil {
		t.Skipf("no C++ compiler (%s): %v", rdHostCXX(), err)
	}
	for _, c := range rmsCases(t) {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			s, err := parseRMSNorm(c.sig)
			if err != nil {
				t.Fatal(err)
			}
			p, err := (Config{}).planRMSNorm(c.sig, s)
			if err != nil {
				t.Fatal(err)
			}
			r := &rdHostRun{t: t, seed: 13, full: true}
			shape := c.sig.Inputs[0].Shape
			x := r.tensor(shape, ContiguousStrides(shape), s.in)
			inst := &Instance{Inputs: []*Tensor{&x.Tensor}}
			host := map[*Tensor]*rdHostTensor{&x.Tensor: x}
			w := -1
			if s.hasW {
				wt := r.input(c.sig.Inputs[2])
				w, host[&wt.Tensor] = wt.buf, wt
				inst.Inputs = append(inst.Inputs, &wt.Tensor)
			}
			rstd, y := r.output(s.statShape(shape), s.acc), r.output(shape, s.in)
			host[&rstd.Tensor], host[&y.Tensor] = rstd, y
			eps := rmsRaw(float32(s.eps))
			if s.acc == "f64" {
				eps = rmsRaw(s.eps)
			}
			switch p.kind {
			case rmsVec:
				r.add("kr_rms_vec", p.grid, p.block, rmsRaw(int32(s.n)), rmsRaw(float32(s.eps)), x.buf, w, rstd.buf, y.buf)
				inst.Outputs = []*Tensor{&y.Tensor, &rstd.Tensor}
			case rmsMoments:
				r.add("kr_rms_moments", p.grid, p.block, rmsRaw(s.n), eps, x.buf, rstd.buf)
				inst.Outputs = []*Tensor{&rstd.Tensor}
			case rmsForward:
				r.add("kr_rms_fwd", p.grid, p.block, rmsRaw(s.n), x.buf, rstd.buf, w, y.buf)
				inst.Inputs, inst.Outputs = append(inst.Inputs, &rstd.Tensor), []*Tensor{&y.Tensor}
			case rmsPair:
				r.add("kr_rms_moments", p.grid, p.block, rmsRaw(s.n), eps, x.buf, rstd.buf)
				r.add("kr_rms_fwd", p.grid, p.block2, rmsRaw(s.n), x.buf, rstd.buf, w, y.buf)
				inst.Outputs = []*Tensor{&y.Tensor, &rstd.Tensor}
			}
			defs, err := rmsDefines(s)
			if err != nil {
				t.Fatal(err)
			}
			r.prepare(rdSource("rms_norm.cu", rmsNormSource, defs), "RMS")
			t.Parallel()
			r.run()
			t.Logf("plan %s", p.strategy())
			rmsCheck(t, c.name, s, p, inst, func(x *Tensor) []float64 { return r.values(host[x]) })
		})
	}
}

// TestRMSNormCompile compiles kernels/rms_norm.cu's variants with NVRTC
// (no GPU needed; skipped without NVRTC) and checks that every kernel is
// there and keeps no stack frame.
func TestRMSNormCompile(t *testing.T) {
	arch := nvrtcArch(t)
	for _, d := range []map[string]string{
		{"RMS_T": "RD_BF16", "RMS_W": "1"}, {"RMS_T": "RD_F16", "RMS_W": "0"},
		{"RMS_T": "RD_F32", "RMS_W": "1"}, {"RMS_T": "RD_F64", "RMS_W": "1"},
	} {
		src := rdSource("rms_norm.cu", rmsNormSource, d)
		res, err := nvrtc.Compile(src.Code, src.Name, append(src.options(arch), "--ptxas-options=-v"))
		if err != nil {
			t.Errorf("%v: %v", d, err)
			continue
		}
		kernels := []string{"kr_rms_moments", "kr_rms_fwd"}
		if d["RMS_T"] != "RD_F64" {
			kernels = append(kernels, "kr_rms_vec")
		}
		for _, k := range kernels {
			if !strings.Contains(res.Log, "Function properties for "+k) {
				t.Errorf("%v: no %s in the ptxas log", d, k)
			}
		}
		for _, l := range strings.Split(res.Log, "\n") {
			if strings.Contains(l, "stack frame") && !strings.Contains(l, " 0 bytes stack frame") {
				t.Errorf("%v: %s", d, strings.TrimSpace(l))
			}
		}
	}
}
