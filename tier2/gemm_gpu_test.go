package tier2

import (
	"encoding/binary"
	"math"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/cuda/cudatest"
	"github.com/kreplay/kreplay/internal/launch"
	"github.com/kreplay/kreplay/signatures"
)

// gemmTrace is a minimal Kineto trace holding one GEMM op and its kernel,
// so the test's signatures come through the same import path as real ones.
func gemmTrace(op, dims, strides, types, concrete, kernel string) string {
	return `{"traceEvents":[
{"ph":"X","cat":"cpu_op","name":"` + op + `","pid":1,"tid":1,"ts":1,"dur":10,"args":{"External id":5,
 "Input Dims":` + dims + `,"Input Strides":` + strides + `,"Input type":` + types + `,"Concrete Inputs":` + concrete + `}},
{"ph":"X","cat":"kernel","name":"` + kernel + `","pid":0,"tid":7,"ts":2,"dur":3,"args":{"External id":5,"device":0,"stream":7,
 "grid":[1,1,1],"block":[128,1,1],"registers per thread":32,"shared memory":0}}]}`
}

func withContext(t *testing.T, fn func(s *cuda.Stream)) {
	t.Helper()
	_, ctx := cudatest.PrimaryContext(t)
	if err := ctx.Do(func() error {
		s, err := cuda.NewStream()
		if err != nil {
			return err
		}
		defer s.Destroy()
		fn(s)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// withLibraries runs fn as withContext does, with the libraries opened
// on the stream (Open, default options) and closed after fn.
func withLibraries(t *testing.T, fn func(libs *Libraries, s *cuda.Stream)) {
	t.Helper()
	withContext(t, func(s *cuda.Stream) {
		libs, err := Open(s, LibOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer libs.Close()
		fn(libs, s)
	})
}

func readHalf(t *testing.T, p cuda.DevicePtr, n int64, s *cuda.Stream) []float64 {
	t.Helper()
	b := make([]byte, 2*n)
	if err := cuda.CopyDtoH(b, p, s); err != nil {
		t.Fatal(err)
	}
	out := make([]float64, n)
	for i := range out {
		out[i] = float64(launch.F16ToF32(binary.LittleEndian.Uint16(b[2*i:])))
	}
	return out
}

// TestGPUGEMMMatchesReference replays GEMM signatures of the shapes and
// layouts the traces have (weight.t() operands, bias epilogue, batched,
// baddbmm with alpha and beta) and checks the output against a float64
// CPU reference computed from the same random inputs, read back through
// the op's own strides.
func TestGPUGEMMMatchesReference(t *testing.T) {
	cases := []struct {
		name, op, dims, strides, types, concrete string
		api                                      API
	}{
		{"mm weight.t()", "aten::mm", `[[48,64],[64,40]]`, `[[64,1],[1,64]]`, `["c10::Half","c10::Half"]`, `["",""]`, APIGemmEx},
		{"mm row-major", "aten::mm", `[[33,64],[64,40]]`, `[[64,1],[40,1]]`, `["c10::Half","c10::Half"]`, `["",""]`, APIGemmEx},
		{"mm decode", "aten::mm", `[[1,64],[64,72]]`, `[[64,1],[1,64]]`, `["c10::Half","c10::Half"]`, `["",""]`, APIGemmEx},
		{"addmm bias", "aten::addmm", `[[40],[48,64],[64,40],[],[]]`, `[[1],[64,1],[1,64],[],[]]`,
			`["c10::Half","c10::Half","c10::Half","Scalar","Scalar"]`, `["","","","1","1"]`, APILtMatmulBias},
		{"bmm", "aten::bmm", `[[4,32,48],[4,48,24]]`, `[[1536,48,1],[1152,24,1]]`, `["c10::Half","c10::Half"]`, `["",""]`, APIGemmStridedBatchedEx},
		{"baddbmm", "aten::baddbmm", `[[4,1,32],[4,32,16],[4,16,32],[],[]]`, `[[32,32,1],[512,16,1],[512,1,16],[],[]]`,
			`["c10::Half","c10::Half","c10::Half","Scalar","Scalar"]`, `["","","","1.","0.125"]`, APIGemmStridedBatchedEx},
	}
	withLibraries(t, func(libs *Libraries, s *cuda.Stream) {
		// Subtests run on goroutines of their own; the context is current
		// only on this one, so the cases run in a loop here.
		for i, tc := range cases {
			func(t *testing.T) {
				set, err := signatures.Import(strings.NewReader(gemmTrace(tc.op, tc.dims, tc.strides, tc.types, tc.concrete, "nvjet_test_bias_TNT")), tc.name, signatures.Options{})
				if err != nil {
					t.Fatal(err)
				}
				sig := set.Signatures[0]
				if sig.GEMM == nil {
					t.Fatalf("%s: no GEMM parameters: %s", tc.name, sig.Unreplayable)
				}
				k, err := NewGEMM(sig, libs, launch.Options{Sets: 1, Seed: uint64(i + 1)}, s)
				if err != nil {
					t.Fatal(err)
				}
				defer k.Close()
				if k.API() != tc.api {
					t.Errorf("%s: API %s, want %s", tc.name, k.API(), tc.api)
				}
				g := sig.GEMM
				b := k.sets[0]
				// Inputs as the op sees them: the op's A is cuBLAS's B.
				opA := readHalf(t, b.b, k.bBytes/2, s)
				opB := readHalf(t, b.a, k.aBytes/2, s)
				c0 := readHalf(t, b.c, k.cBytes/2, s)
				var bias []float64
				if b.bias != 0 {
					bias = readHalf(t, b.bias, k.biasBytes/2, s)
				}
				// Poison the output where beta is 0, so unwritten elements show.
				if g.Beta == 0 {
					if err := cuda.MemsetD8Async(b.c, 0xff, int(k.cBytes), s); err != nil {
						t.Fatal(err)
					}
				}
				if err := k.Launch(s, 0); err != nil {
					t.Fatal(err)
				}
				if err := s.Synchronize(); err != nil {
					t.Fatal(err)
				}
				got := readHalf(t, b.c, k.cBytes/2, s)
				ins := sig.Inputs
				ai, bi := 0, 1
				if tc.op == "aten::addmm" || tc.op == "aten::baddbmm" {
					ai, bi = 1, 2
				}
				as, bs := ins[ai].Strides, ins[bi].Strides
				off := len(as) - 2
				var num, den float64
				for bt := int64(0); bt < g.Batch; bt++ {
					var aBatch, bBatch int64
					if off == 1 {
						aBatch, bBatch = bt*as[0], bt*bs[0]
					}
					for i := int64(0); i < g.M; i++ {
						for j := int64(0); j < g.N; j++ {
							var acc float64
							for kk := int64(0); kk < g.K; kk++ {
								acc += opA[aBatch+i*as[off]+kk*as[off+1]] * opB[bBatch+kk*bs[off]+j*bs[off+1]]
							}
							idx := bt*g.StrideC + i*g.LDC + j
							want := g.Alpha * acc
							if bias != nil {
								want += bias[j] // addmm's self is the bias; C is not read
							} else if g.Beta != 0 {
								want += g.Beta * c0[idx]
							}
							d := got[idx] - want
							if math.IsNaN(got[idx]) {
								t.Fatalf("%s: output [%d,%d,%d] is NaN (unwritten?)", tc.name, bt, i, j)
							}
							num += d * d
							den += want * want
						}
					}
				}
				if rel := math.Sqrt(num / den); rel > 2e-3 || math.IsNaN(rel) {
					t.Errorf("%s: relative error %.2e against the float64 reference", tc.name, rel)
				}
			}(t)
		}
	})
}
