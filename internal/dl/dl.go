// Package dl is the one run-time loader of kreplay's library bindings
// (cuda, nvrtc, cublas, cublaslt, nccl, cudnn, cupti), in the manner of
// github.com/NVIDIA/go-nvml: nothing links against a CUDA library, each
// binding opens its library with dlopen when first used and resolves its
// entry points with dlsym.
//
// A binding keeps only what is its own: a C function table (an enum of
// slots and a void * array) with static inline wrappers that call
// through it, and the list of [Symbol]s that fills it. This package does
// the dlopen, the dlsym of every symbol and the reporting: [Open] and
// [Handle.Resolve] for bindings with their own loading policy (cuda,
// nvrtc), and [Library] for those that try a list of sonames and load once
// (cublas, cublaslt, nccl, cudnn, cupti). Package dltest has the bindings'
// shared test support.
package dl

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

// kr_dl_open opens name. On failure it returns NULL and sets *err to a
// malloc'd copy of dlerror's message, which the caller frees. dlerror is
// per thread, so dlopen and dlerror must run in one C call.
static void *kr_dl_open(const char *name, char **err) {
	void *h;
	const char *msg;

	*err = NULL;
	dlerror(); // clear any stale error on this thread
	h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		msg = dlerror();
		*err = strdup(msg != NULL ? msg : "dlopen failed");
	}
	return h;
}
*/
import "C"

import (
	"fmt"
	"strings"
	"unsafe"
)

// Handle is an open shared library. The zero Handle has no symbols.
type Handle struct {
	p unsafe.Pointer
}

// OpenError is the error of a failed Open.
type OpenError struct {
	Name   string // the name given to dlopen
	Reason string // dlerror's message, which usually begins with Name
}

// Error returns "dlopen NAME: REASON".
func (e *OpenError) Error() string { return "dlopen " + e.Name + ": " + e.Reason }

// Open opens the shared library name (a soname the dynamic loader
// resolves, or a path) with dlopen(RTLD_NOW | RTLD_LOCAL). On failure the
// error is an *OpenError carrying dlerror's message.
func Open(name string) (Handle, error) {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	var cerr *C.char
	h := C.kr_dl_open(cs, &cerr)
	if h == nil {
		reason := "dlopen failed"
		if cerr != nil {
			reason = C.GoString(cerr)
			C.free(unsafe.Pointer(cerr))
		}
		return Handle{}, &OpenError{Name: name, Reason: reason}
	}
	return Handle{p: h}, nil
}

// Sym returns the address of the symbol name in h, or nil when h does not
// export it (or h is the zero Handle).
func (h Handle) Sym(name string) unsafe.Pointer {
	if h.p == nil {
		return nil
	}
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	return C.dlsym(h.p, cs)
}

// Close closes h (dlclose). Closing the zero Handle does nothing.
func (h Handle) Close() {
	if h.p != nil {
		C.dlclose(h.p)
	}
}

// Symbol is one entry point of a binding's C function table.
type Symbol struct {
	Slot     int    // index in the table (the C enum's value)
	Name     string // exported name to dlsym
	Optional bool   // absent in some library versions; its slot stays nil
}

// Resolve looks every symbol up in h. It returns a table of n addresses
// indexed by Slot (nil where a symbol is absent) and the names of the
// required symbols h lacks, in the order of syms. Nothing is installed:
// copy the table into the C one once the library is accepted.
func (h Handle) Resolve(syms []Symbol, n int) (table []unsafe.Pointer, missing []string) {
	table = make([]unsafe.Pointer, n)
	for _, s := range syms {
		table[s.Slot] = h.Sym(s.Name)
		if table[s.Slot] == nil && !s.Optional {
			missing = append(missing, s.Name)
		}
	}
	return table, missing
}

// CheckSymbols reports an error unless syms has exactly one entry for
// each slot of a table of n, for the bindings' tests.
func CheckSymbols(syms []Symbol, n int) error {
	seen := make(map[int]string)
	var errs []string
	for _, s := range syms {
		switch prev, dup := seen[s.Slot]; {
		case s.Slot < 0 || s.Slot >= n:
			errs = append(errs, fmt.Sprintf("%s: slot %d out of range [0,%d)", s.Name, s.Slot, n))
		case dup:
			errs = append(errs, fmt.Sprintf("slot %d used by %s and %s", s.Slot, prev, s.Name))
		default:
			seen[s.Slot] = s.Name
		}
	}
	if len(seen) != n {
		errs = append(errs, fmt.Sprintf("%d of %d slots have a symbol", len(seen), n))
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// openFirst calls open for each candidate in order and returns the first
// name that opens. open returns ok, or the loader's reason. When none
// opens, the error wraps notFound and names every candidate with its
// reason.
func openFirst(notFound error, candidates []string, open func(name string) (reason string, ok bool)) (string, error) {
	var reasons []string
	for _, name := range candidates {
		msg, ok := open(name)
		if ok {
			return name, nil
		}
		if !strings.HasPrefix(msg, name) {
			msg = name + ": " + msg
		}
		reasons = append(reasons, msg)
	}
	return "", fmt.Errorf("%w (tried %s): %s", notFound, strings.Join(candidates, ", "), strings.Join(reasons, "; "))
}
