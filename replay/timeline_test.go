package replay

import (
	"errors"
	"fmt"
	"testing"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/signatures"
)

func TestTimelineSkipReason(t *testing.T) {
	for _, c := range []struct {
		sig  signatures.Signature
		o    TimelineOptions
		want string
	}{
		{signatures.Signature{Tier: 1}, TimelineOptions{}, ""},
		{signatures.Signature{Tier: 2, Unreplayable: "no shapes"}, TimelineOptions{}, "unreplayable: no shapes"},
		{signatures.Signature{Tier: 2, Class: signatures.ClassCollective}, TimelineOptions{}, "collective: needs the other ranks"},
		{signatures.Signature{Tier: 3}, TimelineOptions{Tiers: []signatures.Tier{1, 2}}, "tier 3 not asked for"},
		{signatures.Signature{Tier: 2}, TimelineOptions{Tiers: []signatures.Tier{1, 2}}, ""},
	} {
		if got := skipReason(&c.sig, c.o); got != c.want {
			t.Errorf("skipReason(%+v, %+v) = %q, want %q", c.sig, c.o, got, c.want)
		}
	}
}

func TestTimelineMemoryError(t *testing.T) {
	sig := &signatures.Signature{ID: "s1", Label: "l"}
	for _, c := range []struct {
		err  error
		want bool
	}{
		{sigErr(sig, "prepare", &cuda.Error{Call: "cuMemAlloc", Code: cuda.CodeOutOfMemory}), true},
		{sigErr(sig, "prepare", fmt.Errorf("needs %d bytes of device memory for %d buffer sets, %d available", 10, 1, 5)), true},
		{sigErr(sig, "prepare", ErrNotImplemented), false},
		{errors.New("other"), false},
	} {
		if got := isMemoryError(c.err); got != c.want {
			t.Errorf("isMemoryError(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
