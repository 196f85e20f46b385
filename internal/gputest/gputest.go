// Package gputest decides what tests that need a GPU do on a machine
// without one.
//
// By default such a test is skipped, with the reason, so that `go test
// ./...` passes on any machine. On a GPU machine set KREPLAY_REQUIRE_GPU=1:
// then a missing driver, library or device fails the test instead, so a
// broken setup cannot pass as a row of skips.
//
// The package does not import the CUDA bindings; callers pass the check,
// e.g. gputest.Require(t, cuda.Init).
package gputest

import (
	"fmt"
	"os"
	"sync/atomic"
	"testing"
)

// Env is the environment variable that turns skips into failures when set
// to "1" (or "true").
const Env = "KREPLAY_REQUIRE_GPU"

// Required reports whether Env asks for GPU tests to fail rather than skip.
func Required() bool {
	switch os.Getenv(Env) {
	case "1", "true", "TRUE", "True", "yes":
		return true
	}
	return false
}

// Require runs check, which should return nil when the GPU resource the
// test needs is usable (for example cuda.Init, or a closure that also
// checks the device count). If check fails, the test is skipped with the
// error as the reason, or fails with it when Required() is true. Either
// way Require does not return after a failed check.
func Require(t testing.TB, check func() error) {
	t.Helper()
	err := check()
	if err == nil {
		return
	}
	Skipf(t, "%v", err)
}

// Skipf skips t because a GPU resource it needs (a device, the driver,
// NVML, CUPTI, NVRTC) is missing or unusable, with the formatted reason;
// when Required() is true it fails t with it instead. Use it where the
// check is not a func() error for Require; a test that does not apply to
// the GPU at hand (too few GPUs, an older architecture) calls t.Skip.
func Skipf(t testing.TB, format string, args ...any) {
	t.Helper()
	why := fmt.Sprintf(format, args...)
	if Required() {
		t.Fatalf("GPU required (%s=%s) but not usable: %s", Env, os.Getenv(Env), why)
	}
	t.Skipf("skipping, GPU not usable (set %s=1 to fail instead): %s", Env, why)
}

// parent is what Subtests needs of the test whose subtests it counts.
type parent interface {
	Helper()
	Run(name string, f func(*testing.T)) bool
	Cleanup(func())
	Errorf(format string, args ...any)
}

// Subtests counts a test's subtests that ran (did not skip): under
// Required(), a test whose subtests all skipped fails when it ends, so
// that a GPU suite cannot pass as a row of skips. Run its subtests
// through Run.
type Subtests struct {
	t          parent
	ran, total atomic.Int64
}

// NewSubtests starts counting t's subtests.
func NewSubtests(t parent) *Subtests {
	s := &Subtests{t: t}
	t.Cleanup(func() {
		if Required() && s.total.Load() > 0 && s.ran.Load() == 0 {
			t.Errorf("all %d subtests skipped, and %s=%s asks for GPU tests that run", s.total.Load(), Env, os.Getenv(Env))
		}
	})
	return s
}

// Run runs f as the subtest name (testing.T.Run), counting it as run
// unless it skipped.
func (s *Subtests) Run(name string, f func(t *testing.T)) bool {
	s.t.Helper()
	s.total.Add(1)
	return s.t.Run(name, func(t *testing.T) {
		defer func() {
			if !t.Skipped() {
				s.ran.Add(1)
			}
		}()
		f(t)
	})
}
