package tier3

import (
	_ "embed"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/signatures"
)

// Helpers shared by the reduction family (reductions, softmax, layer
// norm, scans): dtype codes of kernels/reduce_common.cu, parsing of the
// profiler's scalar arguments, and the row layout that softmax, norm and
// scan kernels take.

//go:embed kernels/reduce_common.cu
var reduceCommonSource string

// rdSource returns a kernel source of the reduction family: util.cu,
// reduce_common.cu and the family's own file.
func rdSource(name, code string, defines map[string]string) Source {
	return Source{Name: name, Code: Util.Code + "\n" + reduceCommonSource + "\n" + code, Defines: defines}
}

// rdCodes are the dtype codes of kernels/reduce_common.cu.
var rdCodes = map[string]int{
	"f16": 0, "bf16": 1, "f32": 2, "f64": 3, "i64": 4, "i32": 5, "i16": 6, "i8": 7, "u8": 8, "bool": 9,
}

func rdIsFloat(dtype string) bool {
	return dtype == "f16" || dtype == "bf16" || dtype == "f32" || dtype == "f64"
}

// rdCodes2 returns the dtype codes of a kernel's input and output dtypes.
func rdCodes2(in, out string) (string, string, error) {
	ci, err := rdCode(in)
	if err != nil {
		return "", "", err
	}
	co, err := rdCode(out)
	return ci, co, err
}

// rdRowKernel is a row kernel's choice: its name, V elements a vector
// load, CH chunks of them a thread, TPR threads a row, and its launch.
type rdRowKernel struct {
	kernel      string
	V, CH, TPR  int64
	grid, block [3]uint32
}

// rdPickRowKernel picks PREFIX_rows (a row in registers: a warp or less
// per row up to 1024 elements, a block up to 32768, vectors of 16 bytes
// where aligned) or, for longer rows, PREFIX_long (a block a row, one
// element at a time).
func rdPickRowKernel(rp *rdRowPlan, inSize, sms int64, prefix string) rdRowKernel {
	k := rdRowKernel{V: 1, CH: 1, TPR: 32}
	if v := max(16/inSize, 1); rp.aligned(v) {
		k.V = v
	}
	ch, tpr, ok := rdRowsConfig(rp.n, k.V)
	if !ok {
		k.kernel, k.V = prefix+"_long", 1
		k.grid = [3]uint32{uint32(rdClamp(rp.rows, 1, sms*4)), 1, 1}
		k.block = [3]uint32{1024, 1, 1}
		return k
	}
	k.kernel, k.CH, k.TPR = prefix+"_rows", ch, tpr
	k.grid, k.block = rdRowsLaunch(rp.rows, tpr, int(sms))
	return k
}

// rowLaunch is the launch of a row kernel: f with the input, the row
// plan's raw form and the rest of its arguments; nothing for an empty
// tensor.
func rowLaunch(f *cuda.Function, rp *rdRowPlan, grid, block [3]uint32, x cuda.DevicePtr, rest ...any) func(*cuda.Stream) error {
	args := append([]any{x, rp.raw()}, rest...)
	return func(st *cuda.Stream) error {
		if rp.rows == 0 || rp.n == 0 {
			return nil
		}
		return f.Launch(grid, block, 0, st, args...)
	}
}

// rdCode returns the dtype code of dtype as a -D value.
func rdCode(dtype string) (string, error) {
	c, ok := rdCodes[dtype]
	if !ok {
		return "", fmt.Errorf("dtype %s: %w", dtype, ErrUnsupported)
	}
	return strconv.Itoa(c), nil
}

// rdAccDType is the dtype of the f32-or-wider statistics (layer norm mean
// and rstd): f64 for f64, f32 otherwise.
func rdAccDType(dtype string) string {
	if dtype == "f64" {
		return "f64"
	}
	return "f32"
}

// rdScalarTypes maps c10::ScalarType numbers, as the profiler writes a
// dtype argument, to dtypes.
var rdScalarTypes = map[string]string{
	"0": "u8", "1": "i8", "2": "i16", "3": "i32", "4": "i64", "5": "f16", "6": "f32", "7": "f64",
	"11": "bool", "15": "bf16",
	"torch.uint8": "u8", "torch.int8": "i8", "torch.int16": "i16", "torch.int32": "i32", "torch.int64": "i64",
	"torch.float16": "f16", "torch.float32": "f32", "torch.float64": "f64", "torch.bool": "bool",
	"torch.bfloat16": "bf16",
}

// rdParseScalarType reads an optional dtype argument: "" when absent (None).
func rdParseScalarType(v string) (string, error) {
	v = strings.TrimSpace(v)
	if v == "" || v == "None" {
		return "", nil
	}
	if d, ok := rdScalarTypes[v]; ok {
		return d, nil
	}
	return "", fmt.Errorf("dtype argument %q: %w", v, ErrUnsupported)
}

// rdParseDims reads a dim argument, an int ("-1") or an int list ("[0, 1]"),
// normalized against rank and sorted without duplicates. all is true when
// the argument is absent (None, "") or an empty list: every dim.
func rdParseDims(v string, rank int) (dims []int, all bool, err error) {
	v = strings.TrimSpace(v)
	if v == "" || v == "None" {
		return nil, true, nil
	}
	v = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(v, "["), "]"))
	if v == "" {
		return nil, true, nil
	}
	seen := map[int]bool{}
	for _, f := range strings.Split(v, ",") {
		d, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
		if err != nil {
			return nil, false, fmt.Errorf("dim %q unreadable", f)
		}
		r := int64(max(rank, 1)) // a 0-d tensor takes dim 0 or -1
		if d < -r || d >= r {
			return nil, false, fmt.Errorf("dim %d out of range for rank %d", d, rank)
		}
		if d < 0 {
			d += r
		}
		if rank == 0 {
			continue
		}
		if seen[int(d)] {
			return nil, false, fmt.Errorf("dim %d repeated", d)
		}
		seen[int(d)] = true
		dims = append(dims, int(d))
	}
	if rank == 0 {
		return nil, true, nil
	}
	for i := 1; i < len(dims); i++ { // insertion sort: a handful of dims
		for j := i; j > 0 && dims[j] < dims[j-1]; j-- {
			dims[j], dims[j-1] = dims[j-1], dims[j]
		}
	}
	return dims, false, nil
}

// rdParseDim reads a single dim argument normalized against rank.
func rdParseDim(v string, rank int) (int, error) {
	dims, all, err := rdParseDims(v, rank)
	switch {
	case err != nil:
		return 0, err
	case rank == 0:
		return 0, nil
	case all || len(dims) != 1:
		return 0, fmt.Errorf("want one dim, got %q", v)
	}
	return dims[0], nil
}

// rdParseBool reads a bool argument; absent is false.
func rdParseBool(v string) (bool, error) {
	switch strings.TrimSpace(v) {
	case "True", "true", "1":
		return true, nil
	case "False", "false", "0", "", "None":
		return false, nil
	}
	return false, fmt.Errorf("bool argument %q unreadable", v)
}

// arg returns the input at position i, or an absent one.
func rdArg(sig *signatures.Signature, i int) signatures.Input {
	if i < len(sig.Inputs) {
		return sig.Inputs[i]
	}
	return signatures.Input{}
}

// rdTensorInputs counts the op's tensor inputs.
func rdTensorInputs(sig *signatures.Signature) int {
	n := 0
	for _, in := range sig.Inputs {
		if in.IsTensor() {
			n++
		}
	}
	return n
}

func rdUnsupported(format string, a ...any) error {
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, a...), ErrUnsupported)
}

// rdDim is one dim of a kernel layout: size, input stride and output
// stride, in elements.
type rdDim struct{ size, in, out int64 }

// rdMergeDims drops size-1 dims and merges neighbours (outer first) whose
// input and output strides both compose: the same elements in the same
// order with fewer dims.
func rdMergeDims(ds []rdDim) []rdDim {
	var out []rdDim
	for _, d := range ds {
		if d.size == 1 {
			continue
		}
		if n := len(out); n > 0 && d.size > 0 {
			p := out[n-1]
			if p.in == d.in*d.size && p.out == d.out*d.size {
				out[n-1] = rdDim{p.size * d.size, d.in, d.out}
				continue
			}
		}
		out = append(out, d)
	}
	return out
}

// rdRowPlan is the layout softmax, layer norm and scan kernels take: rows
// indexed by the "other" dims (mixed radix over sizes, with input and
// output strides), each row N elements at input stride sd and output
// stride sdo. It mirrors struct RowPlan in the kernels.
type rdRowPlan struct {
	other   []rdDim
	rows, n int64
	sd, sdo int64
	eps     float64
}

// rdNewRowPlan lays out the rows of a tensor along dim (or along the merged
// trailing dims from dim on, when trailing is true, for norms) with a
// contiguous output of the same shape.
func rdNewRowPlan(shape, strides []int64, dim int, trailing bool) (*rdRowPlan, error) {
	ost := ContiguousStrides(shape)
	p := &rdRowPlan{rows: 1, n: 1}
	var other, row []rdDim
	for i, s := range shape {
		d := rdDim{s, strides[i], ost[i]}
		if i == dim || (trailing && i > dim) {
			row = append(row, d)
		} else {
			other = append(other, d)
			p.rows *= s
		}
	}
	for _, d := range row {
		p.n *= d.size
	}
	row = rdMergeDims(row)
	switch len(row) {
	case 0:
		p.sd, p.sdo = 1, 1
	case 1:
		p.sd, p.sdo = row[0].in, row[0].out
	default:
		return nil, rdUnsupported("the normalized dims of strides %v do not form one strided run", strides)
	}
	p.other = rdMergeDims(other)
	if len(p.other) > rdMaxDims {
		return nil, rdUnsupported("%d dims after merging, kernels take %d", len(p.other), rdMaxDims)
	}
	return p, nil
}

// minOtherStride is the smallest input stride of the other dims (MaxInt64
// when there are none).
func (p *rdRowPlan) minOtherStride() int64 {
	m := int64(math.MaxInt64)
	for _, d := range p.other {
		m = min(m, d.in)
	}
	return m
}

// fastestLast moves the other dim with the smallest input stride to the
// end, so that consecutive rows (threads) read neighbouring memory.
func (p *rdRowPlan) fastestLast() {
	if len(p.other) < 2 {
		return
	}
	best := len(p.other) - 1
	for i, d := range p.other {
		if d.in < p.other[best].in {
			best = i
		}
	}
	d := p.other[best]
	p.other = append(append(p.other[:best:best], p.other[best+1:]...), d)
}

// aligned reports whether every row starts on a multiple of v elements in
// input and output, and rows are unit-stride with n a multiple of v: the
// condition for v-wide vector loads and stores.
func (p *rdRowPlan) aligned(v int64) bool {
	if p.sd != 1 || p.sdo != 1 || p.n%v != 0 {
		return false
	}
	for _, d := range p.other {
		if d.in%v != 0 || d.out%v != 0 {
			return false
		}
	}
	return true
}

// raw lays the plan out as struct RowPlan.
func (p *rdRowPlan) raw() cuda.RawArg {
	var b []byte
	put := func(v int64) { b = binary.LittleEndian.AppendUint64(b, uint64(v)) }
	put(int64(len(p.other)))
	for _, f := range []func(rdDim) int64{
		func(d rdDim) int64 { return d.size },
		func(d rdDim) int64 { return d.in },
		func(d rdDim) int64 { return d.out },
	} {
		for i := 0; i < rdMaxDims; i++ {
			v := int64(1)
			if i < len(p.other) {
				v = f(p.other[i])
			}
			put(v)
		}
	}
	put(p.rows)
	put(p.n)
	put(p.sd)
	put(p.sdo)
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(p.eps))
	return cuda.RawArg{Data: b, Align: 8}
}

// rdMaxDims is RD_MAXD, the most dims a kernel layout takes.
const rdMaxDims = 8

func rdCeilDiv(a, b int64) int64 { return (a + b - 1) / b }

// rdPow2Ceil is the smallest power of two >= n (1 for n <= 1).
func rdPow2Ceil(n int64) int64 {
	if n <= 1 {
		return 1
	}
	return 1 << bits.Len64(uint64(n-1))
}

// rdPow2Floor is the largest power of two <= n (1 for n <= 1).
func rdPow2Floor(n int64) int64 {
	if n <= 1 {
		return 1
	}
	return 1 << (bits.Len64(uint64(n)) - 1)
}

func rdClamp(v, lo, hi int64) int64 { return min(max(v, lo), hi) }

// rdRowsLaunch is the launch shape of a row kernel with tpr threads per row
// over rows rows: groups of a 256-thread block when tpr <= 32, else one
// block of tpr threads per row.
func rdRowsLaunch(rows, tpr int64, sms int) (grid, block [3]uint32) {
	bs := int64(256)
	if tpr > 32 {
		bs = tpr
	}
	rpb := bs / tpr
	g := rdClamp(rdCeilDiv(rows, rpb), 1, int64(max(sms, 1))*64)
	return [3]uint32{uint32(g), 1, 1}, [3]uint32{uint32(bs), 1, 1}
}

// rdRowsConfig picks the vector width, elements per thread and threads per
// row of a row kernel that keeps a row of n elements in registers (at most
// 32 per thread): a warp or less per row up to 1024 elements, a block up to
// 32768. ok is false for longer rows.
func rdRowsConfig(n, v int64) (ch, tpr int64, ok bool) {
	vecs := rdCeilDiv(max(n, 1), v)
	if n <= 1024 {
		tpr = min(32, rdPow2Ceil(vecs))
	} else {
		tpr = rdClamp(rdPow2Ceil(rdCeilDiv(vecs*v, 16)), 64, 1024)
	}
	ch = rdCeilDiv(vecs, tpr)
	return ch, tpr, ch*v <= 32
}
