package cublaslt_test

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/kreplay/kreplay/internal/cublas"
	"github.com/kreplay/kreplay/internal/cublas/cublastest"
	"github.com/kreplay/kreplay/internal/cublaslt"
)

func f32(v float32) unsafe.Pointer { return unsafe.Pointer(&v) }

func layout(t *testing.T, rows, cols, ld int) *cublaslt.MatrixLayout {
	l, err := cublaslt.NewMatrixLayout(cublas.R16F, uint64(rows), uint64(cols), int64(ld))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Destroy() })
	return l
}

// TestGPUMatmulBias runs D = alpha*op(A)*B + beta*C + bias in fp16 with
// fp32 compute, with and without batching, and checks every element
// against a CPU reference.
func TestGPUMatmulBias(t *testing.T) {
	cublastest.Require(t, cublaslt.Load)
	dev, err := cublastest.Open()
	if err != nil {
		t.Fatalf("CUDA driver: %v", err)
	}
	defer dev.Close()
	h, err := cublaslt.Create()
	if err != nil {
		t.Fatal(err)
	}
	defer h.Destroy()
	v, err := cublaslt.GetVersion()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("cuBLASLt %d from %s", v, cublaslt.Path())

	const m, n, k = 64, 48, 32
	const wsSize = 32 << 20
	ws, err := dev.Alloc(wsSize)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Free(ws)
	r := rand.New(rand.NewPCG(5, 6))

	for _, tc := range []struct {
		name      string
		transA    cublas.Operation
		batch     int
		heuristic bool
	}{
		{"NN", cublas.OpN, 1, true},
		{"TN", cublas.OpT, 1, true},
		{"NN-batched", cublas.OpN, 3, true},
		{"NN-implicit-algo", cublas.OpN, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			unbind, err := dev.Bind()
			if err != nil {
				t.Fatal(err)
			}
			defer unbind()
			lda := m
			aRows, aCols := m, k
			if tc.transA == cublas.OpT {
				lda, aRows, aCols = k, k, m
			}
			aB, aV := cublastest.HalfMatrix(r, m*k*tc.batch)
			bB, bV := cublastest.HalfMatrix(r, k*n*tc.batch)
			cB, cV := cublastest.HalfMatrix(r, m*n*tc.batch)
			biasB, biasV := cublastest.HalfMatrix(r, m)
			dA, dB, dC, dBias := dev.Upload(t, aB), dev.Upload(t, bB), dev.Upload(t, cB), dev.Upload(t, biasB)
			dD := dev.Upload(t, make([]byte, len(cB)))

			desc, err := cublaslt.NewMatmulDesc(cublas.Compute32F, cublas.R32F)
			if err != nil {
				t.Fatal(err)
			}
			defer desc.Destroy()
			for _, err := range []error{
				desc.SetTransA(tc.transA), desc.SetTransB(cublas.OpN),
				desc.SetEpilogue(cublaslt.EpilogueBias), desc.SetBiasPointer(dBias),
				desc.SetBiasDataType(cublas.R16F), desc.SetPointerMode(cublaslt.PointerModeHost),
			} {
				if err != nil {
					t.Fatal(err)
				}
			}
			buf := make([]byte, 4)
			if sz, err := desc.GetAttribute(cublaslt.DescEpilogue, buf); err != nil || sz != 4 ||
				cublaslt.Epilogue(binary.NativeEndian.Uint32(buf)) != cublaslt.EpilogueBias {
				t.Fatalf("epilogue read back as %x (size %d, %v)", buf, sz, err)
			}
			la, lb, lc, ld := layout(t, aRows, aCols, lda), layout(t, k, n, k), layout(t, m, n, m), layout(t, m, n, m)
			if tc.batch > 1 {
				for _, x := range []struct {
					l      *cublaslt.MatrixLayout
					stride int64
				}{{la, m * k}, {lb, k * n}, {lc, m * n}, {ld, m * n}} {
					if err := x.l.SetBatchCount(int32(tc.batch)); err != nil {
						t.Fatal(err)
					}
					if err := x.l.SetStridedBatchOffset(x.stride); err != nil {
						t.Fatal(err)
					}
				}
			}
			var algo *cublaslt.MatmulAlgo
			var wsBytes uint64
			if tc.heuristic {
				pref, err := cublaslt.NewMatmulPreference()
				if err != nil {
					t.Fatal(err)
				}
				defer pref.Destroy()
				if err := pref.SetMaxWorkspaceBytes(wsSize); err != nil {
					t.Fatal(err)
				}
				res, err := h.AlgoGetHeuristic(desc, la, lb, lc, ld, pref, 4)
				if err != nil {
					t.Fatal(err)
				}
				if len(res) == 0 || res[0].State != cublas.StatusSuccess || res[0].WorkspaceSize > wsSize {
					t.Fatalf("heuristic results %+v", res)
				}
				t.Logf("%d algorithms; first needs %d workspace bytes, %.2f waves", len(res), res[0].WorkspaceSize, res[0].WavesCount)
				algo, wsBytes = &res[0].Algo, wsSize
			}
			const alpha, beta = 1.0, 0.5
			if err := h.Matmul(desc, f32(alpha), dA, la, dB, lb, f32(beta), dC, lc, dD, ld,
				algo, ws, wsBytes, nil); err != nil {
				t.Fatal(err)
			}
			got := dev.Download(t, dD, len(cB))
			want := make([]float64, m*n*tc.batch)
			for bi := 0; bi < tc.batch; bi++ {
				for j := 0; j < n; j++ {
					for i := 0; i < m; i++ {
						s := 0.0
						for l := 0; l < k; l++ {
							var a float64
							if tc.transA == cublas.OpN {
								a = aV[bi*m*k+i+l*lda]
							} else {
								a = aV[bi*m*k+l+i*lda]
							}
							s += a * bV[bi*k*n+l+j*k]
						}
						idx := bi*m*n + i + j*m
						want[idx] = alpha*s + beta*cV[idx] + biasV[i]
					}
				}
			}
			cublastest.CompareHalf(t, got, want)
		})
	}
}
