package inject

import (
	"debug/elf"
	"os"
	"path/filepath"
	"testing"

	"github.com/kreplay/kreplay/internal/dl/dltest"
)

// buildReused builds a library with build into a new directory, fails the
// test unless a second build returns the same library without rebuilding
// it, and returns the library, the directory and the dynamic symbols the
// library defines. It skips the test without a C compiler.
func buildReused(t *testing.T, build func(dir string) (string, error)) (string, string, []elf.Symbol) {
	t.Helper()
	if _, err := compiler(); err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	lib, err := build(dir)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(lib)
	again, err := build(dir)
	if err != nil || again != lib {
		t.Fatalf("second build of %s: %q, %v", lib, again, err)
	}
	if st2, _ := os.Stat(lib); !st2.ModTime().Equal(st.ModTime()) {
		t.Errorf("second build rebuilt %s", lib)
	}
	f, err := elf.Open(lib)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.DynamicSymbols()
	if err != nil {
		t.Fatal(err)
	}
	var defined []elf.Symbol
	for _, s := range syms {
		if s.Section != elf.SHN_UNDEF {
			defined = append(defined, s)
		}
	}
	return lib, dir, defined
}

// compileCheck compiles and runs the C file csrc/check with headers (name
// to content) beside it, where cuda.h and CUPTI's headers are installed
// (the GPU machines); it skips the test elsewhere. The check compiles
// only if the headers agree with CUDA's.
func compileCheck(t *testing.T, check string, headers map[string][]byte) {
	t.Helper()
	if dltest.FindHeader("cupti.h") == "" || dltest.FindHeader("generated_cuda_meta.h") == "" {
		t.Skipf("cupti.h or generated_cuda_meta.h not found under %v", dltest.CUDARoots())
	}
	dir := t.TempDir()
	for name, b := range headers {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	src, err := os.ReadFile(filepath.Join("csrc", check))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dltest.CompileAndRun(dir, string(src)); err != nil {
		t.Fatal(err)
	}
}
