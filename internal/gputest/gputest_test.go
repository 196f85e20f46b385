package gputest

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// fakeTB records Skip/Fatal calls. Like the real ones, Skipf and Fatalf
// end the goroutine, so fakeTB is driven from its own goroutine.
type fakeTB struct {
	testing.TB
	skipped, failed string
}

func (f *fakeTB) Helper() {}
func (f *fakeTB) Skipf(format string, args ...any) {
	f.skipped = fmt.Sprintf(format, args...)
	runtime.Goexit()
}
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.failed = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// run calls Require on a fakeTB and reports what happened and whether
// Require returned normally.
func run(check func() error) (f *fakeTB, returned bool) {
	f = &fakeTB{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Require(f, check)
		returned = true
	}()
	<-done
	return f, returned
}

func TestRequire(t *testing.T) {
	errNoGPU := errors.New("no libcuda.so.1 here")
	tests := []struct {
		name         string
		env          string
		check        func() error
		wantReturned bool
		wantSkip     bool
		wantFail     bool
	}{
		{"ok, not required", "", func() error { return nil }, true, false, false},
		{"ok, required", "1", func() error { return nil }, true, false, false},
		{"missing, not required", "", func() error { return errNoGPU }, false, true, false},
		{"missing, env 0", "0", func() error { return errNoGPU }, false, true, false},
		{"missing, required", "1", func() error { return errNoGPU }, false, false, true},
		{"missing, required true", "true", func() error { return errNoGPU }, false, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(Env, tt.env)
			f, returned := run(tt.check)
			if returned != tt.wantReturned {
				t.Errorf("returned = %v, want %v", returned, tt.wantReturned)
			}
			if (f.skipped != "") != tt.wantSkip {
				t.Errorf("skipped = %q, want skip %v", f.skipped, tt.wantSkip)
			}
			if (f.failed != "") != tt.wantFail {
				t.Errorf("failed = %q, want fail %v", f.failed, tt.wantFail)
			}
			msg := f.skipped + f.failed
			if msg != "" && !strings.Contains(msg, "libcuda.so.1") {
				t.Errorf("message %q does not carry the check's error", msg)
			}
			if msg != "" && !strings.Contains(msg, Env) {
				t.Errorf("message %q does not name %s", msg, Env)
			}
		})
	}
}

// fakeParent runs subtests on real *testing.T values of the enclosing
// test and records the parent's failure and cleanups.
type fakeParent struct {
	t        *testing.T
	failed   string
	cleanups []func()
}

func (p *fakeParent) Helper()                           {}
func (p *fakeParent) Cleanup(f func())                  { p.cleanups = append(p.cleanups, f) }
func (p *fakeParent) Errorf(format string, args ...any) { p.failed = fmt.Sprintf(format, args...) }
func (p *fakeParent) Run(name string, f func(*testing.T)) bool {
	return p.t.Run(name, f)
}

// Under KREPLAY_REQUIRE_GPU=1 a test whose subtests all skipped fails; one
// that ran a subtest, or runs without the variable, does not.
func TestSubtests(t *testing.T) {
	for _, tc := range []struct {
		env   string
		skips []bool
		fails bool
	}{
		{"1", []bool{true, true}, true},
		{"1", []bool{true, false}, false},
		{"", []bool{true, true}, false},
		{"1", nil, false},
	} {
		t.Setenv(Env, tc.env)
		p := &fakeParent{t: t}
		s := NewSubtests(p)
		for i, skip := range tc.skips {
			s.Run(fmt.Sprint(i), func(t *testing.T) {
				if skip {
					t.Skip("no GPU here")
				}
			})
		}
		for _, c := range p.cleanups {
			c()
		}
		if (p.failed != "") != tc.fails || tc.fails && !strings.Contains(p.failed, "all 2 subtests skipped") {
			t.Errorf("env %q, skips %v: failure %q", tc.env, tc.skips, p.failed)
		}
	}
}

// Skipf skips with the reason, or fails with it under Required(); it
// never returns.
func TestSkipf(t *testing.T) {
	for _, tt := range []struct {
		env                string
		wantSkip, wantFail bool
	}{{"", true, false}, {"0", true, false}, {"1", false, true}, {"yes", false, true}} {
		t.Run("env="+tt.env, func(t *testing.T) {
			t.Setenv(Env, tt.env)
			f, returned := &fakeTB{}, false
			done := make(chan struct{})
			go func() {
				defer close(done)
				Skipf(f, "no NVML: %v", "nvmlInit failed")
				returned = true
			}()
			<-done
			if returned || (f.skipped != "") != tt.wantSkip || (f.failed != "") != tt.wantFail {
				t.Fatalf("returned %v, skipped %q, failed %q", returned, f.skipped, f.failed)
			}
			if msg := f.skipped + f.failed; !strings.Contains(msg, "no NVML: nvmlInit failed") || !strings.Contains(msg, Env) {
				t.Errorf("message %q", msg)
			}
		})
	}
}
