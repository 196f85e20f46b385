// Package tracetest reads the embedded traces (package traces) for tests:
// a trace's signature set and its runtime calls.
package tracetest

import (
	"bytes"
	"testing"

	"github.com/kreplay/kreplay/internal/traces"
	"github.com/kreplay/kreplay/signatures"
)

// Read imports the embedded trace name (a name of traces.Names) into its
// signature set, with default options, and reads its runtime calls.
func Read(name string) (*signatures.Set, *signatures.Runtime, error) {
	data, err := traces.ReadFile(name)
	if err != nil {
		return nil, nil, err
	}
	set, err := signatures.Import(bytes.NewReader(data), name, signatures.Options{})
	if err != nil {
		return nil, nil, err
	}
	rt, err := signatures.ReadRuntime(bytes.NewReader(data), name)
	if err != nil {
		return nil, nil, err
	}
	return set, rt, nil
}

// Load is Read that fails the test on an error.
func Load(t testing.TB, name string) (*signatures.Set, *signatures.Runtime) {
	t.Helper()
	set, rt, err := Read(name)
	if err != nil {
		t.Fatal(err)
	}
	return set, rt
}

// ImportSet imports the embedded trace name into its signature set, with
// default options, failing the test on an error.
func ImportSet(t testing.TB, name string) *signatures.Set {
	t.Helper()
	f, err := traces.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	set, err := signatures.Import(f, name, signatures.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return set
}
