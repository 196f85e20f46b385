package tier3

import (
	"math"
	"testing"

	"github.com/kreplay/kreplay/internal/cuda"
)

// rdCase is a traced op of the reduction family for a GPU test.
type rdCase struct {
	name string
	op   string
	ins  []rdIn
}

// reduceGPUCases: the traced shapes, non-contiguous views and outer-dim
// reductions, for every kernel path (rows with and without vector loads,
// cols, split two-pass, the generic multi-dim index).
var reduceGPUCases = []rdCase{
	{"mean f32 llama rmsnorm", "aten::mean", []rdIn{rdT("float", 4, 512, 4096), rdL("[-1]"), rdS("True"), rdNone()}},
	{"sum f16 last", "aten::sum", []rdIn{rdT("c10::Half", 4, 512, 1024), rdL("[-1]"), rdS("False"), rdNone()}},
	{"sum bf16 last", "aten::sum", []rdIn{rdT("c10::BFloat16", 64, 4096), rdL("[-1]"), rdS("False"), rdNone()}},
	{"sum f32 outer dim", "aten::sum", []rdIn{rdT("float", 2048, 1024), rdL("[0]"), rdS("False"), rdNone()}},
	{"sum f16 transposed", "aten::sum", []rdIn{rdTS("c10::Half", []int64{1024, 512}, []int64{1, 1024}), rdL("[-1]"), rdS("False"), rdNone()}},
	{"sum f32 full two-pass", "aten::sum", []rdIn{rdT("float", 1<<22), rdNone()}},
	{"sum f32 two dims around a kept one", "aten::sum", []rdIn{rdT("float", 33, 17, 65), rdL("[0, 2]"), rdS("False"), rdNone()}},
	{"sum f16 padded rows", "aten::sum", []rdIn{rdTS("c10::Half", []int64{256, 300}, []int64{600, 1}), rdL("[-1]"), rdS("True"), rdNone()}},
	{"sum f16 misaligned rows", "aten::sum", []rdIn{rdTS("c10::Half", []int64{256, 300}, []int64{301, 1}), rdL("[-1]"), rdS("False"), rdNone()}},
	{"sum f16 into f32", "aten::sum", []rdIn{rdT("c10::Half", 128, 2000), rdL("[1]"), rdS("False"), rdS("6")}},
	{"sum bool", "aten::sum", []rdIn{rdT("bool", 4, 512), rdL("[-1]"), rdS("False"), rdNone()}},
	{"sum i64 outer", "aten::sum", []rdIn{rdT("long int", 1000, 33), rdL("[0]"), rdS("False"), rdNone()}},
	{"mean f16 two dims", "aten::mean", []rdIn{rdT("c10::Half", 16, 64, 128), rdL("[0, 2]"), rdS("True"), rdNone()}},
	{"prod f32", "aten::prod", []rdIn{rdT("float", 64, 8), rdS("1"), rdS("False"), rdNone()}},
	{"max dim f16", "aten::max", []rdIn{rdT("c10::Half", 64, 1000), rdS("1"), rdS("False")}},
	{"min dim f32 outer keepdim", "aten::min", []rdIn{rdT("float", 3000, 70), rdS("0"), rdS("True")}},
	{"max i64 scalar", "aten::max", []rdIn{rdT("long int", 1)}},
	{"max f32 full non-contiguous", "aten::max", []rdIn{rdTS("float", []int64{1000, 37}, []int64{1, 1000})}},
	{"amax bf16", "aten::amax", []rdIn{rdT("c10::BFloat16", 32, 4096), rdL("[-1]"), rdS("True")}},
	{"amin f32 middle", "aten::amin", []rdIn{rdT("float", 128, 64, 16), rdL("[1]"), rdS("False")}},
	{"argmax f16 last", "aten::argmax", []rdIn{rdT("c10::Half", 4, 512, 1024), rdS("-1"), rdS("False")}},
	{"argmax f32 full non-contiguous", "aten::argmax", []rdIn{rdTS("float", []int64{100, 37}, []int64{1, 100}), rdNone(), rdS("False")}},
	{"argmax f16 full two-pass", "aten::argmax", []rdIn{rdT("c10::Half", 1<<21), rdNone(), rdS("False")}},
	{"argmin f32 outer", "aten::argmin", []rdIn{rdT("float", 300, 200), rdS("0"), rdS("False")}},
	{"any bool", "aten::any", []rdIn{rdT("bool", 250880, 1), rdS("-1"), rdS("False")}},
	{"all bool full", "aten::all", []rdIn{rdT("bool", 4)}},
	{"all bool rows", "aten::all", []rdIn{rdT("bool", 64, 5), rdS("-1"), rdS("False")}},
	{"any bool rows", "aten::any", []rdIn{rdT("bool", 64, 40), rdS("-1"), rdS("True")}},
	{"sum f32 short rows in lane groups", "aten::sum", []rdIn{rdT("float", 20000, 64), rdL("[-1]"), rdS("False"), rdNone()}},
	{"argmax f16 rows of 100 in lane groups", "aten::argmax", []rdIn{rdT("c10::Half", 20000, 100), rdS("-1"), rdS("False")}},
}

// refRows groups a tensor's values (row-major, as download returns them)
// by output: per output (row-major over the kept dims) the reduced
// elements in row-major order of the reduced dims.
func refRows(x []float64, shape []int64, reduced []bool) [][]float64 {
	return naiveReduce(shape, ContiguousStrides(shape), reduced, x)
}

func TestReduceGPU(t *testing.T) {
	runGPUCases(t, reduceGPUCases, parseReduce, 1000, 17, func(t *testing.T, _ rdCase, spec *reduceSpec, inst *Instance, s *cuda.Stream) {
		checkReduce(t, spec, inst, s)
	})
}

// checkReduce checks a reduction's outputs (values where spec has an
// output dtype, then indices where it has indices) against refRows of its
// input.
func checkReduce(t *testing.T, spec *reduceSpec, inst *Instance, s *cuda.Stream) {
	t.Helper()
	in := inst.Inputs[0]
	rows := refRows(download(t, in, s), in.Shape, spec.reduced(len(in.Shape)))
	outs := inst.Outputs
	if spec.out != "" {
		vals := outs[0]
		outs = outs[1:]
		if vals.DType != spec.out || vals.Numel() != int64(len(rows)) {
			t.Fatalf("values %s[%v], want %s with %d elements", vals.DType, vals.Shape, spec.out, len(rows))
		}
		checkReduceValues(t, spec, rows, download(t, vals, s), vals.DType)
	}
	if spec.indices {
		idx := outs[0]
		if idx.DType != "i64" || idx.Numel() != int64(len(rows)) {
			t.Fatalf("indices %s[%v], want i64 with %d elements", idx.DType, idx.Shape, len(rows))
		}
		checkReduceIndices(t, spec, rows, download(t, idx, s))
	}
}

// checkReduceValues compares values with a float64 reference. Max, min,
// any, all and integer sums are exact. Sums and means are allowed the
// rounding of the output dtype (tolerance(dtype) of the exact value) plus
// 2^-22 of the sum of |x|: four f32 roundings of the largest partial sum
// the f32 accumulation can reach; the random-signed roundings of the
// kernels' accumulation (in these cases sequential runs of a few hundred
// elements at most, then trees) are expected orders of magnitude below. A dropped or doubled
// element shows unless it is tiny. Products (short rows) are compared
// with the dtype tolerance.
func checkReduceValues(t *testing.T, s *reduceSpec, rows [][]float64, got []float64, dtype string) {
	t.Helper()
	bad := 0
	for o, row := range rows {
		var want, abs float64
		switch s.op {
		case rdSum:
			for _, v := range row {
				want += v
				abs += math.Abs(v)
			}
			if s.mean {
				want /= float64(len(row))
				abs /= float64(len(row))
			}
		case rdProd:
			want = 1
			for _, v := range row {
				want *= v
			}
		case rdMax, rdMin:
			want = row[0]
			for _, v := range row {
				if (s.op == rdMax && v > want) || (s.op == rdMin && v < want) {
					want = v
				}
			}
		case rdAny, rdAll:
			want = 0
			if s.op == rdAll {
				want = 1
			}
			for _, v := range row {
				if s.op == rdAny && v != 0 {
					want = 1
				}
				if s.op == rdAll && v == 0 {
					want = 0
				}
			}
		}
		tol := 0.0
		switch s.op {
		case rdSum:
			tol = tolerance(dtype)*math.Abs(want) + math.Ldexp(abs, -22)
		case rdProd:
			tol = tolerance(dtype) * math.Abs(want)
		}
		if d := math.Abs(got[o] - want); !(d <= tol) {
			if bad++; bad <= 5 {
				t.Errorf("output %d = %v, want %v (tolerance %.3g)", o, got[o], want, tol)
			}
		}
	}
	if bad > 5 {
		t.Errorf("%d of %d outputs wrong", bad, len(rows))
	}
}

// checkReduceIndices checks that every index points at an extreme value
// of its row (any of them when there are ties).
func checkReduceIndices(t *testing.T, s *reduceSpec, rows [][]float64, got []float64) {
	t.Helper()
	bad := 0
	for o, row := range rows {
		isMin := s.op == rdMin || s.op == rdArgmin
		best := row[0]
		for _, v := range row {
			if (isMin && v < best) || (!isMin && v > best) {
				best = v
			}
		}
		i := int(got[o])
		if float64(i) != got[o] || i < 0 || i >= len(row) || row[i] != best {
			if bad++; bad <= 5 {
				v := math.NaN()
				if i >= 0 && i < len(row) {
					v = row[i]
				}
				t.Errorf("output %d: index %v (value %v), want an index of %v", o, got[o], v, best)
			}
		}
	}
	if bad > 5 {
		t.Errorf("%d of %d indices wrong", bad, len(rows))
	}
}
