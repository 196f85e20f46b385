package bench

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/kreplay/kreplay/internal/traces/tracetest"
	"github.com/kreplay/kreplay/signatures"
)

// realSet reads the committed set of a generated package (read once; the
// tests must not modify it).
func realSet(t testing.TB, dir string) *signatures.Set {
	t.Helper()
	return tracetest.ReadSet(t, filepath.Join(dir, SetFile))
}

func prefillSet(t testing.TB) *signatures.Set { return realSet(t, tracetest.GeneratedSets[0].Dir) }

// importEmbedded imports one of the embedded traces.
func importEmbedded(t testing.TB, name string) *signatures.Set {
	return tracetest.ImportSet(t, name)
}

// near reports whether got is within rel of want.
func near(got, want, rel float64) bool {
	if want == 0 {
		return math.Abs(got) <= rel
	}
	return math.Abs(got-want) <= rel*math.Abs(want)
}
