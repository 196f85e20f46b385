package errtest

import (
	"errors"
	"testing"
)

// recorder is a testing.TB that counts the failures it is told of.
type recorder struct {
	testing.TB
	failed int
}

func (r *recorder) Helper()               {}
func (r *recorder) Errorf(string, ...any) { r.failed++ }

func TestCheck(t *testing.T) {
	bad := errors.New("bad input at line 3")
	for _, c := range []struct {
		name     string
		err      error
		want     string
		ok, fail bool
	}{
		{"no error wanted, none", nil, "", true, false},
		{"no error wanted, one", bad, "", false, true},
		{"error wanted, that one", bad, "line 3", false, false},
		{"error wanted, another", bad, "line 4", false, true},
		{"error wanted, none", nil, "line 3", false, true},
	} {
		r := &recorder{TB: t}
		if ok := Check(r, c.name, c.err, c.want); ok != c.ok || (r.failed > 0) != c.fail {
			t.Errorf("%s: Check returned %v and failed %d times; want %v, failing %v", c.name, ok, r.failed, c.ok, c.fail)
		}
	}
}
