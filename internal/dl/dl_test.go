package dl

import (
	"errors"
	"strings"
	"testing"
	"unsafe"
)

func TestOpenFirst(t *testing.T) {
	errNF := errors.New("lib: not found")
	var tried []string
	name, err := openFirst(errNF, []string{"a.so.2", "a.so.1", "a.so"}, func(n string) (string, bool) {
		tried = append(tried, n)
		return "cannot open shared object file", n == "a.so.1"
	})
	if err != nil || name != "a.so.1" || strings.Join(tried, ",") != "a.so.2,a.so.1" {
		t.Errorf("openFirst = %q, %v after %v", name, err, tried)
	}
	_, err = openFirst(errNF, []string{"b.so.1", "b.so"}, func(n string) (string, bool) {
		return n + ": no such file", false
	})
	if !errors.Is(err, errNF) || !strings.Contains(err.Error(), "b.so.1: no such file; b.so: no such file") ||
		!strings.Contains(err.Error(), "tried b.so.1, b.so") {
		t.Errorf("error %v", err)
	}
}

func TestOpenMissingLibrary(t *testing.T) {
	const name = "libkreplay-no-such-library.so.9"
	h, err := Open(name)
	var oe *OpenError
	if err == nil || !errors.As(err, &oe) || h != (Handle{}) {
		t.Fatalf("Open(%s) = %v, %v; want an *OpenError", name, h, err)
	}
	if oe.Name != name || !strings.HasPrefix(err.Error(), "dlopen "+name+": ") || !strings.Contains(oe.Reason, name) {
		t.Errorf("error %q (reason %q) does not name the library", err, oe.Reason)
	}
	if p := h.Sym("strlen"); p != nil {
		t.Errorf("Sym on the zero Handle = %v", p)
	}
	h.Close() // no-op
}

func TestResolve(t *testing.T) {
	h, err := Open("libc.so.6")
	if err != nil {
		t.Skipf("no libc.so.6: %v", err)
	}
	syms := []Symbol{
		{Slot: 2, Name: "strlen"},
		{Slot: 0, Name: "kreplay_no_such_symbol", Optional: true},
		{Slot: 1, Name: "kreplay_no_such_symbol_2"},
		{Slot: 3, Name: "memcpy"},
	}
	table, missing := h.Resolve(syms, 4)
	if table[2] == nil || table[3] == nil || table[0] != nil || table[1] != nil {
		t.Errorf("table = %v", table)
	}
	if len(missing) != 1 || missing[0] != "kreplay_no_such_symbol_2" {
		t.Errorf("missing = %v", missing)
	}
	if err := CheckSymbols(syms, 4); err != nil {
		t.Errorf("CheckSymbols: %v", err)
	}
	for _, bad := range [][]Symbol{syms[:3], append(syms[:3:3], Symbol{Slot: 2, Name: "dup"}), append(syms[:3:3], Symbol{Slot: 4, Name: "out"})} {
		if err := CheckSymbols(bad, 4); err == nil {
			t.Errorf("CheckSymbols(%v) = nil", bad)
		}
	}
}

func TestLibrary(t *testing.T) {
	errNF := errors.New("kr: library not found")
	table := make([]unsafe.Pointer, 2)
	lib := &Library{NotFound: errNF, Table: table, Symbols: []Symbol{
		{Slot: 0, Name: "strlen"},
		{Slot: 1, Name: "kreplay_no_such_symbol", Optional: true},
	}}
	missing := "/nonexistent/libkreplay_missing_a.so"
	// A library lacking a required symbol is rejected with its name.
	strict := &Library{NotFound: errNF, Table: make([]unsafe.Pointer, 1), Symbols: []Symbol{{Slot: 0, Name: "kreplay_required"}}}
	_, err := strict.Open([]string{missing, "libc.so.6"})
	if !errors.Is(err, errNF) || !strings.Contains(err.Error(), missing+": ") ||
		!strings.Contains(err.Error(), "libc.so.6: missing symbol kreplay_required") {
		t.Errorf("Open error %v", err)
	}
	calls := 0
	after := func() error { calls++; return errors.New("after failed") }
	if err := lib.Load([]string{missing}, func() { calls++ }, after); !errors.Is(err, errNF) || calls != 1 {
		t.Fatalf("Load of a missing library: %v after %d hook calls", err, calls)
	}
	if err := lib.Load([]string{missing, "libc.so.6"}, nil, after); err == nil || lib.Path() != "" {
		t.Fatalf("Load with a failing after hook: %v, Path %q", err, lib.Path())
	}
	if table[0] == nil || table[1] != nil {
		t.Errorf("table after Open of libc = %v", table)
	}
	if err := lib.Load([]string{missing, "libc.so.6"}, nil, nil); err != nil || lib.Path() != "libc.so.6" {
		t.Fatalf("Load = %v, Path %q", err, lib.Path())
	}
	if err := lib.Load(nil, func() { t.Error("before ran after a successful Load") }, nil); err != nil {
		t.Errorf("second Load: %v", err)
	}
}

// A library's Env variable, when set, is the only candidate: its library
// loads in place of the list, and a wrong path is an error naming it.
func TestLibraryEnv(t *testing.T) {
	errNF := errors.New("kr: library not found")
	syms := []Symbol{{Slot: 0, Name: "strlen"}}
	t.Setenv("KREPLAY_TEST_LIB", "libc.so.6")
	lib := &Library{NotFound: errNF, Table: make([]unsafe.Pointer, 1), Symbols: syms, Env: "KREPLAY_TEST_LIB"}
	if err := lib.Load([]string{"/nonexistent/libkreplay_a.so"}, nil, nil); err != nil || lib.Path() != "libc.so.6" {
		t.Fatalf("Load with the variable set: %v, Path %q", err, lib.Path())
	}
	t.Setenv("KREPLAY_TEST_LIB", "/nonexistent/libkreplay_b.so")
	other := &Library{NotFound: errNF, Table: make([]unsafe.Pointer, 1), Symbols: syms, Env: "KREPLAY_TEST_LIB"}
	err := other.Load([]string{"libc.so.6"}, nil, nil)
	if !errors.Is(err, errNF) || !strings.Contains(err.Error(), "/nonexistent/libkreplay_b.so") {
		t.Errorf("Load of a wrong path: %v (Path %q)", err, other.Path())
	}
}
