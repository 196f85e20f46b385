package replay

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/signatures"
)

// fakeMeasure measures signatures without a GPU: those in fail get that
// error (as runOne sets it), the others a result; it records which ran.
func fakeMeasure(fail map[string]error, ran *[]string) measureFunc {
	return func(s *signatures.Signature, o SuiteOptions, e *Entry) error {
		*ran = append(*ran, s.ID)
		if err := fail[s.ID]; err != nil {
			e.Err = errText(err)
			return err
		}
		e.Result = &Result{Stats: Stats{MedianNS: 1000}}
		return nil
	}
}

// suiteSet is a set of seven signatures: a part of c, a signature left
// out by Skip (x) and one with a previous result (d) among them.
func suiteSet() *signatures.Set {
	sig := func(id, partOf string) *signatures.Signature {
		return &signatures.Signature{ID: id, Label: "label " + id, Tier: signatures.TierKernel, PartOf: partOf, Count: 1}
	}
	return &signatures.Set{Signatures: []*signatures.Signature{
		sig("a", ""), sig("b", ""), sig("p", "c"), sig("c", ""), sig("d", ""), sig("x", ""), sig("e", ""),
	}}
}

// After a replay returns a sticky error, RunSet measures nothing more on
// the device: each signature it would have measured gets an error naming
// the one that faulted and how to go on, while parts, skipped and reused
// signatures keep their entries; every signature still gets exactly one
// entry, Done call and progress line, in order. A later RunSet on the
// device measures nothing either.
func TestRunSetContextLost(t *testing.T) {
	fault := fmt.Errorf("graph launch: %w", &cuda.Error{Call: "cuStreamSynchronize", Code: cuda.CodeIllegalAddress, Name: "CUDA_ERROR_ILLEGAL_ADDRESS"})
	const lostText = "not measured: the CUDA context was lost when signature b (label b) faulted; run again with -resume -skip b,x"
	tests := []struct {
		name    string
		fail    map[string]error
		ran     string
		errs    map[string]string // entry errors, by ID; "" for none
		results string            // IDs with a result
		lost    string            // Lost's error, "" for nil
		notMeas int
	}{
		{
			name: "sticky", fail: map[string]error{"b": &SignatureError{ID: "b", Label: "label b", Stage: "measure", Err: fault}},
			ran:     "[a b]",
			errs:    map[string]string{"b": "measure: graph launch: cuStreamSynchronize: CUDA_ERROR_ILLEGAL_ADDRESS", "c": lostText, "x": "left out", "e": lostText},
			results: "[a d]",
			lost:    "the CUDA context was lost when signature b (label b) faulted: measure: graph launch: cuStreamSynchronize: CUDA_ERROR_ILLEGAL_ADDRESS",
			notMeas: 2,
		},
		{
			name: "not sticky", fail: map[string]error{"b": fmt.Errorf("prepare: %w", &cuda.Error{Call: "cuMemAlloc", Code: cuda.CodeOutOfMemory, Name: "CUDA_ERROR_OUT_OF_MEMORY"})},
			ran:     "[a b c e]",
			errs:    map[string]string{"b": "prepare: cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY", "x": "left out"},
			results: "[a c d e]",
		},
		{
			name: "sticky at the last", fail: map[string]error{"e": &cuda.Error{Call: "cuLaunchKernel", Code: cuda.CodeLaunchFailed, Name: "CUDA_ERROR_LAUNCH_FAILED"}},
			ran:     "[a b c e]",
			errs:    map[string]string{"e": "cuLaunchKernel: CUDA_ERROR_LAUNCH_FAILED", "x": "left out"},
			results: "[a b c d]",
			lost:    "the CUDA context was lost when signature e (label e) faulted: cuLaunchKernel: CUDA_ERROR_LAUNCH_FAILED",
		},
	}
	for _, tt := range tests {
		d := &Device{}
		var ran, done []string
		var progress strings.Builder
		o := SuiteOptions{
			Previous: map[string]Entry{"d": {ID: "d", Result: &Result{Stats: Stats{MedianNS: 42}}}},
			Skip:     map[string]string{"x": "left out"},
			Done:     func(e Entry) { done = append(done, e.ID) },
			Progress: &progress,
		}
		entries := d.runSet(suiteSet(), o, fakeMeasure(tt.fail, &ran))
		var ids, results []string
		for _, e := range entries {
			ids = append(ids, e.ID)
			if e.Result != nil {
				results = append(results, e.ID)
			}
			if e.Err != tt.errs[e.ID] {
				t.Errorf("%s: entry %s: error %q, want %q", tt.name, e.ID, e.Err, tt.errs[e.ID])
			}
		}
		if fmt.Sprint(ran) != tt.ran {
			t.Errorf("%s: measured %v, want %s", tt.name, ran, tt.ran)
		}
		if fmt.Sprint(results) != tt.results {
			t.Errorf("%s: results for %v, want %s", tt.name, results, tt.results)
		}
		if want := "[a b p c d x e]"; fmt.Sprint(ids) != want || fmt.Sprint(done) != want {
			t.Errorf("%s: entries %v, Done calls %v; want %s", tt.name, ids, done, want)
		}
		if n := strings.Count(progress.String(), "\n"); n != 7 {
			t.Errorf("%s: %d progress lines:\n%s", tt.name, n, progress.String())
		}
		if e := entries[2]; e.PartOf != "c" || e.Err != "" {
			t.Errorf("%s: part entry %+v", tt.name, e)
		}
		err := d.Lost()
		if tt.lost == "" {
			if err != nil {
				t.Errorf("%s: Lost() = %v, want nil", tt.name, err)
			}
			continue
		}
		var le *ContextLostError
		if !errors.As(err, &le) || err.Error() != tt.lost {
			t.Fatalf("%s: Lost() = %v, want %q", tt.name, err, tt.lost)
		}
		if le.NotMeasured != tt.notMeas || !cuda.IsSticky(err) {
			t.Errorf("%s: %d not measured (want %d), sticky %v", tt.name, le.NotMeasured, tt.notMeas, cuda.IsSticky(err))
		}
		// A later set on the lost device: nothing is measured, and the
		// count goes on.
		ran = nil
		again := d.runSet(suiteSet(), SuiteOptions{}, fakeMeasure(nil, &ran))
		if len(ran) != 0 || len(again) != 7 {
			t.Errorf("%s: after the loss, measured %v, %d entries", tt.name, ran, len(again))
		}
		for _, e := range again {
			if e.PartOf == "" && (e.Result != nil || !strings.HasPrefix(e.Err, "not measured: the CUDA context was lost when signature "+le.ID)) {
				t.Errorf("%s: after the loss, entry %+v", tt.name, e)
			}
		}
		if le.NotMeasured != tt.notMeas+6 {
			t.Errorf("%s: %d not measured after a second set, want %d", tt.name, le.NotMeasured, tt.notMeas+6)
		}
	}
}

// The signature Skip names keeps its reason; Skip wins over a previous
// result, and a part of another is not skipped (it replays with it).
func TestSuiteSkip(t *testing.T) {
	o := SuiteOptions{Skip: map[string]string{"a": "left out with -skip", "b": "", "p": "no"},
		Previous: map[string]Entry{"a": {ID: "a", Result: &Result{Stats: Stats{MedianNS: 42}}}}}
	a, b, p, c := Entry{ID: "a"}, Entry{ID: "b"}, Entry{ID: "p", PartOf: "a"}, Entry{ID: "c"}
	if !o.skip(&a) || a.Err != "left out with -skip" || a.Result != nil {
		t.Errorf("a: %+v", a)
	}
	if !o.skip(&b) || b.Err != "left out" {
		t.Errorf("b (no reason given): %+v", b)
	}
	if o.skip(&p) || p.Err != "" {
		t.Errorf("part p skipped: %+v", p)
	}
	if o.skip(&c) || c.Err != "" {
		t.Errorf("c skipped: %+v", c)
	}
}

// A group whose one GPU was lost measures nothing: its signatures and
// collectives get the lost device's error, its other entries stay as they
// are, all in order.
func TestGroupRunSetLostWithoutGPU(t *testing.T) {
	d := &Device{Index: 0}
	d.checkLost(&signatures.Signature{ID: "f", Label: "label f"}, &cuda.Error{Code: cuda.CodeIllegalAddress, Name: "CUDA_ERROR_ILLEGAL_ADDRESS"}, SuiteOptions{})
	g := &Group{Devices: []*Device{d}}
	set := suiteSet()
	set.Signatures = append(set.Signatures, &signatures.Signature{ID: "c1", Label: "allreduce", Class: signatures.ClassCollective,
		Tier: signatures.TierLibrary, Count: 1, Collective: &signatures.Collective{Op: "allreduce", Nelems: 8, DType: "f16", Ranks: 1}})
	var done []string
	entries := g.RunSet(set, SuiteOptions{Skip: map[string]string{"x": "left out"}, Done: func(e Entry) { done = append(done, e.ID) },
		Previous: map[string]Entry{"d": {ID: "d", Result: &Result{Stats: Stats{MedianNS: 42}}}}})
	var ids []string
	for _, e := range entries {
		ids = append(ids, e.ID)
		lost := strings.HasPrefix(e.Err, "not measured: the CUDA context was lost when signature f (label f) faulted; run again with -resume -skip f")
		if want := e.ID != "p" && e.ID != "d" && e.ID != "x"; lost != want {
			t.Errorf("entry %s: error %q", e.ID, e.Err)
		}
	}
	if want := "[a b p c d x e c1]"; fmt.Sprint(ids) != want || len(done) != len(ids) {
		t.Errorf("entries %v, Done calls %v; want %s", ids, done, want)
	}
	var le *ContextLostError
	if !errors.As(d.Lost(), &le) || le.NotMeasured != 5 {
		t.Errorf("Lost() = %+v", le)
	}
}
