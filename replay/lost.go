package replay

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/signatures"
)

// ContextLostError says a Device's CUDA context was lost: a signature's
// replay returned a sticky error (cuda.IsSticky, a kernel that faulted on
// the GPU), after which every CUDA call of the process fails with it, so
// RunSet measures nothing more on the Device. The signature named is the
// one whose replay returned the error first; a fault that an earlier
// replay's calls did not return shows up at the next one.
type ContextLostError struct {
	// ID and Label name the signature whose replay faulted.
	ID, Label string
	// Err is its error.
	Err error
	// NotMeasured counts the signatures RunSet left unmeasured since (in
	// that call and any later one on the Device): those it would have
	// measured, not those that are part of another or reused from
	// SuiteOptions.Previous.
	NotMeasured int
	// Skip lists the signatures to leave out of a new run, sorted: ID
	// and those SuiteOptions.Skip left out.
	Skip []string
}

// Error formats e as "the CUDA context was lost when signature ID (LABEL)
// faulted: ERR", or, for a panic, "... panicked: VALUE" (the stack is in
// the signature's entry).
func (e *ContextLostError) Error() string {
	var pe *PanicError
	if errors.As(e.Err, &pe) {
		return fmt.Sprintf("the CUDA context was lost when signature %s (%s) panicked: %v", e.ID, e.Label, pe.Value)
	}
	return fmt.Sprintf("the CUDA context was lost when signature %s (%s) faulted: %s", e.ID, e.Label, errText(e.Err))
}

// Unwrap returns the CUDA error that lost the context.
func (e *ContextLostError) Unwrap() error { return e.Err }

// entryText is the error of an Entry RunSet did not measure because of e.
func (e *ContextLostError) entryText() string {
	how := "faulted"
	var pe *PanicError
	if errors.As(e.Err, &pe) {
		how = "panicked"
	}
	return fmt.Sprintf("not measured: the CUDA context was lost when signature %s (%s) %s; run again with -resume -skip %s",
		e.ID, e.Label, how, strings.Join(e.Skip, ","))
}

// Lost returns a *ContextLostError when a replay on d returned a sticky
// CUDA error (d can replay nothing more: open the GPU in a new process),
// and nil otherwise.
func (d *Device) Lost() error {
	d.lostMu.Lock()
	defer d.lostMu.Unlock()
	if d.lost == nil {
		return nil
	}
	return d.lost
}

// checkLost records err, signature s's, as the loss of d's context when it
// is sticky or a panic (PanicError) and d's context was not already lost.
func (d *Device) checkLost(s *signatures.Signature, err error, o SuiteOptions) {
	if !cuda.IsSticky(err) && !isPanic(err) {
		return
	}
	d.lostMu.Lock()
	defer d.lostMu.Unlock()
	if d.lost != nil {
		return
	}
	skip := []string{s.ID}
	for id := range o.Skip {
		if id != s.ID {
			skip = append(skip, id)
		}
	}
	slices.Sort(skip)
	d.lost = &ContextLostError{ID: s.ID, Label: s.Label, Err: err, Skip: skip}
}

// notMeasured gives e, a signature to measure, the error that says why it
// was not when d's context is lost, and reports whether it did.
func (d *Device) notMeasured(e *Entry) bool {
	d.lostMu.Lock()
	defer d.lostMu.Unlock()
	if d.lost == nil {
		return false
	}
	e.Result, e.SameKernel, e.Err = nil, nil, d.lost.entryText()
	d.lost.NotMeasured++
	return true
}
