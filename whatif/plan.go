package whatif

import (
	"fmt"
	"strings"

	"github.com/kreplay/kreplay/signatures"
)

// Plan is a what-if bound on the CPU: the runs, the kernel, and each
// variant's recipe, binding to the ABI and the kernel's signature.
type Plan struct {
	Set      *signatures.Set
	Match    *Match
	Kernel   *Kernel
	Variants []*Bound
}

// Bound is one variant bound to its recipe's ABI.
type Bound struct {
	// Index is the variant's in Match.Variants.
	Index   int
	Variant Variant
	Recipe  *Recipe
	RowNorm *RowNorm
	// Sig is the kernel's signature for this variant (Kernel.Signature).
	Sig *signatures.Signature
}

// NewPlan binds every variant of m to the recipe of its ops and k's ABI.
// It fails when no run matched (with the match's hint), or when a
// variant's ops are no recipe's: the trace does not record the data flow
// the check needs.
func NewPlan(set *signatures.Set, m *Match, k *Kernel, eps float64) (*Plan, error) {
	if len(m.Runs) == 0 {
		return nil, fmt.Errorf("no run of %s in the trace: %s", strings.Join(m.Steps, ","), m.Hint)
	}
	p := &Plan{Set: set, Match: m, Kernel: k}
	for i, v := range m.Variants {
		r := RecipeFor(v.Ops)
		if r == nil {
			return nil, fmt.Errorf("the runs' ops %s are no recipe's (kreplay knows the data flow of %s): the kernel cannot be bound or checked",
				strings.Join(v.Ops, ","), recipeList())
		}
		rn, err := r.Bind(set, v, eps)
		if err != nil {
			return nil, fmt.Errorf("variant %d: %w", i, err)
		}
		sig, err := k.Signature(rn, v.Runs)
		if err != nil {
			return nil, fmt.Errorf("variant %d: %w", i, err)
		}
		p.Variants = append(p.Variants, &Bound{Index: i, Variant: v, Recipe: r, RowNorm: rn, Sig: sig})
	}
	return p, nil
}

// recipeList lists the recipes with their ops.
func recipeList() string {
	var s []string
	for _, r := range Recipes {
		s = append(s, fmt.Sprintf("%s (%s)", r.Name, strings.Join(r.Ops, ",")))
	}
	return strings.Join(s, "; ")
}
