package cudatest

import (
	"testing"

	"github.com/kreplay/kreplay/internal/gputest"
)

// PrimaryContext gives a usable context on a GPU machine; without one
// HasDevice says why (and the test skips).
func TestPrimaryContext(t *testing.T) {
	if err := HasDevice(); err != nil {
		gputest.Skipf(t, "no GPU: %v", err)
	}
	_, ctx := PrimaryContext(t)
	if err := ctx.Do(func() error { return nil }); err != nil {
		t.Fatal(err)
	}
}
