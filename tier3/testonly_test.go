package tier3

import "sort"

// Helpers only the tests use, kept out of the package.

// Ops lists the aten ops that have a builder, sorted.
func Ops() []string {
	var ops []string
	for op := range builders {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	return ops
}

// ewDivide is the device's 32-bit division by magic number (ewMagic).
func ewDivide(n uint32, magic, shift uint32) uint32 {
	hi := uint32((uint64(n) * uint64(magic)) >> 32)
	return (hi + n) >> shift
}

// offsets returns the input and output offsets of row r's first element,
// as the kernels compute them.
func (p *rdRowPlan) offsets(r int64) (in, out int64) {
	for i := len(p.other) - 1; i >= 0; i-- {
		d := p.other[i]
		q := r / d.size
		in += (r - q*d.size) * d.in
		out += (r - q*d.size) * d.out
		r = q
	}
	return in, out
}
