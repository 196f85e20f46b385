package replay

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/captured"
	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/inject"
	"github.com/kreplay/kreplay/signatures"
)

// indexKernel is the kernel of the tests: PyTorch's bool-mask index,
// which asserted on its first launch in a Pythia decode's replay.
const indexKernel = "_ZN2at6native24index_elementwise_kernelILi128ELi4EZNS0_22index_kernel_implINS0_10OpaqueTypeILi1EEEEEvRNS_18TensorIteratorBaseE"

// kernelSig is a signature that replays by a captured binary: its own
// kernel own, producers prods and context launches ctx ("" for none).
func kernelSig(id, own string, prods, ctx []string) *signatures.Signature {
	launch := func(name string) *inject.Launch {
		if name == "" {
			return nil
		}
		return &inject.Launch{Name: name}
	}
	b := &signatures.Binary{Launch: launch(own)}
	for _, p := range prods {
		b.Producers = append(b.Producers, &inject.Producer{Launch: launch(p)})
	}
	for _, c := range ctx {
		b.Context = append(b.Context, &inject.Producer{Context: true, Launch: launch(c)})
	}
	return &signatures.Signature{ID: id, Label: "label " + id, Tier: signatures.TierKernel, Count: 1, Binary: b}
}

// lostKernelSet is a decode's signatures around indexKernel: z, i68 and
// i66 launch it as their own kernel, f and p as a producer, w in its
// context, both (b) as its kernel, producer and context alike; part is a
// part of z; plain has no binary; g launches another kernel, and nilp
// has nil producers and launches.
func lostKernelSet() []*signatures.Signature {
	part := kernelSig("part", indexKernel, nil, nil)
	part.PartOf = "z"
	return []*signatures.Signature{
		kernelSig("z", indexKernel, nil, nil),
		kernelSig("i68", indexKernel, nil, nil),
		kernelSig("f", "fill", []string{"copy", indexKernel}, nil),
		part,
		{ID: "plain", Label: "index", Kernel: indexKernel, Tier: signatures.TierKernel, Count: 1},
		kernelSig("g", "gemv", []string{"fill"}, []string{"copy"}),
		kernelSig("w", "where", nil, []string{"copy", indexKernel}),
		kernelSig("b", indexKernel, []string{indexKernel}, []string{indexKernel}),
		{ID: "nilp", Binary: &signatures.Binary{Producers: []*inject.Producer{nil, {}}, Context: []*inject.Producer{nil}}},
		kernelSig("i66", indexKernel, nil, nil),
		kernelSig("i68", indexKernel, nil, nil), // listed twice
	}
}

// sameKernel finds the signatures that launch the kernel, own, producer
// or context, leaving out the one that faulted, parts, signatures
// without a binary and those with a result to lose; sorted, each once.
func TestSameKernel(t *testing.T) {
	tests := []struct {
		name     string
		kernel   string
		id       string // the signature that faulted
		measured []string
		resolved map[string]Entry
		previous map[string]Entry
		want     string
	}{
		{name: "own, producer and context", kernel: indexKernel, id: "i68", want: "[b f i66 w z]"},
		{name: "a producer faulted", kernel: indexKernel, id: "f", want: "[b i66 i68 w z]"},
		{name: "another kernel", kernel: "copy", id: "w", want: "[f g]"},
		{name: "own kernel only", kernel: "gemv", id: "x", want: "[g]"},
		{name: "unknown kernel", kernel: "", id: "i68", want: "[]"},
		{name: "no signature launches it", kernel: "nothing", id: "i68", want: "[]"},
		{name: "with results to keep", kernel: indexKernel, id: "i68", measured: []string{"z"},
			resolved: map[string]Entry{"i66": {ID: "i66", Result: &Result{}, Interpolated: "interpolated"}, "w": {ID: "w", Err: "failed"}},
			previous: map[string]Entry{"b": {ID: "b", Result: &Result{}}, "f": {ID: "f", Result: &Result{}, Interpolated: "interpolated"}},
			want:     "[f w]"},
	}
	for _, tt := range tests {
		sc := newLostScope(lostKernelSet(), tt.resolved)
		for _, id := range tt.measured {
			sc.record(&signatures.Signature{ID: id}, nil)
		}
		sc.record(&signatures.Signature{ID: "w"}, errors.New("failed")) // a failure is no result
		got := sc.sameKernel(tt.kernel, tt.id, SuiteOptions{Previous: tt.previous})
		if fmt.Sprint(got) != tt.want {
			t.Errorf("%s: sameKernel(%.20s, %s) = %v, want %s", tt.name, tt.kernel, tt.id, got, tt.want)
		}
	}
	var none *lostScope
	if got := none.sameKernel(indexKernel, "i68", SuiteOptions{}); got != nil {
		t.Errorf("no scope (Group.RunSet): %v", got)
	}
}

// A signature whose producer's first launch asserted loses the context
// with the others that launch that kernel and have no result: the loss's
// Skip names them all, sorted, once (with Skip's), and so does each
// entry left unmeasured; Error says how many. A fault while measuring
// names no kernel and leaves out only its signature.
func TestRunSetLostKernel(t *testing.T) {
	assert := &cuda.Error{Call: "cuStreamSynchronize", Code: cuda.CodeAssert, Name: "CUDA_ERROR_ASSERT", Msg: "device-side assert triggered"}
	firstLaunch := &SignatureError{ID: "f", Label: "label f", Stage: "prepare",
		Err: fmt.Errorf("its producer %s: %w", indexKernel, &captured.FirstLaunchError{Kernel: indexKernel, Err: assert})}
	measuring := &SignatureError{ID: "f", Label: "label f", Stage: "measure", Err: assert}
	const faulted = "the CUDA context was lost when signature f (label f) faulted: "
	tests := []struct {
		name, lost, skip, others, kernel string
	}{
		{"first launch", faulted + firstLaunch.Stage + ": " + firstLaunch.Err.Error() +
			"; 3 other signatures launch the same kernel and are left out with it", "[b f i66 w x]", "[b i66 w]", indexKernel},
		{"measuring", faulted + "measure: " + assert.Error(), "[f x]", "[]", ""},
	}
	for i, err := range []error{firstLaunch, measuring} {
		tt := tests[i]
		d := &Device{}
		var ran []string
		o := SuiteOptions{
			// z is reused, x left out (it launches the kernel too), i68
			// measured before f faulted.
			Previous: map[string]Entry{"z": {ID: "z", Result: &Result{Stats: Stats{MedianNS: 42}}}},
			Skip:     map[string]string{"x": "left out"},
		}
		// z, i68, f, part, plain, g, w, b, nilp, x, i66.
		set := &signatures.Set{Signatures: append(lostKernelSet()[:9], kernelSig("x", indexKernel, nil, nil), kernelSig("i66", indexKernel, nil, nil))}
		entries := d.runSet(set, o, fakeMeasure(map[string]error{"f": err}, &ran))
		if fmt.Sprint(ran) != "[i68 f]" {
			t.Errorf("%s: measured %v, want [i68 f]", tt.name, ran)
		}
		var le *ContextLostError
		if !errors.As(d.Lost(), &le) {
			t.Fatalf("%s: Lost() = %v", tt.name, d.Lost())
		}
		if le.Error() != tt.lost || fmt.Sprint(le.Skip) != tt.skip || fmt.Sprint(le.Others) != tt.others || le.Kernel != tt.kernel {
			t.Errorf("%s: lost %q\nskip %v others %v kernel %.20q; want %q\nskip %s others %s kernel %.20q",
				tt.name, le.Error(), le.Skip, le.Others, le.Kernel, tt.lost, tt.skip, tt.others, tt.kernel)
		}
		want := "not measured: the CUDA context was lost when signature f (label f) faulted; run again with -resume -skip " +
			strings.Join(le.Skip, ",")
		for _, e := range entries {
			if e.Result == nil && e.ID != "f" && e.ID != "x" && e.PartOf == "" && e.Err != want {
				t.Errorf("%s: entry %s: %q, want %q", tt.name, e.ID, e.Err, want)
			}
		}
	}
}
