package cublaslt

import (
	"errors"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/internal/cublas"
	"github.com/kreplay/kreplay/internal/dl/dltest"
)

func TestLoadFailureText(t *testing.T) {
	err := dltest.LoadFailure(t, Load, ErrNotFound, func() string { return "libcublasLt is installed (" + Path() + ")" })
	if !strings.HasPrefix(err.Error(), "cublaslt: library not found (tried libcublasLt.so.13, libcublasLt.so.12, libcublasLt.so.11, libcublasLt.so)") {
		t.Fatalf("Load: %v", err)
	}
	if _, err := Create(); !errors.Is(err, ErrNotFound) {
		t.Errorf("Create: %v", err)
	}
	if _, err := NewMatmulDesc(cublas.Compute32F, cublas.R32F); !errors.Is(err, ErrNotFound) {
		t.Errorf("NewMatmulDesc: %v", err)
	}
	if _, err := NewMatrixLayout(cublas.R16F, 1, 1, 1); !errors.Is(err, ErrNotFound) {
		t.Errorf("NewMatrixLayout: %v", err)
	}
	if _, err := NewMatmulPreference(); !errors.Is(err, ErrNotFound) {
		t.Errorf("NewMatmulPreference: %v", err)
	}
	if _, err := GetVersion(); !errors.Is(err, ErrNotFound) {
		t.Errorf("GetVersion: %v", err)
	}
}

func TestNilObjects(t *testing.T) {
	var (
		h    *Handle
		d    *MatmulDesc
		l    *MatrixLayout
		p    *MatmulPreference
		one  = []byte{0, 0, 0x80, 0x3f}
		errs []error
	)
	for _, err := range []error{h.Destroy(), d.Destroy(), l.Destroy(), p.Destroy()} {
		if err != nil {
			t.Errorf("Destroy on nil: %v", err)
		}
	}
	errs = append(errs,
		d.SetTransA(cublas.OpT), d.SetEpilogue(EpilogueBias), d.SetBiasPointer(0),
		d.SetAScalePointer(0), d.SetBScalePointer(0), d.SetDScalePointer(0), d.SetFastAccum(true),
		d.SetScaleModes(ScaleScalar32F, ScaleScalar32F),
		l.SetBatchCount(2), l.SetStridedBatchOffset(10), p.SetMaxWorkspaceBytes(1<<20))
	_, err := h.AlgoGetHeuristic(d, l, l, l, l, p, 1)
	errs = append(errs, err)
	errs = append(errs, h.Matmul(d, bytesPtr(one), 0, l, 0, l, bytesPtr(one), 0, l, 0, l, nil, 0, 0, nil))
	for i, err := range errs {
		if !errors.Is(err, ErrNil) {
			t.Errorf("call %d: %v, want ErrNil", i, err)
		}
	}
	if !strings.HasPrefix(errs[0].Error(), "cublasLtMatmulDescSetAttribute: ") {
		t.Errorf("%q does not name the call", errs[0])
	}
}

// TestDeclaredLayout pins the C declarations to the sizes and offsets
// read from cublasLt.h (CUDA 12.6 and 13.0).
func TestDeclaredLayout(t *testing.T) {
	want := map[string]int64{
		"sizeof_algo": 64, "sizeof_result": 96, "offsetof_workspace": 64,
		"offsetof_state": 72, "offsetof_wavesCount": 76, "offsetof_reserved": 80,
	}
	got := structLayout()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %d, want %d", k, got[k], v)
		}
	}
}

func TestEncoders(t *testing.T) {
	if b := i32(-1); len(b) != 4 || b[0] != 0xff {
		t.Errorf("i32(-1) = %x", b)
	}
	if b := u64(1 << 40); len(b) != 8 {
		t.Errorf("u64 = %x", b)
	}
	if b := ptr(0x1234); len(b) != 8 || b[0] != 0x34 {
		t.Errorf("ptr = %x", b)
	}
	if bytesPtr(nil) != nil {
		t.Error("bytesPtr(nil) != nil")
	}
}

// Loading itself is package dl's; this checks what the package gives it.
func TestSymbols(t *testing.T) { dltest.CheckLibrary(t, &lib, "cublasLtGetVersion") }
