package cudnn_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/kreplay/kreplay/internal/cudnn"
	"github.com/kreplay/kreplay/internal/dl/dltest"
)

// versionHeader finds cuDNN's version header: cudnn_version.h (or
// Debian's cudnn_version_v9.h and _v8.h) under $CUDNN_HOME, the CUDA
// toolkit and the system's include directories.
func versionHeader() (dir, name string) {
	return dltest.FindLibraryHeader("CUDNN_HOME", "cudnn_version.h", "cudnn_version_v9.h", "cudnn_version_v8.h")
}

// TestHeaderVersion compiles a probe against the installed
// cudnn_version.h and checks that VersionString decodes its CUDNN_VERSION
// into its CUDNN_MAJOR, CUDNN_MINOR and CUDNN_PATCHLEVEL. It skips where
// cuDNN's headers are not installed.
func TestHeaderVersion(t *testing.T) {
	dir, name := versionHeader()
	if dir == "" {
		t.Skip("cudnn_version.h not found (cuDNN's headers are not installed)")
	}
	src := fmt.Sprintf("#include <stdio.h>\n#include \"%s\"\nint main(void) {\n"+
		"  printf(\"CUDNN_VERSION %%lld\\n\", (long long)CUDNN_VERSION);\n"+
		"  printf(\"CUDNN_MAJOR %%lld\\nCUDNN_MINOR %%lld\\nCUDNN_PATCHLEVEL %%lld\\n\", (long long)CUDNN_MAJOR, (long long)CUDNN_MINOR, (long long)CUDNN_PATCHLEVEL);\n"+
		"  return 0;\n}\n", filepath.Join(dir, name))
	out, err := dltest.CompileAndRun(t.TempDir(), src)
	if err != nil {
		t.Fatal(err)
	}
	v, err := dltest.ParseValues(out)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("%d.%d.%d", v["CUDNN_MAJOR"], v["CUDNN_MINOR"], v["CUDNN_PATCHLEVEL"])
	if got := cudnn.VersionString(int(v["CUDNN_VERSION"])); got != want {
		t.Errorf("VersionString(%d) = %s, want %s (%s)", v["CUDNN_VERSION"], got, want, filepath.Join(dir, name))
	}
}

// TestInstalledVersion reads the version of the cuDNN this process loads,
// where there is one (cudnnGetVersion needs no GPU). It skips where cuDNN
// is absent.
func TestInstalledVersion(t *testing.T) {
	code, err := cudnn.Version()
	if err != nil {
		t.Skipf("no cuDNN to load here: %v", err)
	}
	if code < 7000 || cudnn.Path() == "" {
		t.Fatalf("cudnnGetVersion = %d from %q", code, cudnn.Path())
	}
	t.Logf("cuDNN %s (%s)", cudnn.VersionString(code), cudnn.Path())
}
