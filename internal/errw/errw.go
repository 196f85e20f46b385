// Package errw is an io.Writer that keeps the first error of the writer
// under it, so that a report printed with many Fprintf calls is checked
// once, at its end.
package errw

import (
	"fmt"
	"io"
)

// Writer writes to W until a write fails; after that it writes nothing
// and returns Err, the first error.
type Writer struct {
	W   io.Writer
	Err error
}

// Write implements io.Writer.
func (e *Writer) Write(p []byte) (int, error) {
	if e.Err != nil {
		return 0, e.Err
	}
	n, err := e.W.Write(p)
	e.Err = err
	return n, err
}

// Warnings writes a blank line, then "warning: W" for each of ws; nothing
// when there are none.
func (e *Writer) Warnings(ws []string) {
	if len(ws) == 0 {
		return
	}
	fmt.Fprintln(e)
	for _, w := range ws {
		fmt.Fprintf(e, "warning: %s\n", w)
	}
}
