package captured

import (
	"testing"
	"time"
)

// Each moment is charged to the innermost kind entered, and nothing
// before the first enter or outside every kind.
func TestTimingEnter(t *testing.T) {
	now := time.Unix(0, 0)
	tick := func(d time.Duration) { now = now.Add(d) }
	tm := &Timing{clock: func() time.Time { return now }}
	tick(time.Hour) // before anything: untimed
	func() {
		defer tm.enter(tm.enter(workMemory))
		tick(1 * time.Millisecond)
		func() {
			defer tm.enter(tm.enter(workFiles))
			tick(10 * time.Millisecond)
		}()
		tick(2 * time.Millisecond)
		prev := tm.enter(workLaunches)
		tick(100 * time.Millisecond)
		tm.enter(prev)
		tick(3 * time.Millisecond)
	}()
	tick(time.Second) // outside: untimed
	func() {
		defer tm.enter(tm.enter(workModules))
		tick(1000 * time.Millisecond)
	}()
	want := [4]time.Duration{10 * time.Millisecond, time.Second, 6 * time.Millisecond, 100 * time.Millisecond}
	got := [4]time.Duration{tm.Files, tm.Modules, tm.Memory, tm.Launches}
	if got != want {
		t.Errorf("files, modules, memory, launches: got %v, want %v", got, want)
	}
	if tm.Total() != 1116*time.Millisecond {
		t.Errorf("total %v", tm.Total())
	}
	var none *Timing
	if w := none.enter(workFiles); w != untimed || none.Total() != 0 {
		t.Errorf("nil Timing: %v, %v", w, none.Total())
	}
}
