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
	// Skip lists the signatures to leave out of a new run, sorted: ID,
	// those SuiteOptions.Skip left out and Others.
	Skip []string
	// Kernel is the captured kernel whose first launch failed
	// (captured.FirstLaunchError: the signature's own, or a producer's
	// that primes it); "" when the error names none, a fault while
	// measuring, say.
	Kernel string
	// Others lists, sorted, the other signatures of the RunSet call that
	// launch Kernel in a captured replay and have no result to lose:
	// launched in a new process, each would lose its context in turn.
	// Skip holds them too.
	Others []string
}

// Error formats e as "the CUDA context was lost when signature ID (LABEL)
// faulted: ERR", or, for a panic, "... panicked: VALUE" (the stack is in
// the signature's entry), followed, when there are Others, by "; N other
// signatures launch the same kernel and are left out with it".
func (e *ContextLostError) Error() string {
	var pe *PanicError
	if errors.As(e.Err, &pe) {
		return fmt.Sprintf("the CUDA context was lost when signature %s (%s) panicked: %v", e.ID, e.Label, pe.Value) + e.othersText()
	}
	return fmt.Sprintf("the CUDA context was lost when signature %s (%s) faulted: %s", e.ID, e.Label, errText(e.Err)) + e.othersText()
}

// othersText is what Error says of Others: "" when there are none.
func (e *ContextLostError) othersText() string {
	switch n := len(e.Others); n {
	case 0:
		return ""
	case 1:
		return "; 1 other signature launches the same kernel and is left out with it"
	default:
		return fmt.Sprintf("; %d other signatures launch the same kernel and are left out with it", n)
	}
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
// Where err says which captured kernel failed on its first launch and o
// comes from a RunSet call (o.lostScope), the loss leaves out with s the
// call's other signatures that launch that kernel (lostScope.sameKernel).
func (d *Device) checkLost(s *signatures.Signature, err error, o SuiteOptions) {
	d.lostMu.Lock()
	defer d.lostMu.Unlock()
	o.lostScope.record(s, err)
	if d.lost != nil || !cuda.IsSticky(err) && !isPanic(err) {
		return
	}
	kernel := firstLaunchKernel(err)
	others := o.lostScope.sameKernel(kernel, s.ID, o)
	skip := append([]string{s.ID}, others...)
	for id := range o.Skip {
		skip = append(skip, id)
	}
	slices.Sort(skip)
	others = slices.DeleteFunc(others, func(id string) bool { _, ok := o.Skip[id]; return ok })
	d.lost = &ContextLostError{ID: s.ID, Label: s.Label, Err: err, Skip: slices.Compact(skip), Kernel: kernel, Others: others}
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
