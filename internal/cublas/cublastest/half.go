package cublastest

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kreplay/kreplay/internal/cublas"
)

// HalfMatrix returns n random fp16 values in [-1, 1) as bytes and as the
// float64 values they represent exactly.
func HalfMatrix(r *rand.Rand, n int) ([]byte, []float64) {
	b := make([]byte, 2*n)
	v := make([]float64, n)
	for i := range v {
		h := cublas.Float32ToHalf(float32(r.Float64()*2 - 1))
		binary.LittleEndian.PutUint16(b[2*i:], h)
		v[i] = float64(cublas.HalfToFloat32(h))
	}
	return b, v
}

// CompareHalf checks the fp16 values got against want, within 1e-2 plus
// 4e-3 of |want|: it reports the first five elements that differ and
// stops the test if any did.
func CompareHalf(t testing.TB, got []byte, want []float64) {
	t.Helper()
	bad := 0
	for i, w := range want {
		g := float64(cublas.HalfToFloat32(binary.LittleEndian.Uint16(got[2*i:])))
		if math.Abs(g-w) > 1e-2+4e-3*math.Abs(w) {
			if bad < 5 {
				t.Errorf("element %d: got %g, want %g", i, g, w)
			}
			bad++
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d elements differ", bad, len(want))
	}
}

// Upload allocates device memory for b, freed when the test ends, and
// copies b there. A failure stops the test.
func (d *Device) Upload(t testing.TB, b []byte) uintptr {
	t.Helper()
	p, err := d.Alloc(len(b))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Free(p) })
	if err := d.CopyHtoD(p, b); err != nil {
		t.Fatal(err)
	}
	return p
}

// Download waits for the context's work, then copies n bytes from device
// memory at p. A failure stops the test.
func (d *Device) Download(t testing.TB, p uintptr, n int) []byte {
	t.Helper()
	if err := d.Synchronize(); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, n)
	if err := d.CopyDtoH(b, p); err != nil {
		t.Fatal(err)
	}
	return b
}
