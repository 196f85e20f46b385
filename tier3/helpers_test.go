package tier3

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/gputest"
	"github.com/kreplay/kreplay/internal/launch"
	"github.com/kreplay/kreplay/internal/traces"
	"github.com/kreplay/kreplay/signatures"
)

// opSig builds a tier-3 signature through the real import path from one
// cpu_op with the given profiler fields (JSON texts) and one kernel.
func opSig(t *testing.T, op, dims, strides, types, concrete string) *signatures.Signature {
	t.Helper()
	trace := `{"traceEvents":[
{"ph":"X","cat":"cpu_op","name":"` + op + `","pid":1,"tid":1,"ts":1,"dur":10,"args":{"External id":5,
 "Input Dims":` + dims + `,"Input Strides":` + strides + `,"Input type":` + types + `,"Concrete Inputs":` + concrete + `}},
{"ph":"X","cat":"kernel","name":"void test_kernel<float>(float*)","pid":0,"tid":7,"ts":2,"dur":3,"args":{"External id":5,"device":0,"stream":7,
 "grid":[128,1,1],"block":[256,1,1],"registers per thread":32,"shared memory":0}}]}`
	set, err := signatures.Import(strings.NewReader(trace), op, signatures.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return set.Signatures[0]
}

// newExact builds sig's kernel with one buffer set and checks that it
// computes the op (not a stand-in). Call inside gpuEnv, and close the
// kernel there.
func newExact(t testing.TB, sig *signatures.Signature, dev Device, s *cuda.Stream, seed uint64) *Kernel {
	t.Helper()
	k, err := New(sig, dev, launch.Options{Sets: 1, Seed: seed}, s)
	if err != nil {
		t.Fatal(err)
	}
	if a := k.Approximate(); a != "" {
		k.Close()
		t.Fatalf("approximate: %s", a)
	}
	return k
}

// launchExact builds sig's kernel (newExact), launches it once and waits
// for it. Call inside gpuEnv, and close the kernel there.
func launchExact(t testing.TB, sig *signatures.Signature, dev Device, s *cuda.Stream, seed uint64) *Kernel {
	t.Helper()
	k := newExact(t, sig, dev, s, seed)
	launchOnce(t, k, s)
	return k
}

// launchOnce launches k on buffer set 0 and waits for it; on an error it
// closes k and fails the test.
func launchOnce(t testing.TB, k *Kernel, s *cuda.Stream) {
	t.Helper()
	if err := k.Launch(s, 0); err != nil {
		k.Close()
		t.Fatal(err)
	}
	if err := s.Synchronize(); err != nil {
		k.Close()
		t.Fatal(err)
	}
}

// gpuEnv runs fn with device 0's context current, a stream, and a
// compiler; it skips (or fails under KREPLAY_REQUIRE_GPU=1) without a GPU.
// Subtests run on other goroutines: call gpuEnv inside each, not around.
func gpuEnv(t testing.TB, fn func(dev Device, s *cuda.Stream)) {
	t.Helper()
	gputest.Require(t, func() error {
		if err := cuda.Init(); err != nil {
			return err
		}
		if n, err := cuda.DeviceCount(); err != nil || n == 0 {
			return fmt.Errorf("no CUDA device (%v)", err)
		}
		return nil
	})
	d, err := cuda.DeviceGet(0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, err := d.RetainPrimaryContext()
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Release()
	major, minor, err := d.ComputeCapability()
	if err != nil {
		t.Fatal(err)
	}
	sms, err := d.SMCount()
	if err != nil {
		t.Fatal(err)
	}
	comp, err := NewCompiler(major, minor)
	if err != nil {
		t.Fatal(err)
	}
	if err := ctx.Do(func() error {
		s, err := cuda.NewStream()
		if err != nil {
			return err
		}
		defer s.Destroy()
		fn(Device{Compiler: comp, SMs: sms}, s)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// download reads a tensor's strided view as float64 values in row-major
// order of its shape (bool and integers as their values).
func download(t *testing.T, x *Tensor, s *cuda.Stream) []float64 {
	t.Helper()
	raw := make([]byte, x.Bytes())
	if err := cuda.CopyDtoH(raw, x.Ptr, s); err != nil {
		t.Fatal(err)
	}
	n := x.Numel()
	out := make([]float64, n)
	idx := make([]int64, len(x.Shape))
	for i := int64(0); i < n; i++ {
		var off int64
		for d := range idx {
			off += idx[d] * x.Strides[d]
		}
		out[i] = elem(raw, off, x.DType)
		for d := len(idx) - 1; d >= 0; d-- {
			idx[d]++
			if idx[d] < x.Shape[d] {
				break
			}
			idx[d] = 0
		}
	}
	return out
}

func elem(raw []byte, i int64, dtype string) float64 {
	switch dtype {
	case "f16":
		return float64(launch.F16ToF32(binary.LittleEndian.Uint16(raw[2*i:])))
	case "bf16":
		return float64(math.Float32frombits(uint32(binary.LittleEndian.Uint16(raw[2*i:])) << 16))
	case "f32":
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:])))
	case "f64":
		return math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:]))
	case "i64":
		return float64(int64(binary.LittleEndian.Uint64(raw[8*i:])))
	case "i32":
		return float64(int32(binary.LittleEndian.Uint32(raw[4*i:])))
	case "bool", "u8":
		return float64(raw[i])
	}
	panic("dtype " + dtype)
}

// tolerance is the relative error allowed for an output dtype.
func tolerance(dtype string) float64 {
	switch dtype {
	case "f16":
		return 2e-3
	case "bf16":
		return 1.6e-2
	case "f32":
		return 1e-5
	}
	return 0
}

// checkClose compares got with want by ||got-want|| / ||want|| within the
// dtype's tolerance; NaN never passes.
func checkClose(t *testing.T, name string, got, want []float64, dtype string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", name, len(got), len(want))
	}
	var num, den float64
	for i := range got {
		if math.IsNaN(got[i]) != math.IsNaN(want[i]) {
			t.Fatalf("%s: element %d = %v, want %v", name, i, got[i], want[i])
		}
		if math.IsNaN(want[i]) {
			continue
		}
		d := got[i] - want[i]
		num += d * d
		den += want[i] * want[i]
	}
	tol := tolerance(dtype)
	if den == 0 {
		den = 1
	}
	if rel := math.Sqrt(num / den); rel > tol || math.IsNaN(rel) {
		t.Errorf("%s: relative error %.3g, tolerance %.3g", name, rel, tol)
	}
}

// tracedSets holds the embedded traces' signature sets, imported once per
// test binary (the generate trace alone is 30 MB of JSON). Tests share
// them and must not modify them.
var tracedSets struct {
	once sync.Once
	sets []*signatures.Set
	err  error
}

// tracedSetList returns the embedded traces' sets, in traces.Names order.
func tracedSetList(tb testing.TB) []*signatures.Set {
	tb.Helper()
	tracedSets.once.Do(func() {
		for _, name := range traces.Names() {
			f, err := traces.Open(name)
			if err != nil {
				tracedSets.err = err
				return
			}
			set, err := signatures.Import(f, name, signatures.Options{})
			f.Close()
			if err != nil {
				tracedSets.err = err
				return
			}
			tracedSets.sets = append(tracedSets.sets, set)
		}
	})
	if tracedSets.err != nil {
		tb.Fatal(tracedSets.err)
	}
	return tracedSets.sets
}

// tracedTier3 returns, in trace and set order, the embedded traces'
// replayable tier-3 signatures that keep accepts.
func tracedTier3(tb testing.TB, keep func(*signatures.Signature) bool) []*signatures.Signature {
	tb.Helper()
	var out []*signatures.Signature
	for _, set := range tracedSetList(tb) {
		for _, s := range set.Signatures {
			if s.Tier == signatures.TierKernel && s.Unreplayable == "" && keep(s) {
				out = append(out, s)
			}
		}
	}
	return out
}
