package cublas_test

import (
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/kreplay/kreplay/internal/cublas"
	"github.com/kreplay/kreplay/internal/cublas/cublastest"
)

// gpuSetup opens device 0 and a cuBLAS handle. Without a GPU or
// libcublas the test is skipped, or fails under KREPLAY_REQUIRE_GPU=1.
func gpuSetup(t *testing.T) (*cublastest.Device, *cublas.Handle) {
	t.Helper()
	cublastest.Require(t, cublas.Load)
	dev, err := cublastest.Open()
	if err != nil {
		t.Fatalf("CUDA driver: %v", err)
	}
	t.Cleanup(func() { dev.Close() })
	h, err := cublas.Create()
	if err != nil {
		t.Fatalf("cublas.Create: %v", err)
	}
	t.Cleanup(func() {
		if err := h.Destroy(); err != nil {
			t.Errorf("Destroy: %v", err)
		}
	})
	return dev, h
}

// refGemm computes alpha*op(A)*op(B)+beta*C for column-major matrices.
func refGemm(ta, tb cublas.Operation, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) []float64 {
	out := make([]float64, len(c))
	copy(out, c)
	at := func(i, l int) float64 {
		if ta == cublas.OpN {
			return a[i+l*lda]
		}
		return a[l+i*lda]
	}
	bt := func(l, j int) float64 {
		if tb == cublas.OpN {
			return b[l+j*ldb]
		}
		return b[j+l*ldb]
	}
	for j := 0; j < n; j++ {
		for i := 0; i < m; i++ {
			s := 0.0
			for l := 0; l < k; l++ {
				s += at(i, l) * bt(l, j)
			}
			out[i+j*ldc] = alpha*s + beta*c[i+j*ldc]
		}
	}
	return out
}

func scalar(t *testing.T, c cublas.ComputeType, v float64) unsafe.Pointer {
	st, ok := c.ScaleType()
	if !ok {
		t.Fatalf("no scale type for %v", c)
	}
	b, err := cublas.ScalarBytes(st, v)
	if err != nil {
		t.Fatal(err)
	}
	return unsafe.Pointer(&b[0])
}

func TestGPUGemmExHalf(t *testing.T) {
	dev, h := gpuSetup(t)
	v, err := h.GetVersion()
	if err != nil || v < 110000 {
		t.Fatalf("GetVersion = %d, %v", v, err)
	}
	t.Logf("cuBLAS %d from %s", v, cublas.Path())
	if err := h.SetMathMode(cublas.DefaultMath); err != nil {
		t.Fatal(err)
	}
	if m, err := h.GetMathMode(); err != nil || m != cublas.DefaultMath {
		t.Fatalf("GetMathMode = %v, %v", m, err)
	}
	if err := h.SetStream(nil); err != nil {
		t.Fatal(err)
	}
	const m, n, k = 64, 48, 32
	r := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name   string
		ta, tb cublas.Operation
	}{{"NN", cublas.OpN, cublas.OpN}, {"TN", cublas.OpT, cublas.OpN}, {"NT", cublas.OpN, cublas.OpT}} {
		t.Run(tc.name, func(t *testing.T) {
			unbind, err := dev.Bind()
			if err != nil {
				t.Fatal(err)
			}
			defer unbind()
			lda, ldb := m, k
			if tc.ta == cublas.OpT {
				lda = k
			}
			if tc.tb == cublas.OpT {
				ldb = n
			}
			aB, aV := cublastest.HalfMatrix(r, m*k)
			bB, bV := cublastest.HalfMatrix(r, k*n)
			cB, cV := cublastest.HalfMatrix(r, m*n)
			dA, dB, dC := dev.Upload(t, aB), dev.Upload(t, bB), dev.Upload(t, cB)
			const alpha, beta = 1.0, 0.5
			err = h.GemmEx(tc.ta, tc.tb, m, n, k,
				scalar(t, cublas.Compute32F, alpha), dA, cublas.R16F, lda, dB, cublas.R16F, ldb,
				scalar(t, cublas.Compute32F, beta), dC, cublas.R16F, m,
				cublas.Compute32F, cublas.GemmDefault)
			if err != nil {
				t.Fatal(err)
			}
			got := dev.Download(t, dC, len(cB))
			cublastest.CompareHalf(t, got, refGemm(tc.ta, tc.tb, m, n, k, alpha, aV, lda, bV, ldb, beta, cV, m))
		})
	}
	// An invalid call returns a named error rather than crashing.
	err = h.GemmEx(cublas.OpN, cublas.OpN, m, n, k,
		scalar(t, cublas.Compute32F, 1), 0, cublas.R16F, 1, 0, cublas.R16F, k,
		scalar(t, cublas.Compute32F, 0), 0, cublas.R16F, m, cublas.Compute32F, cublas.GemmDefault)
	if s, ok := cublas.StatusOf(err); !ok || s != cublas.StatusInvalidValue {
		t.Errorf("lda < m: got %v, want cublasGemmEx: CUBLAS_STATUS_INVALID_VALUE", err)
	}
}

func TestGPUGemmStridedBatchedEx(t *testing.T) {
	dev, h := gpuSetup(t)
	const m, n, k, batch = 64, 48, 32, 3
	r := rand.New(rand.NewPCG(3, 4))
	aB, aV := cublastest.HalfMatrix(r, m*k*batch)
	bB, bV := cublastest.HalfMatrix(r, k*n*batch)
	cB, cV := cublastest.HalfMatrix(r, m*n*batch)
	dA, dB, dC := dev.Upload(t, aB), dev.Upload(t, bB), dev.Upload(t, cB)
	const alpha, beta = 0.75, -1.0
	err := h.GemmStridedBatchedEx(cublas.OpN, cublas.OpN, m, n, k,
		scalar(t, cublas.Compute32F, alpha), dA, cublas.R16F, m, m*k,
		dB, cublas.R16F, k, k*n,
		scalar(t, cublas.Compute32F, beta), dC, cublas.R16F, m, m*n,
		batch, cublas.Compute32F, cublas.GemmDefault)
	if err != nil {
		t.Fatal(err)
	}
	got := dev.Download(t, dC, len(cB))
	var want []float64
	for i := 0; i < batch; i++ {
		want = append(want, refGemm(cublas.OpN, cublas.OpN, m, n, k, alpha,
			aV[i*m*k:(i+1)*m*k], m, bV[i*k*n:(i+1)*k*n], k, beta, cV[i*m*n:(i+1)*m*n], m)...)
	}
	cublastest.CompareHalf(t, got, want)
}

func TestGPUWorkspace(t *testing.T) {
	dev, h := gpuSetup(t)
	const size = 4 << 20
	ws, err := dev.Alloc(size)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Free(ws)
	if err := h.SetWorkspace(ws, size); err != nil {
		t.Fatal(err)
	}
	if err := h.SetWorkspace(0, 0); err != nil {
		t.Fatal(err)
	}
}
