// Package errtest checks errors against what a test case wants.
package errtest

import (
	"strings"
	"testing"
)

// Check fails the test, naming the case what, unless err is as the case
// wants: nil for want "", else an error whose message contains want. It
// returns whether err is nil and want is "": the case's result is then
// worth comparing.
func Check(t testing.TB, what string, err error, want string) bool {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Errorf("%s: %v", what, err)
	case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
		t.Errorf("%s: error %v, want %q", what, err, want)
	}
	return want == "" && err == nil
}
