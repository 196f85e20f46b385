package launch

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/cuda/cudatest"
)

// onFillBuffer runs f in device 0's primary context on a new stream and
// an allocation of n bytes, once the fill kernel compiles, and fails the
// test on its error. It skips the test without a GPU (cudatest).
func onFillBuffer(t *testing.T, n int, f func(p cuda.DevicePtr, s *cuda.Stream) error) {
	t.Helper()
	_, ctx := cudatest.PrimaryContext(t)
	err := ctx.Do(func() error {
		s, err := cuda.NewStream()
		if err != nil {
			return err
		}
		defer s.Destroy()
		p, err := cuda.MemAlloc(n)
		if err != nil {
			return err
		}
		defer p.Free()
		if _, err := fillFunction(); err != nil {
			t.Fatalf("NVRTC fill kernel: %v", err)
		}
		return f(p, s)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// FillRandom on the GPU gives values in [-1, 1), mean near 0, never NaN,
// and no repetition between distant parts of the buffer.
func TestGPUFillRandom(t *testing.T) {
	const n = 40 << 20 // bytes: 20 M halves
	onFillBuffer(t, n, func(p cuda.DevicePtr, s *cuda.Stream) error {
		if err := FillRandom(p, n, "f16", 42, s); err != nil {
			return err
		}
		b := make([]byte, n)
		if err := cuda.CopyDtoH(b, p, s); err != nil {
			return err
		}
		var sum float64
		for i := 0; i < n; i += 2 {
			v := F16ToF32(binary.LittleEndian.Uint16(b[i:]))
			if v < -1 || v > 1 || math.IsNaN(float64(v)) {
				t.Fatalf("element %d = %v", i/2, v)
			}
			sum += float64(v)
		}
		if mean := sum / (n / 2); math.Abs(mean) > 0.01 {
			t.Errorf("mean %v, want about 0", mean)
		}
		same := 0
		for i := 0; i < 1<<20; i++ {
			if b[i] == b[i+patternBytes] {
				same++
			}
		}
		if same > 1<<15 {
			t.Errorf("%d of 1 MiB bytes repeat 8 MiB later", same)
		}
		return nil
	})
}

// FillRandom's FP8 kinds give finite codes only, and most of them.
func TestGPUFillRandomFP8(t *testing.T) {
	const n = 1 << 20
	onFillBuffer(t, n, func(p cuda.DevicePtr, s *cuda.Stream) error {
		for _, dt := range []string{"f8e4m3", "f8e5m2"} {
			if err := FillRandom(p, n, dt, 7, s); err != nil {
				return err
			}
			b := make([]byte, n)
			if err := cuda.CopyDtoH(b, p, s); err != nil {
				return err
			}
			seen := map[byte]bool{}
			for i, c := range b {
				if v := float64(FP8ToF32(dt, c)); math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("%s element %d: code %#02x is not finite", dt, i, c)
				}
				seen[c] = true
			}
			if len(seen) < 240 {
				t.Errorf("%s: %d distinct codes", dt, len(seen))
			}
		}
		return nil
	})
}
