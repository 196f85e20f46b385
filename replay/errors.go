package replay

import (
	"errors"
	"fmt"

	"github.com/kreplay/kreplay/signatures"
)

// Errors a signature can be refused with.
var (
	// ErrUnreplayable: the signature's replay parameters could not be
	// derived from the trace (Signature.Unreplayable says why).
	ErrUnreplayable = errors.New("unreplayable")
	// ErrPartOf: the signature is launched by a library together with
	// another signature (a split-K reduce with its GEMM) and is measured
	// with it.
	ErrPartOf = errors.New("replayed as part of another signature")
	// ErrNotImplemented: no replay exists yet for the signature's tier or
	// class.
	ErrNotImplemented = errors.New("no replay for this signature yet")
)

// SignatureError is the error of one signature's preparation or
// measurement: it names the signature, and the rest of a run goes on.
type SignatureError struct {
	ID    string
	Label string
	Stage string // "prepare" or "measure"
	Err   error
}

func (e *SignatureError) Error() string {
	return fmt.Sprintf("signature %s (%s): %s: %v", e.ID, e.Label, e.Stage, e.Err)
}

func (e *SignatureError) Unwrap() error { return e.Err }

func sigErr(sig *signatures.Signature, stage string, err error) error {
	if err == nil {
		return nil
	}
	return &SignatureError{ID: sig.ID, Label: sig.Label, Stage: stage, Err: err}
}
