package onstack

import (
	"slices"
	"syscall"
	"testing"
)

// A C handler installed without SA_ONSTACK gets the flag and stays the
// handler; the Go runtime's handlers (which have it) and a second Fix are
// left alone.
func TestFix(t *testing.T) {
	sig := int(syscall.SIGUSR2)
	before := Fix() // whatever the test binary's own libraries installed
	if f := flags(int(syscall.SIGURG)); f < 0 || f&onstackFlag == 0 {
		t.Fatalf("the Go runtime's SIGURG handler: flags %#x, want SA_ONSTACK", f)
	}
	if err := installBare(sig); err != nil {
		t.Fatal(err)
	}
	if flags(sig)&onstackFlag != 0 || !slices.Contains(Missing(), sig) {
		t.Fatalf("the bare handler: flags %#x, Missing %v", flags(sig), Missing())
	}
	got := Fix()
	if !slices.Equal(got, []int{sig}) {
		t.Errorf("Fix changed %v, want [%d] (before: %v)", got, sig, before)
	}
	if flags(sig)&onstackFlag == 0 || !isBare(sig) {
		t.Errorf("after Fix: flags %#x, the C handler kept %v; want SA_ONSTACK on the same handler", flags(sig), isBare(sig))
	}
	if again, left := Fix(), Missing(); len(again) != 0 || len(left) != 0 {
		t.Errorf("a second Fix changed %v; missing SA_ONSTACK %v", again, left)
	}
}
