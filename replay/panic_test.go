package replay

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/signatures"
)

// A panic in a function Do runs comes back as a *PanicError with the
// panic's value and stack, and the device's goroutine goes on serving.
func TestDoPanic(t *testing.T) {
	d := &Device{jobs: make(chan func())}
	go func() {
		for job := range d.jobs {
			job()
		}
	}()
	defer close(d.jobs)
	err := d.Do(func() error { panic("boom") })
	var pe *PanicError
	if !errors.As(err, &pe) || pe.Value != "boom" || !strings.Contains(string(pe.Stack), "TestDoPanic") {
		t.Fatalf("Do of a panicking function = %v", err)
	}
	if !strings.HasPrefix(err.Error(), "panic: boom\n") {
		t.Errorf("error %q", err)
	}
	if err := d.Do(func() error { return nil }); err != nil {
		t.Errorf("Do after the panic: %v", err)
	}
}

// A replay that panics, in Do (a *PanicError returned, wrapped) or in its
// host code (a panic out of the measurement), loses the device's context
// as a sticky CUDA error does: the signature's entry holds the panic, the
// signatures after it are not measured, and Lost says which panicked.
func TestRunSetPanicLosesContext(t *testing.T) {
	tests := []struct {
		name    string
		measure func(s *signatures.Signature, e *Entry) error
	}{
		{"panic in Do", func(s *signatures.Signature, e *Entry) error {
			err := &SignatureError{ID: s.ID, Label: s.Label, Stage: "measure", Err: &PanicError{Value: "boom", Stack: []byte("stack")}}
			e.Err = errText(err)
			return err
		}},
		{"panic in the host code", func(s *signatures.Signature, e *Entry) error {
			e.Result = &Result{}
			panic(fmt.Errorf("boom"))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ran []string
			measure := func(s *signatures.Signature, o SuiteOptions, e *Entry) error {
				ran = append(ran, s.ID)
				if s.ID == "b" {
					return tt.measure(s, e)
				}
				e.Result = &Result{Stats: Stats{MedianNS: 1000}}
				return nil
			}
			d := &Device{}
			entries := d.runSet(suiteSet(), SuiteOptions{Skip: map[string]string{"x": "left out"}}, measure)
			if fmt.Sprint(ran) != "[a b]" {
				t.Errorf("measured %v, want [a b]", ran)
			}
			byID := map[string]Entry{}
			for _, e := range entries {
				byID[e.ID] = e
			}
			if e := byID["b"]; e.Result != nil || !strings.Contains(e.Err, "panic: boom") {
				t.Errorf("the panicking signature's entry %+v", e)
			}
			const lostText = "not measured: the CUDA context was lost when signature b (label b) panicked; run again with -resume -skip b,x"
			for _, id := range []string{"c", "d", "e"} {
				if e := byID[id]; e.Result != nil || e.Err != lostText {
					t.Errorf("entry %s after the panic: %+v, want error %q", id, e, lostText)
				}
			}
			var le *ContextLostError
			err := d.Lost()
			if !errors.As(err, &le) || err.Error() != "the CUDA context was lost when signature b (label b) panicked: boom" {
				t.Fatalf("Lost() = %v", err)
			}
			if le.NotMeasured != 3 || fmt.Sprint(le.Skip) != "[b x]" {
				t.Errorf("lost %+v", le)
			}
		})
	}
}
