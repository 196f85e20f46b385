package tracetest

import (
	"os"
	"sync"
	"testing"

	"github.com/kreplay/kreplay/signatures"
)

// A Generated is a generated package committed under bench/ (Dir, its
// directory there) and the embedded trace it was generated from.
type Generated struct{ Dir, Trace string }

// GeneratedSets are the generated packages of the BLOOM-560M prefill and
// generate, in that order.
var GeneratedSets = []Generated{
	{"bloom_560m_prefill", "h100_bloom-560m_prefill.trace.json.gz"},
	{"bloom_560m_generate", "h100_bloom-560m_generate.trace.json.gz"},
}

var setCache sync.Map // path -> *signatures.Set

// ReadSet reads the signature set file at path once per test binary: the
// tests that read it share it and must not modify it.
func ReadSet(t testing.TB, path string) *signatures.Set {
	t.Helper()
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
