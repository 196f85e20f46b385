package tier3

import (
	"strings"
	"testing"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/gputest"
	"github.com/kreplay/kreplay/signatures"
)

// TestGPURMSNorm replays RMS norms with PyTorch's kernels (the traced one
// where the signature names it, else PyTorch's choice for the shape): the
// host cases, a Llama-3.2-1B prefill (bf16 [4,512,2048], the traced
// vectorized kernel at 32x4) and a decode row, and checks y and rstd
// against the float64 reference.
func TestGPURMSNorm(t *testing.T) {
	sub := gputest.NewSubtests(t)
	cases := rmsCases(t)
	llama := []rdIn{rdT("c10::BFloat16", 4, 512, 2048), rdL("[2048]"), rdT("c10::BFloat16", 2048), rdS("1.0000000000000001e-05")}
	decode := []rdIn{rdT("c10::BFloat16", 1, 1, 2048), rdL("[2048]"), rdT("c10::BFloat16", 2048), rdS("1.0000000000000001e-05")}
	cases = append(cases, []struct {
		name string
		sig  *signatures.Signature
	}{
		{"bf16 Llama prefill traced 32x4", rmsTraced(t, "aten::_fused_rms_norm", rmsVecKernel, 2048, 32, 4, llama...)},
		{"bf16 decode row traced 32x4", rmsTraced(t, "aten::_fused_rms_norm", rmsVecKernel, 1, 32, 4, decode...)},
	}...)
	for i, c := range cases {
		sub.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			var plan *rmsPlan
			launchFaithful(t, c.sig, uint64(7000+13*i), parseRMSNorm, func(t *testing.T, got string) {
				s, err := parseRMSNorm(c.sig)
				if err != nil {
					t.Fatal(err)
				}
				if plan, err = (Config{}).planRMSNorm(c.sig, s); err != nil {
					t.Fatal(err)
				}
				if got != plan.strategy() {
					t.Fatalf("strategy %q, planned %q", got, plan.strategy())
				}
			}, func(t *testing.T, spec *rmsSpec, inst *Instance, s *cuda.Stream) {
				rmsCheck(t, c.name, spec, plan, inst, func(x *Tensor) []float64 { return download(t, x, s) })
			})
		})
	}
}
