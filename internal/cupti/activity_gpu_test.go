package cupti_test

import (
	"encoding/binary"
	"testing"
	"unsafe"

	"github.com/kreplay/kreplay/internal/cublas"
	"github.com/kreplay/kreplay/internal/cublas/cublastest"
	"github.com/kreplay/kreplay/internal/cupti"
	"github.com/kreplay/kreplay/internal/kname"
)

// TestGPURecordsGemmAndCopies records a cuBLAS GEMM, host<->device
// copies and a memset, and checks the kernel name, timestamps, launch
// shape and byte counts CUPTI reports.
func TestGPURecordsGemmAndCopies(t *testing.T) {
	cublastest.Require(t, cupti.Load, cublas.Load)
	kinds := []cupti.Kind{cupti.KindConcurrentKernel, cupti.KindMemcpy, cupti.KindMemset}
	if err := cupti.Enable(kinds...); err != nil {
		t.Fatalf("Enable: %v", err)
	}
	defer cupti.Disable(kinds...)
	v, err := cupti.Version()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("CUPTI API version %d from %s", v, cupti.Path())
	cupti.Drain()

	dev, err := cublastest.Open()
	if err != nil {
		t.Fatalf("CUDA driver: %v", err)
	}
	defer dev.Close()
	h, err := cublas.Create()
	if err != nil {
		t.Fatal(err)
	}
	defer h.Destroy()

	const m, n, k = 64, 48, 32
	aBytes, bBytes, cBytes := 2*m*k, 2*k*n, 2*m*n
	host := func(elems int) []byte {
		b := make([]byte, 2*elems)
		for i := 0; i < elems; i++ {
			binary.LittleEndian.PutUint16(b[2*i:], cublas.Float32ToHalf(float32(i%7)/8))
		}
		return b
	}
	alloc := func(size int) uintptr {
		p, err := dev.Alloc(size)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { dev.Free(p) })
		return p
	}
	dA, dB, dC := alloc(aBytes), alloc(bBytes), alloc(cBytes)
	if err := dev.CopyHtoD(dA, host(m*k)); err != nil {
		t.Fatal(err)
	}
	if err := dev.CopyHtoD(dB, host(k*n)); err != nil {
		t.Fatal(err)
	}
	if err := dev.Memset(dC, 0, cBytes); err != nil {
		t.Fatal(err)
	}
	one, zero := float32(1), float32(0)
	if err := h.GemmEx(cublas.OpN, cublas.OpN, m, n, k, unsafe.Pointer(&one), dA, cublas.R16F, m,
		dB, cublas.R16F, k, unsafe.Pointer(&zero), dC, cublas.R16F, m, cublas.Compute32F, cublas.GemmDefault); err != nil {
		t.Fatal(err)
	}
	out := make([]byte, cBytes)
	if err := dev.CopyDtoH(out, dC); err != nil {
		t.Fatal(err)
	}
	if err := dev.Synchronize(); err != nil {
		t.Fatal(err)
	}
	if err := cupti.Flush(); err != nil {
		t.Fatal(err)
	}
	recs := cupti.Drain()
	t.Logf("%d records, stats %+v", len(recs), cupti.GetStats())

	var kernels int
	htod := map[uint64]bool{}
	var dtoh, memset bool
	for _, r := range recs {
		switch r.Kind {
		case cupti.KindConcurrentKernel, cupti.KindKernel:
			kernels++
			t.Logf("kernel %s (base %q) grid %v block %v regs %d smem %d+%d, %d ns",
				r.Name, kname.BaseName(r.Name), r.Grid, r.Block, r.RegistersPerThread,
				r.StaticSharedMemory, r.DynamicSharedMemory, r.Duration())
			if r.Name == "" || kname.BaseName(r.Name) == "" {
				t.Errorf("kernel record without a name: %+v", r)
			}
			if r.End <= r.Start || r.Start == 0 {
				t.Errorf("kernel timestamps %d..%d", r.Start, r.End)
			}
			if r.Grid[0] < 1 || r.Block[0] < 1 || r.RegistersPerThread == 0 {
				t.Errorf("kernel launch shape %+v", r)
			}
			if !kname.SameKernel(r.Name, r.Name) {
				t.Errorf("SameKernel(%q, itself) = false", r.Name)
			}
		case cupti.KindMemcpy:
			t.Logf("memcpy %v %v->%v %d bytes, %d ns", r.CopyKind, r.SrcKind, r.DstKind, r.Bytes, r.Duration())
			if r.CopyKind == cupti.MemcpyHtoD {
				htod[r.Bytes] = true
			}
			if r.CopyKind == cupti.MemcpyDtoH && r.Bytes == uint64(cBytes) {
				dtoh = true
			}
			if r.End < r.Start {
				t.Errorf("memcpy timestamps %d..%d", r.Start, r.End)
			}
		case cupti.KindMemset:
			t.Logf("memset %d bytes value %#x", r.Bytes, r.MemsetValue)
			if r.Bytes == uint64(cBytes) {
				memset = true
			}
		}
	}
	if kernels == 0 {
		t.Error("no kernel record for the GEMM")
	}
	if !htod[uint64(aBytes)] || !htod[uint64(bBytes)] {
		t.Errorf("host-to-device copies of %d and %d bytes not both recorded: %v", aBytes, bBytes, htod)
	}
	if !dtoh {
		t.Errorf("device-to-host copy of %d bytes not recorded", cBytes)
	}
	if !memset {
		t.Errorf("memset of %d bytes not recorded", cBytes)
	}
}
