package tier3

import (
	"os"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/launch"
	"github.com/kreplay/kreplay/signatures"
)

func TestApproxMath(t *testing.T) {
	for _, c := range []struct {
		p     *signatures.TensorParams
		fns   uint32
		elems int64
	}{
		{nil, 0, 0},
		{&signatures.TensorParams{Shape: []int64{4096}}, 0, 0},
		{&signatures.TensorParams{Shape: []int64{4096}, Math: []string{"sin", "cos"}}, 3, 4096},
		{&signatures.TensorParams{Shape: []int64{8, 1000}, Math: []string{"exp", "log"}}, 12, 8000},
		{&signatures.TensorParams{Shape: []int64{7}, Math: []string{"tanh", "erf", "unknown"}}, 48, 7},
	} {
		fns, n := approxMath(c.p)
		if fns != c.fns || n != c.elems {
			t.Errorf("approxMath(%+v) = %d, %d; want %d, %d", c.p, fns, n, c.fns, c.elems)
		}
	}
}

// plainTriton imports the compiled Llama-style prefill's trace without its
// kernel binaries and returns its Inductor signatures.
func plainTriton(t *testing.T) []*signatures.Signature {
	t.Helper()
	f, err := os.Open("../workload/testdata/l1b-compiled_prefill/trace.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	set, err := signatures.Import(f, "plain", signatures.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out []*signatures.Signature
	for _, s := range set.Signatures {
		if signatures.TritonKind(s.Op) != "" {
			out = append(out, s)
		}
	}
	if len(out) < 10 {
		t.Fatalf("%d Inductor signatures", len(out))
	}
	return out
}

// Every Inductor kernel of a plain trace builds and runs as its stand-in
// (kr_approx; kr_approx_math where its name and arguments call for
// transcendentals; kr_approx_2pass for a looped reduction that writes its
// rows) with the traced launch shape, and says it is one.
func TestGPUTritonStandIns(t *testing.T) {
	sigs := plainTriton(t)
	gpuEnv(t, func(dev Device, s *cuda.Stream) {
		for _, sig := range sigs {
			k, err := New(sig, dev, launch.Options{Sets: 1, Seed: 3}, s)
			if err != nil {
				t.Fatalf("%s: %v", sig.Op, err)
			}
			if a := k.Approximate(); !strings.Contains(a, "Inductor kernel without its binary") {
				t.Errorf("%s: approximate %q", sig.Op, a)
			}
			launchOnce(t, k, s)
			k.Close()
		}
	})
}
