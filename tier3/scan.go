package tier3

import (
	_ "embed"
	"strconv"
	"strings"

	"github.com/kreplay/kreplay/signatures"
)

//go:embed kernels/scan.cu
var scanSource string

func init() {
	Register(buildScan, "aten::cumsum", "aten::cumprod")
}

// scSpec is what a traced scan computes.
type scSpec struct {
	dim     int
	prod    bool
	in, out string
}

// parseScan reads cumsum(self, dim, dtype) and cumprod(self, dim, dtype).
// Without a dtype, bool and integer inputs give int64 (as PyTorch
// promotes them).
func parseScan(sig *signatures.Signature) (*scSpec, error) {
	x := rdArg(sig, 0)
	if !x.IsTensor() {
		return nil, rdUnsupported("%s without a tensor input", sig.Op)
	}
	s := &scSpec{in: signatures.DType(x.Type), prod: strings.HasPrefix(sig.Op, "aten::cumprod")}
	if _, err := rdCode(s.in); err != nil {
		return nil, err
	}
	var err error
	if s.dim, err = rdParseDim(rdArg(sig, 1).Value, len(x.Shape)); err != nil {
		return nil, rdUnsupported("%s: %v", sig.Op, err)
	}
	dt, err := rdParseScalarType(rdArg(sig, 2).Value)
	if err != nil {
		return nil, err
	}
	switch {
	case dt != "":
		s.out = dt
	case rdIsFloat(s.in):
		s.out = s.in
	default:
		s.out = "i64"
	}
	if _, err := rdCode(s.out); err != nil {
		return nil, err
	}
	return s, nil
}

// scPlan is the launch plan of a scan.
type scPlan struct {
	rp     *rdRowPlan
	kernel string // sc_rows or sc_cols
	V, TPR int64
	// vld: sc_rows loads and stores vectors of V elements (rows
	// contiguous in input and output, n a multiple of V, row starts
	// aligned to V elements; buildScan also checks the pointers).
	vld         bool
	grid, block [3]uint32
}

// planScan picks sc_rows (tiles of TPR threads times V consecutive
// elements: a warp or less per row up to 4096 elements, a block beyond;
// vector loads and stores where the rows allow) or sc_cols (a thread per
// row when the scan dim is not the fastest-varying in memory).
func planScan(shape, strides []int64, dim int, sms int64) (*scPlan, error) {
	rp, err := rdNewRowPlan(shape, strides, dim, false)
	if err != nil {
		return nil, err
	}
	p := &scPlan{rp: rp, V: 1, TPR: 32}
	if len(rp.other) > 0 && rp.sd > rp.minOtherStride() {
		rp.fastestLast()
		p.kernel = "sc_cols"
		p.grid = [3]uint32{uint32(rdClamp(rdCeilDiv(rp.rows, 256), 1, sms*32)), 1, 1}
		p.block = [3]uint32{256, 1, 1}
		return p, nil
	}
	p.kernel = "sc_rows"
	if rp.n >= 128 {
		p.V = 4
	}
	if rp.n <= 4096 {
		p.TPR = min(32, rdPow2Ceil(rdCeilDiv(rp.n, p.V)))
	} else {
		p.TPR = rdClamp(rdPow2Ceil(rdCeilDiv(rp.n, 8*p.V)), 64, 1024)
	}
	p.grid, p.block = rdRowsLaunch(rp.rows, p.TPR, int(sms))
	p.vld = rp.sd == 1 && rp.sdo == 1 && rp.n%p.V == 0
	for _, d := range rp.other {
		if d.in%p.V != 0 || d.out%p.V != 0 {
			p.vld = false
		}
	}
	return p, nil
}

// scTiles is SC_U, the tiles of a vectorised sc_rows (TPR threads times V
// elements) a thread loads before scanning them: up to 128 bytes of input
// a thread (a row of 1024 f32 at once with a warp a row), 32 in blocks of
// more than 256 threads, no more than a row has.
func scTiles(p *scPlan, esize int64) int64 {
	if !p.vld {
		return 1
	}
	budget := int64(128)
	if p.TPR > 256 {
		budget = 32
	}
	return rdClamp(min(budget/(p.V*esize), rdCeilDiv(p.rp.n, p.TPR*p.V)), 1, 8)
}

func buildScan(e *Env, sig *signatures.Signature) (*Instance, error) {
	s, err := parseScan(sig)
	if err != nil {
		return nil, err
	}
	x, err := e.Input(sig.Inputs[0])
	if err != nil {
		return nil, err
	}
	p, err := planScan(x.Shape, x.Strides, s.dim, int64(e.SMs))
	if err != nil {
		return nil, err
	}
	y, err := e.Output(x.Shape, s.out)
	if err != nil {
		return nil, err
	}
	for _, t := range []*Tensor{x, y} {
		if uint64(t.Ptr)%uint64(min(16, p.V*t.ElemSize())) != 0 {
			p.vld = false
		}
	}
	defs, err := scanDefines(s, p)
	if err != nil {
		return nil, err
	}
	f, err := e.Function(rdSource("scan.cu", scanSource, defs), p.kernel)
	if err != nil {
		return nil, err
	}
	return &Instance{
		Inputs: []*Tensor{x}, Outputs: []*Tensor{y}, FLOPs: x.Numel(),
		Launch: rowLaunch(f, p.rp, p.grid, p.block, x.Ptr, y.Ptr),
	}, nil
}

// scanDefines are the compile-time definitions of a scan kernel.
func scanDefines(s *scSpec, p *scPlan) (map[string]string, error) {
	in, out, err := rdCodes2(s.in, s.out)
	if err != nil {
		return nil, err
	}
	op := "0"
	if s.prod {
		op = "1"
	}
	vld := "0"
	if p.vld {
		vld = "1"
	}
	return map[string]string{
		"SC_IN": in, "SC_OUT": out, "SC_OP": op,
		"SC_V": strconv.FormatInt(p.V, 10), "SC_TPR": strconv.FormatInt(p.TPR, 10),
		"SC_VLD": vld, "SC_U": strconv.FormatInt(scTiles(p, signatures.DTypeSize(s.in)), 10),
	}, nil
}
