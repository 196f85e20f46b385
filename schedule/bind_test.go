package schedule

import "testing"

func TestMemo(t *testing.T) {
	calls := 0
	same := Memo(func(a, b string) bool { calls++; return a == b })
	for _, c := range []struct {
		a, b  string
		want  bool
		calls int // calls of the wrapped function so far
	}{
		{"k", "k", true, 1},
		{"k", "k", true, 1},
		{"k", "j", false, 2},
		{"j", "k", false, 3}, // the pair is ordered: trace name, recorded name
		{"k", "j", false, 3},
	} {
		if got := same(c.a, c.b); got != c.want || calls != c.calls {
			t.Errorf("same(%q, %q) = %v after %d calls, want %v after %d", c.a, c.b, got, calls, c.want, c.calls)
		}
	}
}
