package tier3

// Host runs of the reduction-family kernels: the kernel sources compiled
// with g++ after testdata/rd_host.h (a CUDA shim: one OS thread per CUDA
// thread, barriers for __syncthreads and warp shuffles) and run on the
// GPU tests' cases, checked with the same float64 references. They check
// the kernels' logic (indexing, vector paths, group and block reductions,
// splits, scans) on any machine with a C++20 compiler; not timing, memory
// ordering or PTX.
//
// By default a subset covering every kernel path runs (binaries are cached
// under the user cache directory); KREPLAY_RD_HOST=all runs every GPU case,
// and -short skips them.

import (
	"bytes"
	_ "embed"
	"encoding/binary"
	"fmt"
	"maps"
	"math"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/launch"
	"github.com/kreplay/kreplay/signatures"
)

// rdHostSMs is the SM count the host runs plan for: small, so that splits and
// grid-stride loops happen on small tensors.
const rdHostSMs = 8

// rdHostSubset names the cases a default host run takes: one or more per
// kernel path.
var rdHostSubset = map[string]bool{
	"sum f16 last": true, "sum f32 outer dim": true, "sum f16 transposed": true, "sum f32 full two-pass": true,
	"sum f32 two dims around a kept one": true, "sum f16 misaligned rows": true, "max dim f16": true,
	"argmax f32 full non-contiguous": true, "argmin f32 outer": true, "any bool": true,
	"sum f32 short rows in lane groups": true, "argmax f16 rows of 100 in lane groups": true,
	"sum f16 cols split permuted out": true, "mean f64": true,
	"f32 rows of 1000": true, "f16 half_to_float block rows": true, "f32 long rows": true, "f16 middle dim": true,
	"f16 rows of 16 in lane groups": true, "f32 log unaligned": true,
	"f16 traced": true, "f32 block rows": true, "f32 long rows no affine": true, "f32 strided last dim": true,
	"cumsum bool traced": true, "cumsum f32 block tiles": true, "cumsum f32 outer dim": true,
	"cumsum i64 rows of 3 in lane groups": true, "cumprod f32": true, "cumsum f32 strided rows": true,
	"cumsum f32 rows of 1024": true, "cumsum f16 rows": true,
}

// rdHostCases selects the cases of a host run and skips when there is no
// C++ compiler or -short.
func rdHostCases(t *testing.T, cases []rdCase) []rdCase {
	t.Helper()
	if testing.Short() {
		t.Skip("host runs of the kernels take minutes")
	}
	if _, err := exec.LookPath(rdHostCXX()); err != nil {
		t.Skipf("no C++ compiler (%s): %v", rdHostCXX(), err)
	}
	if os.Getenv("KREPLAY_RD_HOST") == "all" {
		return cases
	}
	var sel []rdCase
	for _, c := range cases {
		if rdHostSubset[c.name] {
			sel = append(sel, c)
		}
	}
	return sel
}

func rdHostCXX() string {
	if c := os.Getenv("CXX"); c != "" {
		return c
	}
	return "g++"
}

// rdHostTensor is a tensor in buffer buf of a host run.
type rdHostTensor struct {
	Tensor
	buf int
}

// rdHostRun collects the buffers and launches of one host run.
type rdHostRun struct {
	t       *testing.T
	bufs    [][]byte
	launch  bytes.Buffer
	nlaunch int
	seed    uint64
	// full keeps launches' grids whole, for kernels without a grid-stride
	// loop (one block per row).
	full bool
	// variant is the launcher prepare registered.
	variant *hostVariant
}

// alloc adds a zeroed buffer of n bytes and returns its index.
func (r *rdHostRun) alloc(n int64) int {
	r.bufs = append(r.bufs, make([]byte, max(n, 16)))
	return len(r.bufs) - 1
}

// tensor adds a tensor with random contents, as Env.NewTensor.
func (r *rdHostRun) tensor(shape, strides []int64, dtype string) *rdHostTensor {
	t := &rdHostTensor{Tensor: Tensor{Shape: shape, Strides: strides, DType: dtype, Span: span(shape, strides)}}
	t.buf = r.alloc(t.Bytes())
	r.seed++
	pat, err := launch.RandomPattern(dtype, int(t.Bytes()), r.seed)
	if err != nil {
		r.t.Fatal(err)
	}
	copy(r.bufs[t.buf], pat)
	return t
}

// input adds a traced tensor input.
func (r *rdHostRun) input(in signatures.Input) *rdHostTensor {
	st := in.Strides
	if len(st) != len(in.Shape) {
		st = ContiguousStrides(in.Shape)
	}
	return r.tensor(in.Shape, st, signatures.DType(in.Type))
}

// output adds a contiguous output tensor.
func (r *rdHostRun) output(shape []int64, dtype string) *rdHostTensor {
	return r.tensor(shape, ContiguousStrides(shape), dtype)
}

// add queues a launch; args are buffer indices (int, -1 for a null
// pointer) or cuda.RawArg values. Grids are cut to 8 blocks in x, unless
// r.full: every kernel loops over its work with a grid stride.
func (r *rdHostRun) add(name string, grid, block [3]uint32, args ...any) {
	w := &r.launch
	le := binary.LittleEndian
	binary.Write(w, le, uint64(len(name)))
	w.WriteString(name)
	if !r.full {
		grid[0] = min(grid[0], 8)
	}
	for _, v := range append(grid[:], block[:]...) {
		binary.Write(w, le, v)
	}
	binary.Write(w, le, uint32(len(args)))
	for _, a := range args {
		switch v := a.(type) {
		case int:
			binary.Write(w, le, uint32(0))
			binary.Write(w, le, int32(v))
		case cuda.RawArg:
			binary.Write(w, le, uint32(1))
			binary.Write(w, le, uint64(len(v.Data)))
			w.Write(v.Data)
		default:
			panic(fmt.Sprintf("arg %T", a))
		}
	}
	r.nlaunch++
}

// The f16 conversions are PTX on the GPU and _Float16 on the host.
var rdHostH2F = regexp.MustCompile(`asm\("cvt\.f32\.f16 %0, %1;" : "=f"\(f\) : "h"\(h\)\);`)
var rdHostF2H = regexp.MustCompile(`asm\("cvt\.rn\.f16\.f32 %0, %1;" : "=h"\(h\) : "f"\(f\)\);`)

//go:embed testdata/rd_host.h
var rdHostShim string

//go:embed testdata/rd_host_main.cc
var rdHostMain string

// rdHostBuild is the package's one builder of reduction-family launchers.
var rdHostBuild struct {
	once sync.Once
	b    *hostBuild
}

// prepare registers the variant of src (of kernel family family) that the
// run needs, to be compiled with the other variants registered before the
// first run; a subtest calls it before t.Parallel.
func (r *rdHostRun) prepare(src Source, family string) {
	code := src.Code
	code = rdHostH2F.ReplaceAllString(code, "f = emu_h2f(h);")
	code = rdHostF2H.ReplaceAllString(code, "h = emu_f2h(f);")
	body := strings.ReplaceAll(code, `extern "C" `, "") + "\n" + rdHostMain
	defs := maps.Clone(src.Defines)
	if defs == nil {
		defs = map[string]string{}
	}
	defs["EMU_"+family] = "1"
	rdHostBuild.once.Do(func() {
		rdHostBuild.b = newHostBuild(r.t, "rdv", rdHostCXX(), []string{"-std=c++20", "-O1", "-w"}, rdHostShim)
	})
	r.variant = rdHostBuild.b.want(body, defs)
}

// run runs the queued launches of the prepared variant, then reads every
// buffer back.
func (r *rdHostRun) run() {
	bin, variant := rdHostBuild.b.binary(r.t, r.variant)
	var in bytes.Buffer
	le := binary.LittleEndian
	binary.Write(&in, le, uint64(len(r.bufs)))
	for _, b := range r.bufs {
		binary.Write(&in, le, uint64(len(b)))
		in.Write(b)
	}
	binary.Write(&in, le, uint64(r.nlaunch))
	in.Write(r.launch.Bytes())
	cmd := exec.Command(bin, variant)
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		r.t.Fatalf("host run: %v %s", err, stderr.String())
	}
	for i := range r.bufs {
		n := le.Uint64(out)
		out = out[8:]
		r.bufs[i] = append([]byte{}, out[:n]...)
		out = out[n:]
	}
}

// values reads a tensor as download does.
func (r *rdHostRun) values(x *rdHostTensor) []float64 {
	return viewValues(r.bufs[x.buf], &x.Tensor)
}

func TestRdHostReduce(t *testing.T) {
	for _, c := range rdHostCases(t, append(append([]rdCase{}, reduceGPUCases...), rdHostExtraReduce...)) {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			sig := rdSig(t, c.op, c.ins...)
			s, err := parseReduce(sig)
			if err != nil {
				t.Fatal(err)
			}
			r := &rdHostRun{t: t, seed: 77}
			x := r.input(sig.Inputs[0])
			op := s.op
			if s.indices {
				op = map[rdOp]rdOp{rdMax: rdArgmax, rdMin: rdArgmin, rdArgmax: rdArgmax, rdArgmin: rdArgmin}[op]
			}
			p, err := planReduce(x.Shape, x.Strides, s.reduced(len(x.Shape)), x.ElemSize(), op.isArg(), rdHostSMs)
			if err != nil {
				t.Fatal(err)
			}
			if !s.mean {
				p.scale = 1
			}
			oshape := s.outShape(x.Shape)
			vals, idx := -1, -1
			var vt, it *rdHostTensor
			if s.out != "" {
				vt = r.output(oshape, s.out)
				vals = vt.buf
			}
			if s.indices {
				it = r.output(oshape, "i64")
				idx = it.buf
			}
			defs, err := reduceDefines(s, p)
			if err != nil {
				t.Fatal(err)
			}
			part := -1
			if p.split > 1 {
				part = r.alloc(p.O * p.split * rdStateSize(op, s.in))
			}
			name := "rd_rows"
			if p.cols {
				name = "rd_cols"
			}
			raw := p.raw()
			r.add(name, p.grid, p.block, x.buf, raw, vals, idx, part)
			if p.split > 1 {
				r.add("rd_finish", [3]uint32{p.finishGrid, 1, 1}, [3]uint32{256, 1, 1}, part, raw, vals, idx)
			}
			r.prepare(rdSource("reduce.cu", reduceSource, defs), "REDUCE")
			t.Parallel()
			r.run()
			rows := refRows(r.values(x), x.Shape, s.reduced(len(x.Shape)))
			t.Logf("plan cols %v V %d TPR %d split %d grid %v block %v", p.cols, p.V, p.TPR, p.split, p.grid, p.block)
			if vt != nil {
				checkReduceValues(t, s, rows, r.values(vt), vt.DType)
			}
			if it != nil {
				checkReduceIndices(t, s, rows, r.values(it))
			}
		})
	}
}

// rdHostExtraReduce are host-only cases: layouts the GPU cases leave out.
var rdHostExtraReduce = []rdCase{
	{"sum f32 full split small", "aten::sum", []rdIn{rdT("float", 100000), rdNone()}},
	{"argmin f32 full misaligned", "aten::argmin", []rdIn{rdT("float", 99999), rdNone(), rdS("False")}},
	{"sum f16 cols split permuted out", "aten::sum", []rdIn{rdTS("c10::Half", []int64{64, 5000, 3}, []int64{3, 192, 1}), rdL("[1]"), rdS("False"), rdNone()}},
	{"max dim bf16 cols", "aten::max", []rdIn{rdT("c10::BFloat16", 500, 64), rdS("0"), rdS("True")}},
	{"mean f64", "aten::mean", []rdIn{rdT("double", 30, 500), rdL("[-1]"), rdS("False"), rdNone()}},
	{"prod i64", "aten::prod", []rdIn{rdT("long int", 50, 3), rdS("1"), rdS("False"), rdNone()}},
	{"all u8", "aten::all", []rdIn{rdT("unsigned char", 50, 33), rdS("1"), rdS("False")}},
	{"sum i32 full", "aten::sum", []rdIn{rdT("int", 3000, 7), rdNone()}},
}

func TestRdHostSoftmax(t *testing.T) {
	for _, c := range rdHostCases(t, softmaxGPUCases) {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			sig := rdSig(t, c.op, c.ins...)
			s, err := parseSoftmax(sig)
			if err != nil {
				t.Fatal(err)
			}
			r := &rdHostRun{t: t, seed: 99}
			x := r.input(sig.Inputs[0])
			p, err := planSoftmax(x.Shape, x.Strides, s.dim, x.ElemSize(), rdHostSMs)
			if err != nil {
				t.Fatal(err)
			}
			y := r.output(x.Shape, s.out)
			defs, _ := softmaxDefines(s, p)
			r.add(p.kernel, p.grid, p.block, x.buf, p.rp.raw(), y.buf)
			r.prepare(rdSource("softmax.cu", softmaxSource, defs), "SOFTMAX")
			t.Parallel()
			r.run()
			t.Logf("plan %s V %d CH %d TPR %d", p.kernel, p.V, p.CH, p.TPR)
			checkClose(t, c.name, r.values(y), refSoftmax(r.values(x), x.Shape, s.dim, s.log), y.DType)
		})
	}
}

func TestRdHostLayerNorm(t *testing.T) {
	for _, c := range rdHostCases(t, layerNormGPUCases) {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			sig := rdSig(t, c.op, c.ins...)
			s, err := parseLayerNorm(sig)
			if err != nil {
				t.Fatal(err)
			}
			r := &rdHostRun{t: t, seed: 5}
			x := r.input(sig.Inputs[0])
			p, err := planLayerNorm(x.Shape, x.Strides, s.axis, x.ElemSize(), rdHostSMs)
			if err != nil {
				t.Fatal(err)
			}
			p.rp.eps = s.eps
			w, b := -1, -1
			var wv, bv []float64
			if s.hasW {
				wt := r.input(sig.Inputs[2])
				w, wv = wt.buf, r.values(wt)
			}
			if s.hasB {
				bt := r.input(sig.Inputs[3])
				b, bv = bt.buf, r.values(bt)
			}
			y := r.output(x.Shape, s.in)
			mean := r.output(s.statShape(x.Shape), "f32")
			rstd := r.output(s.statShape(x.Shape), "f32")
			defs, _ := layerNormDefines(s, p)
			r.add(p.kernel, p.grid, p.block, x.buf, p.rp.raw(), w, b, y.buf, mean.buf, rstd.buf)
			r.prepare(rdSource("norm.cu", normSource, defs), "NORM")
			t.Parallel()
			r.run()
			t.Logf("plan %s V %d CH %d TPR %d", p.kernel, p.V, p.CH, p.TPR)
			wy, wm, wr := refLayerNorm(r.values(x), s.n, wv, bv, s.eps)
			checkClose(t, "y", r.values(y), wy, y.DType)
			checkClose(t, "mean", r.values(mean), wm, "f32")
			checkClose(t, "rstd", r.values(rstd), wr, "f32")
		})
	}
}

func TestRdHostScan(t *testing.T) {
	for _, c := range rdHostCases(t, scanGPUCases) {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			sig := rdSig(t, c.op, c.ins...)
			s, err := parseScan(sig)
			if err != nil {
				t.Fatal(err)
			}
			r := &rdHostRun{t: t, seed: 3}
			x := r.input(sig.Inputs[0])
			p, err := planScan(x.Shape, x.Strides, s.dim, rdHostSMs)
			if err != nil {
				t.Fatal(err)
			}
			y := r.output(x.Shape, s.out)
			defs, _ := scanDefines(s, p)
			r.add(p.kernel, p.grid, p.block, x.buf, p.rp.raw(), y.buf)
			r.prepare(rdSource("scan.cu", scanSource, defs), "SCAN")
			t.Parallel()
			r.run()
			t.Logf("plan %s V %d TPR %d", p.kernel, p.V, p.TPR)
			want := refScan(r.values(x), x.Shape, s.dim, s.prod)
			got := r.values(y)
			if rdIsFloat(y.DType) {
				checkClose(t, c.name, got, want, y.DType)
				return
			}
			for j := range want {
				if got[j] != want[j] && !math.IsNaN(want[j]) {
					t.Fatalf("element %d = %v, want %v", j, got[j], want[j])
				}
			}
		})
	}
}

// TestRdHostArgTies runs argmax and argmin over rows with many ties, NaNs,
// infinities and signed zeros through the vector path of rd_rows, and
// checks PyTorch's index exactly: the first NaN when a row has one, else
// the first occurrence of the extreme.
func TestRdHostArgTies(t *testing.T) {
	for _, c := range []struct {
		op, typ string
		n       int64
	}{
		{"aten::argmax", "c10::Half", 1024}, {"aten::argmin", "c10::Half", 1024},
		{"aten::argmax", "float", 512}, {"aten::argmin", "float", 512},
		{"aten::argmax", "c10::BFloat16", 200},
	} {
		t.Run(c.op+"_"+c.typ, func(t *testing.T) {
			if testing.Short() {
				t.Skip("host runs of the kernels take minutes")
			}
			if _, err := exec.LookPath(rdHostCXX()); err != nil {
				t.Skipf("no C++ compiler (%s): %v", rdHostCXX(), err)
			}
			const rows = 12
			sig := rdSig(t, c.op, rdT(c.typ, rows, c.n), rdS("-1"), rdS("False"))
			s, err := parseReduce(sig)
			if err != nil {
				t.Fatal(err)
			}
			r := &rdHostRun{t: t, seed: 11}
			x := r.input(sig.Inputs[0])
			n := c.n
			vals := make([]float64, rows*n)
			for row := int64(0); row < rows; row++ {
				v := vals[row*n : (row+1)*n]
				for i := range v {
					v[i] = float64((int64(i)*7+row*3)%5) - 2
				}
				switch row {
				case 1:
					v[n-3], v[n/3] = math.NaN(), math.NaN()
				case 2:
					for i := range v {
						v[i] = math.Inf(-1)
					}
				case 3:
					for i := range v {
						v[i] = math.Inf(1)
					}
				case 4:
					for i := range v {
						v[i] = 0
					}
					v[0], v[n-1] = math.Copysign(0, -1), math.Copysign(0, -1)
				case 5:
					v[n-1], v[n-2] = 9, 9
					v[n-5], v[n-6] = -9, -9
				case 6:
					v[n-1] = math.NaN()
				case 7:
					v[17], v[n-100] = 9, 9
					v[18], v[n-99] = -9, -9
				case 8:
					v[0] = math.NaN()
				}
			}
			raw := r.bufs[x.buf]
			for i, f := range vals {
				b := math.Float32bits(float32(f))
				switch x.DType {
				case "f32":
					binary.LittleEndian.PutUint32(raw[4*i:], b)
				case "bf16":
					binary.LittleEndian.PutUint16(raw[2*i:], uint16(b>>16))
				default: // f16 of values that are exact in it
					h := uint16(b>>16) & 0x8000
					switch {
					case math.IsNaN(f):
						h |= 0x7e00
					case math.IsInf(f, 0):
						h |= 0x7c00
					case f != 0:
						e := int((b>>23)&0xff) - 127 + 15
						h |= uint16(e)<<10 | uint16((b>>13)&0x3ff)
					}
					binary.LittleEndian.PutUint16(raw[2*i:], h)
				}
			}
			p, err := planReduce(x.Shape, x.Strides, s.reduced(2), x.ElemSize(), true, rdHostSMs)
			if err != nil {
				t.Fatal(err)
			}
			if p.cols || p.V == 1 {
				t.Fatalf("plan cols %v V %d: not the vector path of rd_rows", p.cols, p.V)
			}
			it := r.output(s.outShape(x.Shape), "i64")
			defs, err := reduceDefines(s, p)
			if err != nil {
				t.Fatal(err)
			}
			part := -1
			if p.split > 1 {
				part = r.alloc(p.O * p.split * rdStateSize(s.op, s.in))
			}
			raws := p.raw()
			r.add("rd_rows", p.grid, p.block, x.buf, raws, -1, it.buf, part)
			if p.split > 1 {
				r.add("rd_finish", [3]uint32{p.finishGrid, 1, 1}, [3]uint32{256, 1, 1}, part, raws, -1, it.buf)
			}
			r.prepare(rdSource("reduce.cu", reduceSource, defs), "REDUCE")
			t.Parallel()
			r.run()
			got := r.values(it)
			for row := int64(0); row < rows; row++ {
				v := vals[row*n : (row+1)*n]
				want := 0
				for i := range v {
					if math.IsNaN(v[i]) {
						want = i
						break
					}
					if (s.op == rdArgmax && v[i] > v[want]) || (s.op == rdArgmin && v[i] < v[want]) {
						want = i
					}
				}
				if int(got[row]) != want {
					t.Errorf("row %d: index %v, want %d (V %d TPR %d split %d)", row, got[row], want, p.V, p.TPR, p.split)
				}
			}
		})
	}
}
