package replay

import (
	"math"
	"testing"
	"time"

	"github.com/kreplay/kreplay/internal/inject"
	"github.com/kreplay/kreplay/signatures"
)

func TestParseCacheMode(t *testing.T) {
	for _, c := range []CacheMode{CacheDefault, Rotating, Warm, Cold, Auto, Primed, Context} {
		got, err := ParseCacheMode(c.String())
		if err != nil || got != c {
			t.Errorf("ParseCacheMode(%q) = %v, %v", c, got, err)
		}
	}
	if _, err := ParseCacheMode("lukewarm"); err == nil {
		t.Error("no error for an unknown mode")
	}
	if got, err := ParseCacheMode(""); err != nil || got != CacheDefault {
		t.Errorf(`ParseCacheMode("") = %v, %v, want default`, got, err)
	}
}

// The zero CacheMode stands for DefaultCacheMode, and every named mode,
// Rotating among them, for itself.
func TestCacheModeResolve(t *testing.T) {
	for _, tc := range []struct{ c, want CacheMode }{
		{CacheDefault, DefaultCacheMode},
		{Rotating, Rotating},
		{Warm, Warm},
		{Cold, Cold},
		{Auto, Auto},
		{Primed, Primed},
		{Context, Context},
	} {
		if got := tc.c.Resolve(); got != tc.want {
			t.Errorf("%v.Resolve() = %v, want %v", tc.c, got, tc.want)
		}
	}
	if DefaultCacheMode == CacheDefault {
		t.Error("DefaultCacheMode is the zero value: it must name a mode")
	}
	// A captured GEMV with its context: the default runs it as
	// DefaultCacheMode does, Rotating rotates it.
	sig := &signatures.Signature{Op: "aten::mm", Tier: signatures.TierLibrary, Class: signatures.ClassGEMM,
		GEMM:   &signatures.GEMM{M: 2, N: 8192, K: 2048, Batch: 1, AType: "f16", BType: "f16", OutType: "f16"},
		Binary: &signatures.Binary{Context: []*inject.Producer{{Context: true}}}}
	if got, want := CacheDefault.For(sig), DefaultCacheMode.For(sig); got != want {
		t.Errorf("CacheDefault.For = %v, want %v", got, want)
	}
	if got := Rotating.For(sig); got != Rotating {
		t.Errorf("Rotating.For = %v, want rotating", got)
	}
}

func TestAutoCacheMode(t *testing.T) {
	for _, tc := range []struct {
		op    string
		tier  signatures.Tier
		class signatures.Class
		want  CacheMode
	}{
		{"aten::mm", signatures.TierLibrary, signatures.ClassGEMM, Rotating},
		{"aten::addmm", signatures.TierLibrary, signatures.ClassGEMM, Rotating},
		{"aten::bmm", signatures.TierLibrary, signatures.ClassGEMM, Warm},
		{"aten::baddbmm", signatures.TierLibrary, signatures.ClassGEMM, Warm},
		{"aten::mm", signatures.TierMemory, signatures.ClassMemset, Warm}, // cuBLAS's memset inside mm
		{"aten::copy_", signatures.TierMemory, signatures.ClassMemcpy, Warm},
		{"aten::add", signatures.TierKernel, signatures.ClassElementwise, Primed},
		{"aten::mean", signatures.TierKernel, signatures.ClassReduce, Primed},
		{"aten::native_layer_norm", signatures.TierKernel, signatures.ClassNorm, Cold},
		{"aten::native_layer_norm", signatures.TierKernel, signatures.ClassElementwise, Primed}, // not a norm signature
	} {
		sig := &signatures.Signature{Op: tc.op, Tier: tc.tier, Class: tc.class}
		if got := Auto.For(sig); got != tc.want {
			t.Errorf("Auto.For(%s %s) = %v, want %v", tc.op, tc.class, got, tc.want)
		}
		if got := Cold.For(sig); got != Cold {
			t.Errorf("Cold.For = %v", got)
		}
		// Without a captured binary, context is auto.
		if got := Context.For(sig); got != tc.want {
			t.Errorf("Context.For(%s %s) = %v, want %v", tc.op, tc.class, got, tc.want)
		}
		// With one and the launches recorded before it, it runs primed,
		// a GEMM too.
		sig.Binary = &signatures.Binary{Context: []*inject.Producer{{Context: true}}}
		if got := Context.For(sig); got != Primed {
			t.Errorf("Context.For(%s %s with its context) = %v, want primed", tc.op, tc.class, got)
		}
	}
}

// A captured GEMM runs after its context in the Context mode when it is
// memory-bound (a decode GEMV of few rows), and rotates as in Auto when it
// is compute-bound (a prefill GEMM of thousands of tokens).
func TestContextComputeBound(t *testing.T) {
	ctx := &signatures.Binary{Context: []*inject.Producer{{Context: true}}}
	for _, tc := range []struct {
		name  string
		g     signatures.GEMM
		bound bool
		want  CacheMode
	}{
		{"decode GEMV 2x2048x8192", signatures.GEMM{M: 2, N: 8192, K: 2048, Batch: 1, AType: "f16", BType: "f16", OutType: "f16"}, false, Primed},
		{"decode batch 64", signatures.GEMM{M: 64, N: 4864, K: 896, Batch: 1, AType: "bf16", BType: "bf16", OutType: "bf16"}, false, Primed},
		{"prefill 2048x2048x8192", signatures.GEMM{M: 2048, N: 8192, K: 2048, Batch: 1, AType: "f16", BType: "f16", OutType: "f16"}, true, Rotating},
		{"unknown dtype", signatures.GEMM{M: 2048, N: 8192, K: 2048, Batch: 1, AType: "?", BType: "f16", OutType: "f16"}, false, Primed},
	} {
		g := tc.g
		sig := &signatures.Signature{Op: "aten::mm", Tier: signatures.TierLibrary, Class: signatures.ClassGEMM, GEMM: &g, Binary: ctx}
		if got := ComputeBound(sig); got != tc.bound {
			t.Errorf("%s: ComputeBound = %v, want %v", tc.name, got, tc.bound)
		}
		if got := Context.For(sig); got != tc.want {
			t.Errorf("%s: Context.For = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestClampBatch(t *testing.T) {
	for _, tc := range []struct {
		target, per time.Duration
		max, want   int
	}{
		{time.Millisecond, 10 * time.Microsecond, 10000, 100},
		{time.Millisecond, 3 * time.Millisecond, 10000, 1},
		{time.Millisecond, time.Nanosecond, 500, 500},
		{time.Millisecond, 0, 500, 500},
	} {
		if got := clampBatch(tc.target, tc.per, tc.max); got != tc.want {
			t.Errorf("clampBatch(%v, %v, %d) = %d, want %d", tc.target, tc.per, tc.max, got, tc.want)
		}
	}
}

func TestSummarizeCI(t *testing.T) {
	// 50 samples around 100 with ±1 noise: the median's interval is tight.
	var v []float64
	for i := 0; i < 50; i++ {
		v = append(v, 100+float64(i%5)-2)
	}
	s := summarize(v, 0.95)
	if s.Center != 100 || relCI(s) > 0.011 {
		t.Errorf("center %v rel CI %v", s.Center, relCI(s))
	}
	// Too few samples for a 95% interval: infinite, never "converged".
	if r := relCI(summarize([]float64{1, 2, 3}, 0.95)); !math.IsInf(r, 1) && r < 0.5 {
		t.Errorf("3 samples gave rel CI %v", r)
	}
}

// A previous run's measured entries are reused; failed ones are not.
func TestReuse(t *testing.T) {
	prev := map[string]Entry{
		"a": {ID: "a", Result: &Result{Stats: Stats{MedianNS: 42}}},
		"b": {ID: "b", Err: "prepare: boom"},
	}
	o := SuiteOptions{Previous: prev}
	a, b, c := Entry{ID: "a"}, Entry{ID: "b"}, Entry{ID: "a", PartOf: "x"}
	if !o.reuse(&a) || a.Result.MedianNS != 42 {
		t.Errorf("a not reused: %+v", a)
	}
	if o.reuse(&b) || b.Result != nil {
		t.Errorf("failed b reused: %+v", b)
	}
	if o.reuse(&c) {
		t.Errorf("part-of entry reused")
	}
}

// A previous result without an energy is reused where the run measures
// times only, and measured again where it measures the signature's energy.
func TestReuseEnergy(t *testing.T) {
	prev := map[string]Entry{
		"t": {ID: "t", Result: &Result{Stats: Stats{MedianNS: 42}}},
		"e": {ID: "e", Result: &Result{Stats: Stats{MedianNS: 7}, Energy: &Energy{JoulesPerOp: 1e-3}}},
	}
	for _, tc := range []struct {
		id     string
		energy bool
		want   bool
	}{
		{"t", false, true},
		{"t", true, false},
		{"e", false, true},
		{"e", true, true},
	} {
		o := SuiteOptions{Previous: prev, Measure: Options{Energy: tc.energy}}
		e := Entry{ID: tc.id}
		if got := o.reuse(&e); got != tc.want || (e.Result != nil) != tc.want {
			t.Errorf("%s with energy %v: reused %v (result %v), want %v", tc.id, tc.energy, got, e.Result != nil, tc.want)
		}
	}
}

// A collective's wait bound is an option: DefaultCollectiveTimeout when
// unset, the caller's otherwise.
func TestCollectiveTimeoutDefault(t *testing.T) {
	for _, tc := range []struct{ given, want time.Duration }{
		{0, DefaultCollectiveTimeout},
		{-time.Second, DefaultCollectiveTimeout},
		{5 * time.Second, 5 * time.Second},
	} {
		o := Options{CollectiveTimeout: tc.given}
		o.defaults()
		if o.CollectiveTimeout != tc.want {
			t.Errorf("CollectiveTimeout %v: after defaults %v, want %v", tc.given, o.CollectiveTimeout, tc.want)
		}
	}
}
