package dltest

import (
	"os"
	"path/filepath"
	"testing"
)

// FindLibraryHeader looks in $rootEnv/include first and takes the first
// name found there; it returns "", "" for a header that is nowhere.
func TestFindLibraryHeader(t *testing.T) {
	root := t.TempDir()
	inc := filepath.Join(root, "include")
	if err := os.MkdirAll(inc, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(inc, "kr_test_v2.h"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KR_TEST_HOME", root)
	if dir, name := FindLibraryHeader("KR_TEST_HOME", "kr_test.h", "kr_test_v2.h"); dir != inc || name != "kr_test_v2.h" {
		t.Errorf("found %q in %q, want kr_test_v2.h in %q", name, dir, inc)
	}
	if dir, name := FindLibraryHeader("KR_TEST_HOME", "kr_no_such_header.h"); dir != "" || name != "" {
		t.Errorf("found %q in %q, want nothing", name, dir)
	}
}
