package bench

import (
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/kreplay/kreplay/internal/traces"
	"github.com/kreplay/kreplay/signatures"
)

// The committed generated packages and the embedded traces they were
// generated from.
var realSets = []struct{ dir, trace string }{
	{"bloom_560m_prefill", "h100_bloom-560m_prefill.trace.json.gz"},
	{"bloom_560m_generate", "h100_bloom-560m_generate.trace.json.gz"},
}

var setCache sync.Map // path -> *signatures.Set

// realSet reads the committed set of a generated package (read once; the
// tests must not modify it).
func realSet(t testing.TB, dir string) *signatures.Set {
	t.Helper()
	path := filepath.Join(dir, SetFile)
	if s, ok := setCache.Load(path); ok {
		return s.(*signatures.Set)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	set, err := signatures.ReadSet(f, path)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := setCache.LoadOrStore(path, set)
	return s.(*signatures.Set)
}

func prefillSet(t testing.TB) *signatures.Set { return realSet(t, realSets[0].dir) }

// importEmbedded imports one of the embedded traces.
func importEmbedded(t testing.TB, name string) *signatures.Set {
	t.Helper()
	f, err := traces.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := signatures.Import(f, name, signatures.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// near reports whether got is within rel of want.
func near(got, want, rel float64) bool {
	if want == 0 {
		return math.Abs(got) <= rel
	}
	return math.Abs(got-want) <= rel*math.Abs(want)
}
