package workload

import (
	"regexp"
	"strings"
	"testing"
)

// Elapsed prefixes whole lines only, however the writes split them.
func TestElapsed(t *testing.T) {
	var b strings.Builder
	w := Elapsed(&b)
	for _, s := range []string{"capture: load", "ing\ncapture: warm", "ing up\n", "tail"} {
		w.Write([]byte(s))
	}
	re := regexp.MustCompile(`^\[ +\d+\.\ds\] capture: loading\n\[ +\d+\.\ds\] capture: warming up\n$`)
	if !re.MatchString(b.String()) {
		t.Errorf("got %q", b.String())
	}
}
