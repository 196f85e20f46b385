package signatures

import (
	"cmp"
	"fmt"
	"slices"
)

// familyOfLessOne returns the family of g or, when g is none, of g less
// the first of its signatures without which it is one of at least
// MinFamily members.
func familyOfLessOne(g []*Signature) (Family, bool) {
	if f, ok := familyOf(g); ok {
		return f, true
	}
	if len(g) <= MinFamily {
		return Family{}, false
	}
	for i := range g {
		if f, ok := familyOf(slices.Delete(slices.Clone(g), i, i+1)); ok {
			return f, true
		}
	}
	return Family{}, false
}

// familyOf checks that g, signatures with one family key, follow the
// family rule (see Families) and returns their family if they do.
func familyOf(g []*Signature) (Family, bool) {
	zs := make([]sizes, len(g))
	for i, s := range g {
		zs[i] = sizesOf(s)
	}
	pos, varies, ok := varyingDims(zs)
	if !ok {
		return Family{}, false
	}
	var ns []int64
	if varies {
		ns, ok = memberNs(zs, pos)
	} else {
		ns, ok = affineNs(zs)
	}
	if !ok || !affineIn(ns, zs) {
		return Family{}, false
	}
	f := Family{Members: make([]FamilyMember, len(g))}
	for i, s := range g {
		f.Members[i] = FamilyMember{ID: s.ID, N: ns[i]}
	}
	slices.SortFunc(f.Members, func(a, b FamilyMember) int { return cmp.Compare(a.N, b.N) })
	for i := 1; i < len(f.Members); i++ {
		if f.Members[i].N == f.Members[i-1].N {
			return Family{}, false
		}
	}
	first := slices.IndexFunc(g, func(s *Signature) bool { return s.ID == f.Members[0].ID })
	last := f.Members[len(f.Members)-1].N
	f.Label = fmt.Sprintf("%s (n %d..%d)", g[first].Label, f.Members[0].N, last)
	return f, true
}

// varyingDims returns, per tensor, the dimension whose size differs
// between the members (-1 where none does) and whether any does; false
// when a tensor has more than one such dimension.
func varyingDims(zs []sizes) (pos []int, varies, ok bool) {
	pos = make([]int, len(zs[0].shapes))
	for t, shape := range zs[0].shapes {
		pos[t] = -1
		for d := range shape {
			if !sameAt(zs, t, d) {
				if pos[t] >= 0 {
					return nil, false, false
				}
				pos[t], varies = d, true
			}
		}
	}
	return pos, varies, true
}

// affineNs returns, for members whose shapes are all equal, each one's
// n: the first of their affine sizes that differs between them (a view's
// stride into a buffer the length of the KV cache, an integer scalar);
// false when none does.
func affineNs(zs []sizes) ([]int64, bool) {
	for k := range zs[0].affine {
		ns := make([]int64, len(zs))
		varies := false
		for i, z := range zs {
			ns[i] = z.affine[k]
			varies = varies || ns[i] != ns[0]
		}
		if varies {
			return ns, true
		}
	}
	return nil, false
}

// sameAt reports whether dimension d of tensor t has one size in all zs.
func sameAt(zs []sizes, t, d int) bool {
	for _, z := range zs[1:] {
		if z.shapes[t][d] != zs[0].shapes[t][d] {
			return false
		}
	}
	return true
}

// memberNs returns each member's n, the size of the first varying
// dimension, and false unless every other varying dimension is n plus a
// constant of its own.
func memberNs(zs []sizes, pos []int) ([]int64, bool) {
	ref := slices.IndexFunc(pos, func(p int) bool { return p >= 0 })
	ns := make([]int64, len(zs))
	for i, z := range zs {
		ns[i] = z.shapes[ref][pos[ref]]
	}
	for t, p := range pos {
		if p < 0 {
			continue
		}
		c := zs[0].shapes[t][p] - ns[0]
		for i, z := range zs {
			if z.shapes[t][p]-ns[i] != c {
				return nil, false
			}
		}
	}
	return ns, true
}

// affineIn reports whether every affine size of zs is a*n+b with
// integers a and b fixed across the members; ns are distinct where it
// matters (two members with one n and different sizes are no family).
func affineIn(ns []int64, zs []sizes) bool {
	lo, hi := 0, 0
	for i, n := range ns {
		if n < ns[lo] {
			lo = i
		}
		if n > ns[hi] {
			hi = i
		}
	}
	dn := ns[hi] - ns[lo]
	for k := range zs[0].affine {
		dv := zs[hi].affine[k] - zs[lo].affine[k]
		if dn == 0 || dv%dn != 0 {
			return false
		}
		a := dv / dn
		b := zs[lo].affine[k] - a*ns[lo]
		for i, z := range zs {
			if z.affine[k] != a*ns[i]+b {
				return false
			}
		}
	}
	return true
}
