package workload

import (
	"bytes"
	"fmt"
	"io"
	"sync"
	"time"
)

// Elapsed returns a writer that writes each line to w behind the time
// since the call, "[  12.3s] ", so that progress lines say where a long
// capture spends its time. Partial lines wait for their newline.
func Elapsed(w io.Writer) io.Writer {
	return &elapsed{w: w, start: time.Now()}
}

type elapsed struct {
	mu    sync.Mutex
	w     io.Writer
	start time.Time
	buf   []byte
}

func (e *elapsed) Write(p []byte) (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.buf = append(e.buf, p...)
	for {
		i := bytes.IndexByte(e.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		_, err := fmt.Fprintf(e.w, "[%6.1fs] %s", time.Since(e.start).Seconds(), e.buf[:i+1])
		e.buf = e.buf[i+1:]
		if err != nil {
			return len(p), err
		}
	}
}
