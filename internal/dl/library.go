package dl

import (
	"errors"
	"os"
	"sync"
	"unsafe"
)

// Library is a binding's library, loaded once from a list of candidate
// names: the first candidate that opens and exports every required
// symbol fills the binding's C function table. It is safe for concurrent
// use. Set the fields before the first Load and leave them alone after.
type Library struct {
	// NotFound is wrapped by the error of a Load or Open that found no
	// usable candidate.
	NotFound error
	// Symbols fill Table. A candidate lacking a required one is rejected
	// with the reason "missing symbol NAME", NAME the first one missing
	// in this order.
	Symbols []Symbol
	// Table is the binding's C function table, e.g. C.kr_cublas_fn[:].
	Table []unsafe.Pointer
	// Env, when set, names an environment variable that chooses the
	// library: when it holds a path or soname, Load tries that alone
	// (so that two builds of a library can be compared on one machine,
	// and a wrong path is an error rather than a silent fallback).
	Env string

	mu   sync.Mutex
	path string
}

// Load loads the library unless it is loaded: it calls before (when not
// nil), opens the first usable candidate (see Open), then calls after
// (when not nil), all under the Library's lock. It returns nil at once
// once a Load has succeeded. When after fails, Load returns its error and
// the library counts as not loaded, so the next Load starts over.
func (l *Library) Load(candidates []string, before func(), after func() error) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.path != "" {
		return nil
	}
	if before != nil {
		before()
	}
	if l.Env != "" {
		if v := os.Getenv(l.Env); v != "" {
			candidates = []string{v}
		}
	}
	path, err := l.open(candidates)
	if err != nil {
		return err
	}
	if after != nil {
		if err := after(); err != nil {
			return err
		}
	}
	l.path = path
	return nil
}

// Path reports the candidate Load opened, or "" when none is loaded.
func (l *Library) Path() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.path
}

// Open tries each candidate in order and returns the first that opens and
// exports every required symbol, after copying its entry points into
// Table; a candidate that lacks one is closed again. It does not mark the
// library loaded (Load does). On failure the error wraps NotFound and
// names every candidate with the loader's reason, e.g.
// "cublas: library not found (tried libc.so.6): libc.so.6: missing symbol
// cublasCreate_v2".
func (l *Library) Open(candidates []string) (string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open(candidates)
}

func (l *Library) open(candidates []string) (string, error) {
	return openFirst(l.NotFound, candidates, func(name string) (string, bool) {
		h, err := Open(name)
		if err != nil {
			var oe *OpenError
			if errors.As(err, &oe) {
				return oe.Reason, false
			}
			return err.Error(), false
		}
		table, missing := h.Resolve(l.Symbols, len(l.Table))
		if len(missing) > 0 {
			h.Close()
			return "missing symbol " + missing[0], false
		}
		// The library stays loaded for the life of the process.
		copy(l.Table, table)
		return "", true
	})
}
