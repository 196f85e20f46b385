// Package dltest is test support for the bindings package dl loads
// (cuda, nvrtc, cublas, cublaslt, nccl, cudnn, cupti): checking what a binding
// hands to a dl.Library, and compiling C probes against the installed
// CUDA and NCCL headers to check the declarations the bindings transcribe
// by hand. It needs no GPU and no CUDA library, and imports no binding, so
// every binding's tests may use it. Only _test.go files import it.
package dltest

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/internal/dl"
)

// CheckLibrary checks a binding's Library: its Symbols cover every slot
// of its Table once, and Open of a missing path and of libc (which lacks
// every CUDA entry point) fails with an error that wraps NotFound and
// names both candidates and first, the first required symbol.
func CheckLibrary(t testing.TB, lib *dl.Library, first string) {
	t.Helper()
	if err := dl.CheckSymbols(lib.Symbols, len(lib.Table)); err != nil {
		t.Error(err)
	}
	const missing = "/nonexistent/libkreplay_missing.so"
	_, err := lib.Open([]string{missing, "libc.so.6"})
	if !errors.Is(err, lib.NotFound) || !strings.Contains(err.Error(), missing+": ") ||
		!strings.Contains(err.Error(), "libc.so.6: missing symbol "+first) {
		t.Errorf("Open = %v, want an error wrapping %v that names %s, libc.so.6 and the missing %s", err, lib.NotFound, missing, first)
	}
}

// Const is a value a binding hard-codes and the C expression of the
// header it must equal (an enumerator, a macro, a sizeof); Min is the
// first header version that declares it.
type Const struct {
	Expr string
	Val  int64
	Min  int64
}

// Since returns a constructor of the Consts a header declares from
// version min on.
func Since(min int64) func(expr string, val int64) Const {
	return func(expr string, val int64) Const { return Const{Expr: expr, Val: val, Min: min} }
}

// key is what a probe prints for c: Expr without spaces.
func (c Const) key() string { return strings.ReplaceAll(c.Expr, " ", "") }

// PrintConsts returns C statements for a probe's main that print the
// header version (the macro version, e.g. CUBLAS_VER_MAJOR) and each
// constant the version declares, as ParseValues reads them.
func PrintConsts(version string, consts []Const) string {
	var b strings.Builder
	line := func(key, expr string) {
		fmt.Fprintf(&b, "  printf(\"%s %%lld\\n\", (long long)(%s));\n", key, expr)
	}
	line(version, version)
	for _, c := range consts {
		fmt.Fprintf(&b, "#if %s >= %d\n", version, c.Min)
		line(c.key(), c.Expr)
		b.WriteString("#endif\n")
	}
	return b.String()
}

// CheckConsts compares the values a PrintConsts probe printed with
// consts, reporting each that differs from what the binding (named by
// pkg, e.g. "package cublas") holds, and each not printed although the
// header's version declares it. It returns that version.
func CheckConsts(t testing.TB, vals map[string]int64, version string, consts []Const, pkg string) int64 {
	t.Helper()
	v := vals[version]
	for _, c := range consts {
		got, ok := vals[c.key()]
		switch {
		case !ok && c.Min <= v:
			t.Errorf("%s not printed", c.Expr)
		case ok && got != c.Val:
			t.Errorf("%s = %d in the header, %d in %s", c.Expr, got, c.Val, pkg)
		}
	}
	return v
}

// Probe compiles and runs a C program that includes stdio.h, stddef.h
// and headers, in that order, with body as the statements of its main,
// against IncludeDirs, and returns the values it prints (see
// CompileAndRun and ParseValues). A failure stops the test.
func Probe(t testing.TB, headers []string, body string) map[string]int64 {
	t.Helper()
	var b strings.Builder
	for _, h := range append([]string{"stdio.h", "stddef.h"}, headers...) {
		fmt.Fprintf(&b, "#include <%s>\n", h)
	}
	b.WriteString("int main(void) {\n" + body + "  return 0;\n}\n")
	out, err := CompileAndRun(t.TempDir(), b.String())
	if err != nil {
		t.Fatal(err)
	}
	vals, err := ParseValues(out)
	if err != nil {
		t.Fatal(err)
	}
	return vals
}

// LoadFailure calls load, a binding's Load, where the library should be
// missing. If load succeeds the library is installed and its failure
// cannot be checked: LoadFailure skips t with the text installed returns
// (installed may itself check what was loaded). Otherwise it stops t
// unless the error wraps notFound, and returns the error.
func LoadFailure(t testing.TB, load func() error, notFound error, installed func() string) error {
	t.Helper()
	err := load()
	if err == nil {
		t.Skip(installed())
	}
	if !errors.Is(err, notFound) {
		t.Fatalf("Load error %v does not match %v", err, notFound)
	}
	return err
}
