package tracetest

import (
	"testing"

	"github.com/kreplay/kreplay/internal/traces"
)

// Read returns the default trace's set and runtime calls, ImportSet the
// same set, and Read an error for a trace that is not embedded.
func TestRead(t *testing.T) {
	set, rt := Load(t, traces.Default)
	if len(set.Signatures) == 0 || rt == nil {
		t.Errorf("%s: %d signatures, runtime %v", traces.Default, len(set.Signatures), rt)
	}
	if only := ImportSet(t, traces.Default); len(only.Signatures) != len(set.Signatures) {
		t.Errorf("ImportSet: %d signatures, Load: %d", len(only.Signatures), len(set.Signatures))
	}
	if _, _, err := Read("no-such.trace.json.gz"); err == nil {
		t.Error("Read of a trace that is not embedded: no error")
	}
}
