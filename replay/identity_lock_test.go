package replay

import (
	"testing"
	"time"

	"github.com/kreplay/kreplay/internal/cupti"
)

// within fails t when f does not return within d (a recorder lock left
// held would make it wait for ever).
func within(t *testing.T, d time.Duration, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatal("waited on a recorder lock nobody should hold")
	}
}

// Stopping a recorder twice frees the process's recorder lock once: the
// next recorder can start, and no unlock of an unlocked mutex follows.
func TestRecorderStopTwice(t *testing.T) {
	within(t, 10*time.Second, func() {
		cuptiMu.Lock()
		rec := &recorder{d: &Device{}}
		rec.stop()
		rec.stop()
		if !cuptiMu.TryLock() {
			t.Error("the lock is held after stop")
			return
		}
		cuptiMu.Unlock()
	})
}

// A recorder that fails to start (no CUPTI here) leaves the lock free.
func TestRecorderFailedStart(t *testing.T) {
	if err := cupti.Load(); err == nil {
		t.Skip("CUPTI loads here: the failing start is not exercised")
	}
	within(t, 10*time.Second, func() {
		tm := &measureTiming{}
		for range 2 {
			if _, err := recordKinds(&Device{}, tm, cupti.KindConcurrentKernel); err == nil {
				t.Error("recordKinds without CUPTI: no error")
			}
		}
	})
}

// miscounted tells the kernel-time error of records that do not divide
// into the invocations from the others.
func TestMiscounted(t *testing.T) {
	k := &kernelTimes{batch: 5}
	err := k.add(nil, 3)
	if err == nil || !miscounted(err.Error()) {
		t.Errorf("no records for 15 invocations: %v", err)
	}
	if miscounted("cupti: library not available") || miscounted("") {
		t.Error("another kernel error taken for a miscount")
	}
}
