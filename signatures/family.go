package signatures

import (
	"cmp"
	"encoding/json"
	"slices"
	"strconv"
)

// MinFamily is the fewest members a Family has.
const MinFamily = 4

// Family is a group of a set's signatures that replay the same kernel the
// same way except for one size n, the length of a growing KV cache in a
// decode, say (see Families for the exact rule).
type Family struct {
	// Label names the family: its first member's label with the varying
	// size written as n.
	Label string `json:"label"`
	// Members are the family's signatures, sorted by N; no two share N.
	Members []FamilyMember `json:"members"`
}

// FamilyMember is one signature of a Family and its value of the varying
// size.
type FamilyMember struct {
	ID string `json:"id"`
	N  int64  `json:"n"`
}

// Families groups the signatures of set that differ only in one integer
// n into families of at least MinFamily members, sorted by the traced time
// of their members (the largest first). Signatures are in one family when:
//
//   - everything that is not a size is equal: activity, tier, class, op,
//     kernel, the launch's block, shared memory and registers, input
//     dtypes, ranks and non-tensor values but integer scalars, and the
//     tier parameters' non-size fields (dtypes, transposes, scalars,
//     reduction dims);
//   - their tensor inputs' shapes are equal except at most one dimension
//     per tensor, at the same position in every member, and each such
//     dimension is n+c with c fixed per tensor (n is the first varying
//     dimension's value, so its c is 0);
//   - every stride, integer scalar input (an attention's maximum KV
//     length, say) and size of the tier parameters (GEMM sizes and
//     leading dimensions, element and byte counts) is a*n+b with integers
//     a and b fixed across the family;
//   - the launch's grid may differ: it follows from the sizes.
//
// Signatures that are part of another (PartOf), have parts, are
// unreplayable or ran in a CUDA graph (no shapes) are in no family. A
// group that breaks a rule is a family without one of its signatures when
// that is enough (the prefill's among a decode's steps, say), else none.
func Families(set *Set) []Family {
	hasParts := map[string]bool{}
	for _, s := range set.Signatures {
		if s.PartOf != "" {
			hasParts[s.PartOf] = true
		}
	}
	groups := map[string][]*Signature{}
	var keys []string
	for _, s := range set.Signatures {
		if s.PartOf != "" || hasParts[s.ID] || s.Unreplayable != "" || s.Graph || len(s.Inputs) == 0 {
			continue
		}
		k := familyKey(s)
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], s)
	}
	type traced struct {
		f     Family
		total int64
	}
	var found []traced
	for _, k := range keys {
		g := groups[k]
		if len(g) < MinFamily {
			continue
		}
		if f, ok := familyOfLessOne(g); ok {
			t := traced{f: f}
			for _, s := range g {
				t.total += s.TracedNS.Total
			}
			found = append(found, t)
		}
	}
	slices.SortStableFunc(found, func(a, b traced) int { return cmp.Compare(b.total, a.total) })
	out := make([]Family, len(found))
	for i, t := range found {
		out[i] = t.f
	}
	return out
}

// familyKey is s's identity with every size taken out: signatures that
// may be one family have the same key.
func familyKey(s *Signature) string {
	c := *s
	c.ID, c.Label, c.Count, c.TracedNS, c.Binary = "", "", 0, Stats{}, nil
	if s.Launch != nil {
		l := *s.Launch
		l.Grid = [3]int64{}
		c.Launch = &l
	}
	c.Inputs = make([]Input, len(s.Inputs))
	for i, in := range s.Inputs {
		if _, ok := intScalar(in); ok {
			in.Value = "(an integer)"
		}
		in.Shape, in.Strides = make([]int64, len(in.Shape)), make([]int64, len(in.Strides))
		list := make([]Tensor, len(in.List))
		for j, t := range in.List {
			list[j] = Tensor{Shape: make([]int64, len(t.Shape)), Strides: make([]int64, len(t.Strides))}
		}
		in.List = list
		c.Inputs[i] = in
	}
	if s.Memory != nil {
		m := *s.Memory
		m.Bytes = 0
		c.Memory = &m
	}
	if s.GEMM != nil {
		g := *s.GEMM
		g.M, g.N, g.K, g.Batch, g.LDA, g.LDB, g.LDC, g.StrideA, g.StrideB, g.StrideC = 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
		c.GEMM = &g
	}
	if s.Collective != nil {
		col := *s.Collective
		col.Nelems, col.OutNelems = 0, 0
		c.Collective = &col
	}
	if s.Tensor != nil {
		t := *s.Tensor
		t.Numel, t.Bytes, t.Shape = 0, 0, make([]int64, len(t.Shape))
		c.Tensor = &t
	}
	b, _ := json.Marshal(struct {
		Sig    Signature
		Binary bool
	}{c, s.Binary != nil})
	return string(b)
}

// sizes are a signature's integers that may vary within a family: its
// tensor inputs' shapes, one slice per tensor, and the rest (strides,
// integer scalar inputs and the tier parameters' sizes), which must be
// affine in n.
type sizes struct {
	shapes [][]int64
	affine []int64
}

// sizesOf returns s's sizes, in an order fixed by its family key.
func sizesOf(s *Signature) sizes {
	var z sizes
	for _, in := range s.Inputs {
		if v, ok := intScalar(in); ok {
			z.affine = append(z.affine, v)
		}
		if len(in.Shape) > 0 {
			z.shapes = append(z.shapes, in.Shape)
		}
		z.affine = append(z.affine, in.Strides...)
		for _, t := range in.List {
			z.shapes = append(z.shapes, t.Shape)
			z.affine = append(z.affine, t.Strides...)
		}
	}
	if m := s.Memory; m != nil {
		z.affine = append(z.affine, m.Bytes)
	}
	if g := s.GEMM; g != nil {
		z.affine = append(z.affine, g.M, g.N, g.K, g.Batch, g.LDA, g.LDB, g.LDC, g.StrideA, g.StrideB, g.StrideC)
	}
	if c := s.Collective; c != nil {
		z.affine = append(z.affine, c.Nelems, c.OutNelems)
	}
	if t := s.Tensor; t != nil {
		z.affine = append(append(z.affine, t.Numel, t.Bytes), t.Shape...)
	}
	return z
}

// intScalar is in's value where in is an integer scalar (an attention's
// maximum KV length, say, which follows the KV cache's size).
func intScalar(in Input) (int64, bool) {
	if in.Type != "Scalar" {
		return 0, false
	}
	v, err := strconv.ParseInt(in.Value, 10, 64)
	return v, err == nil
}
