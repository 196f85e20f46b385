package cudnn

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/internal/dl/dltest"
)

// Loading itself is package dl's; this checks what the package gives it.
func TestSymbols(t *testing.T) { dltest.CheckLibrary(t, &lib, "cudnnGetVersion") }

// Where cuDNN is absent (a machine without it, or one where it is only
// inside PyTorch's wheel), Load names every candidate; where it is
// installed, the test skips.
func TestLoadReportsCandidates(t *testing.T) {
	if lib.Env != Env {
		t.Fatalf("the library's environment variable is %q, want %q", lib.Env, Env)
	}
	t.Setenv(Env, "") // the candidates, not an override
	err := dltest.LoadFailure(t, Load, ErrNotFound, func() string {
		v, _ := Version()
		return fmt.Sprintf("cuDNN %s is installed (%s); the failure text cannot be checked here", VersionString(v), Path())
	})
	want := "cudnn: library not found (tried " + strings.Join(Candidates, ", ") + ")"
	if !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Load error %q, want it to begin %q", err, want)
	}
	if Path() != "" {
		t.Errorf("Path() = %q after a failed Load", Path())
	}
	if _, err := Version(); !errors.Is(err, ErrNotFound) {
		t.Errorf("Version without a library: %v", err)
	}
}

// KREPLAY_CUDNN_LIB, set, is the only library tried: a wrong path is an
// error naming it, not a fallback to the candidates.
func TestEnvOverride(t *testing.T) {
	const missing = "/nonexistent/libcudnn.so.9"
	t.Setenv(Env, missing)
	err := dltest.LoadFailure(t, Load, ErrNotFound, func() string {
		return "cuDNN is loaded already (" + Path() + "); the override cannot be checked here"
	})
	if !strings.Contains(err.Error(), "(tried "+missing+")") {
		t.Errorf("Load with %s=%s: %v, want it to try that alone", Env, missing, err)
	}
}

// The two encodings of CUDNN_VERSION: major*10000 + minor*100 + patch from
// cuDNN 9 on, major*1000 + minor*100 + patch before.
func TestVersionString(t *testing.T) {
	for _, tc := range []struct {
		code int
		want string
	}{
		{91002, "9.10.2"}, {90000, "9.0.0"}, {90100, "9.1.0"}, {91600, "9.16.0"},
		{8906, "8.9.6"}, {8100, "8.1.0"}, {7605, "7.6.5"},
	} {
		if got := VersionString(tc.code); got != tc.want {
			t.Errorf("VersionString(%d) = %q, want %q", tc.code, got, tc.want)
		}
	}
}
