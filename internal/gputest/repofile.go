package gputest

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// OpenRepoFile opens the repository's file at rel (a path from the
// repository root), found from a package directory (go test), from the
// repository root (a test binary run there, as on the GPU machine) or
// from this package's source directory. It fails tb when none holds it.
func OpenRepoFile(tb testing.TB, rel string) *os.File {
	tb.Helper()
	paths := []string{filepath.Join("..", rel), rel}
	if _, file, _, ok := runtime.Caller(0); ok {
		paths = append(paths, filepath.Join(filepath.Dir(file), "..", "..", rel))
	}
	for _, p := range paths {
		if f, err := os.Open(p); err == nil {
			return f
		}
	}
	tb.Fatalf("no file %s at %q", rel, paths)
	return nil
}
