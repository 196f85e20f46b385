package tier3

import (
	"math"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/gputest"
	"github.com/kreplay/kreplay/signatures"
)

// softmaxGPUCases cover the traced shape (warp per row), block rows, long
// rows, a dim that is not the last, a transposed view, unaligned rows and
// the output dtype variants.
var softmaxGPUCases = []rdCase{
	{"f16 traced attention scores", "aten::_softmax", []rdIn{rdT("c10::Half", 4, 16, 512, 512), rdS("-1"), rdS("False")}},
	{"f32 rows of 1000", "aten::_softmax", []rdIn{rdT("float", 64, 1000), rdS("-1"), rdS("False")}},
	{"f16 half_to_float block rows", "aten::_softmax", []rdIn{rdT("c10::Half", 8, 4096), rdS("-1"), rdS("True")}},
	{"f32 long rows", "aten::_softmax", []rdIn{rdT("float", 4, 40000), rdS("-1"), rdS("False")}},
	{"f16 middle dim", "aten::_softmax", []rdIn{rdT("c10::Half", 32, 64, 16), rdS("1"), rdS("False")}},
	{"bf16 transposed", "aten::_softmax", []rdIn{rdTS("c10::BFloat16", []int64{128, 256}, []int64{1, 128}), rdS("-1"), rdS("False")}},
	{"f32 log unaligned", "aten::_log_softmax", []rdIn{rdT("float", 64, 333), rdS("-1"), rdS("False")}},
	{"f16 softmax dtype f32", "aten::softmax", []rdIn{rdT("c10::Half", 16, 100), rdS("-1"), rdS("6")}},
	{"f32 padded rows", "aten::softmax", []rdIn{rdTS("float", []int64{48, 200}, []int64{256, 1}), rdS("1"), rdNone()}},
	{"f16 rows of 16 in lane groups", "aten::_softmax", []rdIn{rdT("c10::Half", 1000, 16), rdS("-1"), rdS("False")}},
}

func TestSoftmaxGPU(t *testing.T) {
	runGPUCases(t, softmaxGPUCases, parseSoftmax, 2000, 31, func(t *testing.T, c rdCase, spec *smSpec, inst *Instance, s *cuda.Stream) {
		if out := inst.Outputs[0]; out.DType != spec.out {
			t.Fatalf("output dtype %s, want %s", out.DType, spec.out)
		}
		checkSoftmax(t, c.name, spec, inst, s)
	})
}

// checkSoftmax checks a softmax's output against refSoftmax of its input,
// and that attention scores are causally masked.
func checkSoftmax(t *testing.T, name string, spec *smSpec, inst *Instance, s *cuda.Stream) {
	t.Helper()
	in, out := inst.Inputs[0], inst.Outputs[0]
	x := download(t, in, s)
	if (Config{}).causalScores(in.Shape, spec.dim) && checkCausal(t, x, in.Shape, in.DType) == 0 {
		t.Fatal("attention scores not causally masked")
	}
	want := refSoftmax(x, in.Shape, spec.dim, spec.log)
	checkClose(t, name, download(t, out, s), want, out.DType)
}

// refSoftmax is softmax (or log-softmax) along dim in float64 over a
// row-major tensor.
func refSoftmax(x []float64, shape []int64, dim int, log bool) []float64 {
	return alongDim(x, shape, dim, func(row []float64) {
		m := math.Inf(-1)
		for _, v := range row {
			m = math.Max(m, v)
		}
		var sum float64
		for _, v := range row {
			sum += math.Exp(v - m)
		}
		for e, v := range row {
			if log {
				row[e] = v - m - math.Log(sum)
			} else {
				row[e] = math.Exp(v-m) / sum
			}
		}
	})
}

// smPTGPUSigs are synthetic softmax_warp_forward signatures: two rows per
// warp with a partial last warp, lanes short of a warp, rows shorter than
// 2^log2, log-softmax.
func smPTGPUSigs(t *testing.T) []*signatures.Signature {
	return []*signatures.Signature{
		smPTSig(t, "aten::_softmax", []rdIn{rdT("float", 1001, 100), rdS("-1"), rdS("False")}, 7, false),
		smPTSig(t, "aten::_log_softmax", []rdIn{rdT("float", 77, 13), rdS("-1"), rdS("False")}, 4, true),
		smPTSig(t, "aten::_softmax", []rdIn{rdT("float", 3, 5, 1000), rdS("-1"), rdS("False")}, 10, false),
		smPTSig(t, "aten::_log_softmax", []rdIn{rdT("float", 9, 1), rdS("-1"), rdS("False")}, 0, true),
	}
}

// TestGPUSoftmaxFaithful replays the traced softmax_warp_forward
// signatures (real kernel names and launch shapes) and synthetic ones
// with sm_pt_warp, checking the strategy and every element.
func TestGPUSoftmaxFaithful(t *testing.T) {
	sub := gputest.NewSubtests(t)
	for i, sig := range append(smTracedSigs(t), smPTGPUSigs(t)...) {
		sub.Run(sig.Label, func(t *testing.T) {
			launchFaithful(t, sig, uint64(2500+i), parseSoftmax, func(t *testing.T, got string) {
				if !strings.HasPrefix(got, "softmax_warp_forward<") {
					t.Errorf("strategy %q", got)
				}
			}, func(t *testing.T, spec *smSpec, inst *Instance, s *cuda.Stream) {
				checkSoftmax(t, sig.Label, spec, inst, s)
			})
		})
	}
}
