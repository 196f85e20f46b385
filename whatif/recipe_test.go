package whatif

import (
	"strings"
	"testing"

	"github.com/kreplay/kreplay/signatures"
)

// Every recipe's flow reads each step's operands from earlier steps or
// the external x, w and eps, and its refs name steps it has.
func TestRecipesWellFormed(t *testing.T) {
	for _, r := range Recipes {
		if len(r.Flow) != len(r.Ops) || RecipeFor(r.Ops) != r || RecipeByName(r.Name) != r {
			t.Errorf("%s: %d flow steps for %d ops, or not found by its ops or name", r.Name, len(r.Flow), len(r.Ops))
		}
		exts := map[string]bool{}
		for i, f := range r.Flow {
			if len(f) == 0 {
				t.Errorf("%s step %d reads nothing", r.Name, i)
			}
			for pos, src := range f {
				switch {
				case src.Step >= i || (src.Step < 0 && src.Ext == ""):
					t.Errorf("%s step %d input %d: source %+v", r.Name, i, pos, src)
				case src.Step < 0:
					exts[src.Ext] = true
				}
			}
		}
		if !exts["x"] || !exts["w"] || !exts["eps"] {
			t.Errorf("%s: external operands %v", r.Name, exts)
		}
		for _, ref := range []Ref{r.X, r.W, r.Eps} {
			if ref.Step < 0 || ref.Step >= len(r.Ops) {
				t.Errorf("%s: ref %+v out of the chain", r.Name, ref)
			}
		}
	}
}

// bindLlama binds the Llama-7B prefill's RMSNorm variant after change
// has edited its set.
func bindLlama(t *testing.T, change func(set *signatures.Set, v Variant)) (*RowNorm, error) {
	t.Helper()
	set := llamaSet(t)
	r := RecipeByName("llama-rmsnorm")
	m, err := Find(set, r.Ops)
	if err != nil || len(m.Variants) != 1 {
		t.Fatalf("%v, %d variants", err, len(m.Variants))
	}
	v := m.Variants[0]
	if change != nil {
		change(set, v)
	}
	return r.Bind(set, v, DefaultEps)
}

func TestBindLlama(t *testing.T) {
	rn, err := bindLlama(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rn.DType != "f16" || rn.Rows != 2048 || rn.Cols != 4096 || rn.Eps != DefaultEps || rn.EpsTraced {
		t.Errorf("bound %+v", rn)
	}
	// A traced Scalar eps is taken from the trace.
	rn, err = bindLlama(t, func(set *signatures.Set, v Variant) {
		set.Signatures[v.Sigs[3]].Inputs[1] = signatures.Input{Type: "Scalar", Value: "1e-05"}
	})
	if err != nil || rn.Eps != 1e-5 || !rn.EpsTraced {
		t.Errorf("Scalar eps: %+v, %v", rn, err)
	}
}

func TestBindErrors(t *testing.T) {
	in := func(set *signatures.Set, v Variant, step, i int) *signatures.Input {
		return &set.Signatures[v.Sigs[step]].Inputs[i]
	}
	for _, c := range []struct {
		name   string
		change func(set *signatures.Set, v Variant)
		want   string
	}{
		{"f32 x", func(s *signatures.Set, v Variant) { in(s, v, 0, 1).Type = "float" }, "use llama-rmsnorm-f32"},
		{"int x", func(s *signatures.Set, v Variant) { in(s, v, 0, 1).Type = "int" }, "the ABI takes f16, bf16 or f32"},
		{"strided x", func(s *signatures.Set, v Variant) { in(s, v, 0, 1).Strides = []int64{4096, 2048 * 4096, 1} }, "not contiguous"},
		{"bf16 w", func(s *signatures.Set, v Variant) { in(s, v, 7, 0).Type = "c10::BFloat16" }, "want a contiguous f16[4096]"},
		{"short w", func(s *signatures.Set, v Variant) { in(s, v, 7, 0).Shape = []int64{2048} }, "want a contiguous f16[4096]"},
		{"cube", func(s *signatures.Set, v Variant) { in(s, v, 1, 1).Value = "3" }, "is not a square"},
		{"mean over dim 1", func(s *signatures.Set, v Variant) { s.Signatures[v.Sigs[2]].Tensor.Dims = []int64{1} }, "not a mean over the last dimension"},
		{"mean without keepdim", func(s *signatures.Set, v Variant) { s.Signatures[v.Sigs[2]].Tensor.KeepDim = false }, "not a mean over the last dimension"},
		{"bad eps", func(s *signatures.Set, v Variant) { *in(s, v, 3, 1) = signatures.Input{Type: "Scalar", Value: "eps"} }, `eps "eps" unreadable`},
		{"eps list", func(s *signatures.Set, v Variant) {
			*in(s, v, 3, 1) = signatures.Input{Type: "ScalarList", Value: "[1]"}
		}, "want a Scalar or a 0-dim tensor"},
	} {
		_, err := bindLlama(t, c.change)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
	r := RecipeByName("llama-rmsnorm")
	if _, err := r.Bind(llamaSet(t), Variant{Ops: []string{"aten::pow"}, Sigs: []int{0}}, DefaultEps); err == nil || !strings.Contains(err.Error(), "not the recipe's") {
		t.Errorf("other ops: %v", err)
	}
}
