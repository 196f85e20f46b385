package errw

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
)

// failAfter fails every write after its first n bytes.
type failAfter struct {
	n   int
	buf bytes.Buffer
}

var errFull = errors.New("full")

func (f *failAfter) Write(p []byte) (int, error) {
	if f.buf.Len()+len(p) > f.n {
		return 0, errFull
	}
	return f.buf.Write(p)
}

// The first error sticks: later writes write nothing and return it.
func TestWriter(t *testing.T) {
	f := &failAfter{n: 8}
	w := &Writer{W: f}
	fmt.Fprint(w, "12345")
	fmt.Fprint(w, "6789")
	fmt.Fprint(w, "a")
	if !errors.Is(w.Err, errFull) || f.buf.String() != "12345" {
		t.Errorf("err %v, wrote %q", w.Err, f.buf.String())
	}
	if n, err := w.Write([]byte("x")); n != 0 || !errors.Is(err, errFull) {
		t.Errorf("after the error: %d, %v", n, err)
	}
}

// Warnings writes a blank line and one line a warning, nothing for none.
func TestWarnings(t *testing.T) {
	var b bytes.Buffer
	w := &Writer{W: &b}
	w.Warnings(nil)
	w.Warnings([]string{"a", "b"})
	if got := b.String(); got != "\nwarning: a\nwarning: b\n" || w.Err != nil {
		t.Errorf("%q, %v", got, w.Err)
	}
}
