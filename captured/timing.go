package captured

import "time"

// Timing is the host time New spends on a kernel and its producers, by
// kind of work, each moment charged to one kind (the innermost). A nil
// *Timing times nothing; the zero Timing is ready.
type Timing struct {
	// Files is reading and decoding the bundle's files: module images and
	// snapshots (gunzip), and the data made of a sampled snapshot. What a
	// Prefetch left in Options.Snapshots is not read again, and what
	// Prefetch reads is not timed: a replay that prefetches the next
	// signature's files while measuring one charges here only what the
	// prefetch left.
	Files time.Duration
	// Modules is loading module images into the context and finding and
	// checking their functions.
	Modules time.Duration
	// Memory is allocating buffers and writing them: zeros, snapshots
	// (uploads and device copies), inner pointers, parameter blocks.
	Memory time.Duration
	// Launches is the kernels' first launches, which find the spans to
	// restore (or which of several modules launches), and reading back
	// what they changed.
	Launches time.Duration
	// Kernels counts the kernels made, producers included.
	Kernels int
	cur     workKind
	since   time.Time
	clock   func() time.Time // time.Now when nil (tests set it)
}

// workKind is what a Timing charges the time to.
type workKind int

const (
	untimed workKind = iota
	workFiles
	workModules
	workMemory
	workLaunches
)

// enter charges the time since the last enter to the kind then current,
// makes w current and returns the kind it replaces: `defer t.enter(t.enter(w))`
// charges a function's time to w, but for what it enters itself.
func (t *Timing) enter(w workKind) workKind {
	if t == nil {
		return untimed
	}
	now := time.Now()
	if t.clock != nil {
		now = t.clock()
	}
	if d := now.Sub(t.since); !t.since.IsZero() {
		switch t.cur {
		case workFiles:
			t.Files += d
		case workModules:
			t.Modules += d
		case workMemory:
			t.Memory += d
		case workLaunches:
			t.Launches += d
		}
	}
	prev := t.cur
	t.cur, t.since = w, now
	return prev
}

// Total is the time charged to the kinds.
func (t *Timing) Total() time.Duration {
	if t == nil {
		return 0
	}
	return t.Files + t.Modules + t.Memory + t.Launches
}
