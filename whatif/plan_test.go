package whatif

import (
	"slices"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/replay"
)

// The worked example's plan on the embedded Llama-7B prefill: one
// variant, the llama-rmsnorm recipe, 2048 rows of 4096, one block a row.
func TestPlanLlama(t *testing.T) {
	p := llamaPlan(t)
	set := p.Set
	if len(p.Variants) != 1 {
		t.Fatalf("%d variants", len(p.Variants))
	}
	b := p.Variants[0]
	if b.Recipe.Name != "llama-rmsnorm" || b.RowNorm.Rows != 2048 || b.RowNorm.Cols != 4096 || b.Sig.Count != 65 || b.Sig.Launch.Grid[0] != 2048 {
		t.Errorf("bound %+v %+v %+v", b.Recipe.Name, b.RowNorm, b.Sig)
	}
	// The check feeds each step's kreplay kernel its traced tensor
	// operands: one per step, two for the add (eps) and the muls.
	var n []int
	for _, si := range b.Variant.Sigs {
		n = append(n, len(operands(set.Signatures[si])))
		for _, pos := range operands(set.Signatures[si]) {
			if _, ok := b.Recipe.Flow[slices.Index(b.Variant.Sigs, si)][pos]; !ok {
				t.Errorf("%s input %d has no source in the recipe", set.Signatures[si].Label, pos)
			}
		}
	}
	if !slices.Equal(n, []int{1, 1, 1, 2, 1, 2, 1, 2}) {
		t.Errorf("operands per step %v", n)
	}
}

func TestPlanErrors(t *testing.T) {
	set := llamaSet(t)
	k, err := LoadKernel(exampleKernel, "rmsnorm_fused")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		steps []string
		want  string
	}{
		{RecipeByName("llama-rmsnorm-f32").Ops, "no run of aten::pow,aten::mean,aten::add,aten::rsqrt,aten::mul,aten::mul in the trace: the longest partial run"},
		{[]string{"aten::mm", "aten::silu"}, "are no recipe's"},
	} {
		m, err := Find(set, c.steps)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := NewPlan(set, m, k, DefaultEps); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.steps, err, c.want)
		}
	}
}

func TestScalarBytes(t *testing.T) {
	for _, c := range []struct {
		dtype string
		n     int
	}{{"f64", 8}, {"f32", 4}, {"f16", 2}, {"bf16", 2}} {
		b, err := scalarBytes(1e-6, c.dtype)
		if err != nil || len(b) != c.n {
			t.Errorf("%s: %d bytes, %v", c.dtype, len(b), err)
		}
	}
	if _, err := scalarBytes(1, "i64"); err == nil {
		t.Error("eps into i64")
	}
}

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		v    []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{3, 1, 2}, 2}, {[]float64{4, 1, 2, 3}, 2.5}} {
		if got := median(c.v); got != c.want {
			t.Errorf("median(%v) = %g, want %g", c.v, got, c.want)
		}
	}
}

// The ratios are the predicted savings over the measured ones, and zero
// where one side is missing.
func TestTimelineCompare(t *testing.T) {
	tc := &TimelineCheck{SavingNS: 100, KernelSavingNS: 80, SavingJ: 2}
	tc.compare(&Prediction{SavingNS: 96, Energy: true, SavingJ: 2.2})
	if tc.Ratio != 0.96 || tc.KernelRatio != 1.2 || tc.EnergyRatio != 1.1 {
		t.Errorf("ratios %g %g %g", tc.Ratio, tc.KernelRatio, tc.EnergyRatio)
	}
	tc = &TimelineCheck{SavingNS: 100}
	tc.compare(&Prediction{SavingNS: 96, SavingJ: 1})
	if tc.KernelRatio != 0 || tc.EnergyRatio != 0 {
		t.Errorf("ratios without in-context times or energy: %g %g", tc.KernelRatio, tc.EnergyRatio)
	}
}

// The runs' invocations of signatures the plain timeline could not
// prepare are counted (parts aside).
func TestRunsSkipped(t *testing.T) {
	set := synthSet(7, "a", 7, "m", 7, "b", 7, "c", 7, "a", 7, "b")
	plain := &replay.Timeline{Prepared: []*replay.Prepared{{Sig: set.Signatures[0]}}}
	subs := []replay.Substitution{{Invocations: []int{0, 1, 2, 3}}, {Invocations: []int{4, 5}}}
	if n := runsSkipped(set, plain, subs); n != 3 {
		t.Errorf("%d skipped, want 3 (b twice, c)", n)
	}
}
