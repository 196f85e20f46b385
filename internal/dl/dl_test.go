package dl

import (
	"errors"
	"strings"
	"testing"
)

func TestOpenFirst(t *testing.T) {
	errNF := errors.New("lib: not found")
	var tried []string
	name, err := OpenFirst(errNF, []string{"a.so.2", "a.so.1", "a.so"}, func(n string) (string, bool) {
		tried = append(tried, n)
		return "cannot open shared object file", n == "a.so.1"
	})
	if err != nil || name != "a.so.1" || strings.Join(tried, ",") != "a.so.2,a.so.1" {
		t.Errorf("OpenFirst = %q, %v after %v", name, err, tried)
	}
	_, err = OpenFirst(errNF, []string{"b.so.1", "b.so"}, func(n string) (string, bool) {
		return n + ": no such file", false
	})
	if !errors.Is(err, errNF) || !strings.Contains(err.Error(), "b.so.1: no such file; b.so: no such file") ||
		!strings.Contains(err.Error(), "tried b.so.1, b.so") {
		t.Errorf("error %v", err)
	}
}
