package replay

import (
	"testing"
	"time"

	"github.com/kreplay/kreplay/internal/cupti"
)

// The process-wide recorder lock: a recorder that fails to start leaves
// it free, and stopping a recorder twice frees it once, so the next
// recorder starts. A leaked or doubled unlock would hang or panic here.
func TestRecorderLock(t *testing.T) {
	if err := cupti.Load(); err == nil {
		t.Skip("CUPTI loads here: the failing start is not exercised")
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		tm := &measureTiming{}
		for range 2 {
			if _, err := recordKinds(&Device{}, tm, cupti.KindConcurrentKernel); err == nil {
				t.Error("recordKinds without CUPTI: no error")
			}
		}
		cuptiMu.Lock()
		rec := &recorder{d: &Device{}}
		rec.stop()
		rec.stop()
		if !cuptiMu.TryLock() {
			t.Error("the lock is held after stop")
			return
		}
		cuptiMu.Unlock()
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a recorder start waited on a lock nobody holds")
	}
}
