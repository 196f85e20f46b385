package tier3

import (
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/cuda/cudatest"
	"github.com/kreplay/kreplay/internal/gputest"
	"github.com/kreplay/kreplay/internal/launch"
	"github.com/kreplay/kreplay/internal/nvrtc"
	"github.com/kreplay/kreplay/internal/traces"
	"github.com/kreplay/kreplay/signatures"
)

// opSig builds a tier-3 signature through the real import path from one
// cpu_op with the given profiler fields (JSON texts) and one kernel.
func opSig(t testing.TB, op, dims, strides, types, concrete string) *signatures.Signature {
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
	d, ctx := cudatest.PrimaryContext(t)
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
	return viewValues(raw, x)
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

// parsedOK checks a parser's result against a case's bad flag: a bad case
// must be refused and a good one accepted. It reports whether the caller
// goes on to check the accepted s.
func parsedOK[S any](t *testing.T, s S, err error, bad bool) bool {
	t.Helper()
	if bad {
		if err == nil {
			t.Fatalf("accepted: %+v", s)
		}
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	return true
}

// stridesOr returns strides, or shape's contiguous strides where strides
// is nil.
func stridesOr(shape, strides []int64) []int64 {
	if strides == nil {
		return ContiguousStrides(shape)
	}
	return strides
}

// nvrtcArch returns the architecture the NVRTC compile tests build for:
// sm_90 where NVRTC supports it, else its newest. It skips the test
// without NVRTC.
func nvrtcArch(t *testing.T) int {
	t.Helper()
	gputest.Require(t, nvrtc.Init)
	archs, err := nvrtc.SupportedArchs()
	if err != nil {
		gputest.Skipf(t, "NVRTC architectures: %v", err)
	}
	arch := slices.Max(archs)
	if slices.Contains(archs, 90) {
		arch = 90
	}
	return arch
}

// checkNoStackFrame compiles the source file (code) with NVRTC for arch
// under each set of defines and checks that kernel fn keeps no stack
// frame.
func checkNoStackFrame(t *testing.T, arch int, file, code, fn string, defines []map[string]string) {
	t.Helper()
	for _, d := range defines {
		src := ewSources(file, code, d)
		res, err := nvrtc.Compile(src.Code, src.Name, append(src.options(arch), "--ptxas-options=-v"))
		if err != nil {
			t.Errorf("%v: %v", d, err)
			continue
		}
		in := false
		for _, l := range strings.Split(res.Log, "\n") {
			if strings.Contains(l, "Function properties for "+fn) {
				in = true
			} else if in && strings.Contains(l, "stack frame") {
				if !strings.Contains(l, " 0 bytes stack frame") {
					t.Errorf("%v: %s", d, strings.TrimSpace(l))
				}
				in = false
			}
		}
	}
}

// runGPUCases runs each case as a GPU subtest named after it: it builds
// the case's signature, parses it with parse, launches its exact kernel
// once (launchExact, seed base+step*i) and hands the case, the parsed
// spec, the kernel's instance and the stream to check.
func runGPUCases[S any](t *testing.T, cases []rdCase, parse func(*signatures.Signature) (S, error), base, step uint64,
	check func(t *testing.T, c rdCase, spec S, inst *Instance, s *cuda.Stream)) {
	sub := gputest.NewSubtests(t)
	for i, c := range cases {
		sub.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			gpuEnv(t, func(dev Device, s *cuda.Stream) {
				sig := rdSig(t, c.op, c.ins...)
				spec, err := parse(sig)
				if err != nil {
					t.Fatal(err)
				}
				k := launchExact(t, sig, dev, s, base+step*uint64(i))
				defer k.Close()
				check(t, c, spec, k.Instance(0), s)
			})
		})
	}
}

// launchFaithful runs sig's kernel on the GPU as the faithful replay
// tests do (inside gpuEnv): it parses sig with parse, builds the kernel
// with one buffer set and seed, hands the instance's strategy to
// strategy, launches it once and hands the parsed spec, the instance and
// the stream to check.
func launchFaithful[S any](t *testing.T, sig *signatures.Signature, seed uint64, parse func(*signatures.Signature) (S, error),
	strategy func(t *testing.T, got string), check func(t *testing.T, spec S, inst *Instance, s *cuda.Stream)) {
	gpuEnv(t, func(dev Device, s *cuda.Stream) {
		spec, err := parse(sig)
		if err != nil {
			t.Fatal(err)
		}
		k, err := New(sig, dev, launch.Options{Sets: 1, Seed: seed}, s)
		if err != nil {
			t.Fatal(err)
		}
		defer k.Close()
		inst := k.Instance(0)
		strategy(t, inst.Strategy)
		if err := k.Launch(s, 0); err != nil {
			t.Fatal(err)
		}
		if err := s.Synchronize(); err != nil {
			t.Fatal(err)
		}
		check(t, spec, inst, s)
	})
}

// eventMillis calls run warm times, then iters times between two CUDA
// events recorded on s, and returns the milliseconds between the events.
func eventMillis(tb testing.TB, s *cuda.Stream, warm, iters int, run func() error) float32 {
	tb.Helper()
	for i := 0; i < warm; i++ {
		if err := run(); err != nil {
			tb.Fatal(err)
		}
	}
	start, err := cuda.NewEvent(true)
	if err != nil {
		tb.Fatal(err)
	}
	defer start.Destroy()
	end, err := cuda.NewEvent(true)
	if err != nil {
		tb.Fatal(err)
	}
	defer end.Destroy()
	if err := start.Record(s); err != nil {
		tb.Fatal(err)
	}
	for i := 0; i < iters; i++ {
		if err := run(); err != nil {
			tb.Fatal(err)
		}
	}
	if err := end.Record(s); err != nil {
		tb.Fatal(err)
	}
	if err := end.Synchronize(); err != nil {
		tb.Fatal(err)
	}
	ms, err := cuda.ElapsedMillis(start, end)
	if err != nil {
		tb.Fatal(err)
	}
	return ms
}

// runParseCase runs one parser case as a subtest: it parses op's
// signature over ins with parse, checks that a bad case is refused
// (parsedOK) and hands an accepted spec to check.
func runParseCase[S any](t *testing.T, name, op string, ins []rdIn, bad bool, parse func(*signatures.Signature) (S, error),
	check func(t *testing.T, s S)) {
	t.Run(name, func(t *testing.T) {
		s, err := parse(rdSig(t, op, ins...))
		if parsedOK(t, s, err, bad) {
			check(t, s)
		}
	})
}
