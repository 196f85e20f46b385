package captured

import (
	"errors"
	"fmt"
	"testing"

	"github.com/kreplay/kreplay/internal/cuda"
)

// A producer that ran out of memory or faulted fails the signature; one
// whose binary is missing or wrong is only dropped.
func TestProducerFatal(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"out of memory", fmt.Errorf("its producer k: %w", &cuda.Error{Call: "cuMemAlloc", Code: cuda.CodeOutOfMemory}), true},
		{"faulted", fmt.Errorf("its producer k: %w", &FirstLaunchError{Kernel: "k", Err: &cuda.Error{Call: "cuStreamSynchronize", Code: cuda.CodeIllegalAddress}}), true},
		{"no binary", fmt.Errorf("its producer k: %w", ErrNoBinary), false},
		{"refused launch", fmt.Errorf("its producer k: %w", &cuda.Error{Call: "cuLaunchKernelEx", Code: 1}), false},
		{"other", errors.New("snapshot missing"), false},
	} {
		if got := producerFatal(c.err); got != c.want {
			t.Errorf("%s: producerFatal(%v) = %v, want %v", c.name, c.err, got, c.want)
		}
	}
}
