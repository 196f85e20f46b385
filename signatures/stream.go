package signatures

import (
	"errors"
	"fmt"
	"io"
)

// maxValueBytes bounds one JSON value (one trace event, or one top-level
// field other than traceEvents) held in memory at once.
const maxValueBytes = 256 << 20

// stream is a buffered byte source that hands out whole JSON values as
// slices of its buffer, so that a trace is read one event at a time and the
// decoded tree of the whole file never exists.
type stream struct {
	r    io.Reader
	buf  []byte
	pos  int   // next unread byte in buf
	end  int   // bytes of buf that hold data
	base int64 // stream offset of buf[0]
	err  error // sticky read error, io.EOF at the end
}

func newStream(r io.Reader) *stream {
	return &stream{r: r, buf: make([]byte, 1<<20)}
}

// offset is the stream offset of the next unread byte.
func (s *stream) offset() int64 { return s.base + int64(s.pos) }

// more reads more input, keeping buf[keep:] and moving it to the front.
// It reports whether any byte was added.
func (s *stream) more(keep int) bool {
	if s.err != nil {
		return false
	}
	if keep > 0 {
		n := copy(s.buf, s.buf[keep:s.end])
		s.base += int64(keep)
		s.pos -= keep
		s.end = n
	}
	if s.end == len(s.buf) {
		if len(s.buf) >= maxValueBytes {
			s.err = fmt.Errorf("a JSON value is longer than %d bytes", maxValueBytes)
			return false
		}
		nb := make([]byte, 2*len(s.buf))
		copy(nb, s.buf[:s.end])
		s.buf = nb
	}
	for tries := 0; tries < 100; tries++ {
		n, err := s.r.Read(s.buf[s.end:])
		s.end += n
		if err != nil {
			s.err = err
			return n > 0
		}
		if n > 0 {
			return true
		}
	}
	s.err = io.ErrNoProgress
	return false
}

// readErr turns the sticky error into the error for an unexpected end.
func (s *stream) readErr() error {
	if s.err == nil || errors.Is(s.err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return s.err
}

// peek skips white space and returns the next byte without consuming it.
func (s *stream) peek() (byte, error) {
	for {
		for s.pos < s.end {
			c := s.buf[s.pos]
			if c != ' ' && c != '\n' && c != '\r' && c != '\t' {
				return c, nil
			}
			s.pos++
		}
		if !s.more(s.pos) {
			if errors.Is(s.err, io.EOF) {
				return 0, io.EOF
			}
			return 0, s.readErr()
		}
	}
}

// expect consumes byte c after white space.
func (s *stream) expect(c byte) error {
	got, err := s.peek()
	if err != nil {
		if err == io.EOF {
			return io.ErrUnexpectedEOF
		}
		return err
	}
	if got != c {
		return fmt.Errorf("expected %q, found %q", c, got)
	}
	s.pos++
	return nil
}

// value returns the next JSON value as a slice of the buffer, valid until
// the next call. It finds the value's extent only; parsing validates it.
func (s *stream) value() ([]byte, error) {
	if _, err := s.peek(); err != nil {
		if err == io.EOF {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	start := s.pos
	i := start
	depth := 0
	inString, escaped := false, false
	first := s.buf[start]
	scalar := first != '{' && first != '['
	for {
		for i < s.end {
			c := s.buf[i]
			switch {
			case inString:
				switch {
				case escaped:
					escaped = false
				case c == '\\':
					escaped = true
				case c == '"':
					inString = false
					if scalar && depth == 0 {
						s.pos = i + 1
						return s.buf[start:s.pos], nil
					}
				}
			case c == '"':
				inString = true
			case scalar:
				if c == ',' || c == '}' || c == ']' || c == ' ' || c == '\n' || c == '\r' || c == '\t' {
					s.pos = i
					return s.buf[start:i], nil
				}
			case c == '{' || c == '[':
				depth++
			case c == '}' || c == ']':
				depth--
				if depth == 0 {
					s.pos = i + 1
					return s.buf[start:s.pos], nil
				}
			}
			i++
		}
		off := i - start
		s.pos = start
		ok := s.more(start)
		start = s.pos
		i = start + off
		if !ok {
			if scalar && !inString && errors.Is(s.err, io.EOF) && s.end > start {
				s.pos = s.end
				return s.buf[start:s.end], nil
			}
			return nil, s.readErr()
		}
	}
}

// parse runs f on the buffered input from the next unread byte. f parses
// one value and returns the bytes it used; when f reports that the input
// ended inside the value (a lexer end-of-input error), more is read and f
// runs again from the same start. This parses in place, with no separate
// pass to find the value's extent.
func (s *stream) parse(f func(b []byte) (int, error)) error {
	for {
		n, err := f(s.buf[s.pos:s.end])
		if err == nil {
			s.pos += n
			return nil
		}
		if !isEOB(err) {
			return err
		}
		if !s.more(s.pos) {
			return s.readErr()
		}
	}
}
