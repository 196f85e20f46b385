package signatures

import (
	"bytes"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// lexer parses one complete JSON value held in memory. It is a small
// recursive-descent parser specialised for trace events: it never builds a
// generic tree, and it skips (while validating) every field it does not use.
type lexer struct {
	b   []byte
	i   int
	buf []byte // scratch for unescaping
}

// maxDepth bounds nesting so hostile input cannot exhaust the stack.
const maxDepth = 64

type lexError struct {
	at  int
	msg string
	eob bool // the value continues past the end of the input held
}

func (e *lexError) Error() string { return fmt.Sprintf("at byte +%d: %s", e.at, e.msg) }

// eob reports that the input ended inside the value.
func (l *lexer) eob() error {
	return &lexError{at: len(l.b), msg: "unexpected end of input", eob: true}
}

// isEOB reports whether err is the lexer's end-of-input error.
func isEOB(err error) bool {
	le, ok := err.(*lexError)
	return ok && le.eob
}

func (l *lexer) errf(format string, args ...any) error {
	return &lexError{at: l.i, msg: fmt.Sprintf(format, args...)}
}

func (l *lexer) ws() {
	for l.i < len(l.b) {
		switch l.b[l.i] {
		case ' ', '\n', '\r', '\t':
			l.i++
		default:
			return
		}
	}
}

// peek returns the next non-space byte, or 0 at the end.
func (l *lexer) peek() byte {
	l.ws()
	if l.i >= len(l.b) {
		return 0
	}
	return l.b[l.i]
}

func (l *lexer) consume(c byte) error {
	if l.peek() != c {
		if l.i >= len(l.b) {
			return l.eob()
		}
		return l.errf("expected %q, found %q", c, l.b[l.i])
	}
	l.i++
	return nil
}

// object calls f for each key of an object; f must consume the value.
func (l *lexer) object(f func(key []byte) error) error {
	if err := l.consume('{'); err != nil {
		return err
	}
	if l.peek() == '}' {
		l.i++
		return nil
	}
	for {
		key, err := l.str()
		if err != nil {
			return err
		}
		if err := l.consume(':'); err != nil {
			return err
		}
		if err := f(key); err != nil {
			return err
		}
		switch l.peek() {
		case ',':
			l.i++
		case '}':
			l.i++
			return nil
		case 0:
			return l.eob()
		default:
			return l.errf("expected ',' or '}' in object")
		}
	}
}

// array calls f for each element of an array; f must consume the element.
func (l *lexer) array(f func() error) error {
	if err := l.consume('['); err != nil {
		return err
	}
	if l.peek() == ']' {
		l.i++
		return nil
	}
	for {
		if err := f(); err != nil {
			return err
		}
		switch l.peek() {
		case ',':
			l.i++
		case ']':
			l.i++
			return nil
		case 0:
			return l.eob()
		default:
			return l.errf("expected ',' or ']' in array")
		}
	}
}

// str parses a string. The result aliases the input when the string has no
// escapes and the scratch buffer otherwise: copy it to keep it.
func (l *lexer) str() ([]byte, error) {
	if err := l.consume('"'); err != nil {
		return nil, err
	}
	start := l.i
	q := bytes.IndexByte(l.b[start:], '"')
	if q < 0 {
		q = len(l.b) - start
	}
	for i, c := range l.b[start : start+q] {
		if c < 0x20 || c == '\\' {
			l.i = start + i
			if c == '\\' {
				return l.unescape(start)
			}
			return nil, l.errf("control character in string")
		}
	}
	l.i = start + q
	if l.i >= len(l.b) {
		return nil, l.eob()
	}
	l.i++
	return l.b[start : l.i-1], nil
}

func (l *lexer) unescape(start int) ([]byte, error) {
	out := append(l.buf[:0], l.b[start:l.i]...)
	for l.i < len(l.b) {
		c := l.b[l.i]
		switch {
		case c == '"':
			l.i++
			l.buf = out
			return out, nil
		case c < 0x20:
			return nil, l.errf("control character in string")
		case c != '\\':
			out = append(out, c)
			l.i++
			continue
		}
		if l.i+1 >= len(l.b) {
			return nil, l.eob()
		}
		e := l.b[l.i+1]
		l.i += 2
		switch e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, err := l.hex4()
			if err != nil {
				return nil, err
			}
			if r >= 0xD800 && r < 0xDC00 && l.i+6 > len(l.b) {
				return nil, l.eob()
			}
			if r >= 0xD800 && r < 0xDC00 && l.b[l.i] == '\\' && l.b[l.i+1] == 'u' {
				l.i += 2
				r2, err := l.hex4()
				if err != nil {
					return nil, err
				}
				r = 0x10000 + (r-0xD800)<<10 + (r2 - 0xDC00)
			}
			if !utf8.ValidRune(r) {
				r = utf8.RuneError
			}
			out = utf8.AppendRune(out, r)
		default:
			return nil, l.errf("bad escape \\%c", e)
		}
	}
	return nil, l.eob()
}

func (l *lexer) hex4() (rune, error) {
	if l.i+4 > len(l.b) {
		return 0, l.eob()
	}
	var r rune
	for _, c := range l.b[l.i : l.i+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, l.errf("bad \\u escape")
		}
	}
	l.i += 4
	return r, nil
}

// number returns the raw bytes of a JSON number after checking its syntax.
func (l *lexer) number() ([]byte, error) {
	l.ws()
	start := l.i
	if l.i < len(l.b) && l.b[l.i] == '-' {
		l.i++
	}
	digits := func() int {
		n := 0
		for l.i < len(l.b) && l.b[l.i] >= '0' && l.b[l.i] <= '9' {
			l.i++
			n++
		}
		return n
	}
	if digits() == 0 {
		if l.i >= len(l.b) {
			return nil, l.eob()
		}
		return nil, l.errf("expected a number")
	}
	if l.i < len(l.b) && l.b[l.i] == '.' {
		l.i++
		if digits() == 0 {
			if l.i >= len(l.b) {
				return nil, l.eob()
			}
			return nil, l.errf("bad number")
		}
	}
	if l.i < len(l.b) && (l.b[l.i] == 'e' || l.b[l.i] == 'E') {
		l.i++
		if l.i < len(l.b) && (l.b[l.i] == '+' || l.b[l.i] == '-') {
			l.i++
		}
		if digits() == 0 {
			if l.i >= len(l.b) {
				return nil, l.eob()
			}
			return nil, l.errf("bad number")
		}
	}
	return l.b[start:l.i], nil
}

// int parses an integer. A JSON number with a zero fraction (3.0) is accepted.
func (l *lexer) int() (int64, error) {
	raw, err := l.number()
	if err != nil {
		return 0, err
	}
	if v, ok := parseInt(raw); ok {
		return v, nil
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || f != float64(int64(f)) || f > 1<<62 || f < -(1<<62) {
		return 0, l.errf("%s: not an integer in range", raw)
	}
	return int64(f), nil
}

// parseInt is a fast path for plain decimal integers.
func parseInt(b []byte) (int64, bool) {
	neg := false
	if len(b) > 0 && b[0] == '-' {
		neg, b = true, b[1:]
	}
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return v, true
}

// micros parses a time in microseconds, as Kineto writes ts and dur, into
// integer nanoseconds without the rounding a float64 would add.
func (l *lexer) micros() (int64, error) {
	raw, err := l.number()
	if err != nil {
		return 0, err
	}
	if v, ok := parseMicros(raw); ok {
		return v, nil
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || f > 9e15 || f < -9e15 {
		return 0, l.errf("%s: time out of range", raw)
	}
	if f >= 0 {
		return int64(f*1000 + 0.5), nil
	}
	return int64(f*1000 - 0.5), nil
}

// parseMicros handles "123", "123.4", "123.456789" (rounded to ns).
func parseMicros(b []byte) (int64, bool) {
	neg := false
	if len(b) > 0 && b[0] == '-' {
		neg, b = true, b[1:]
	}
	var ip int64
	i := 0
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		if i >= 15 {
			return 0, false
		}
		ip = ip*10 + int64(b[i]-'0')
	}
	if i == 0 {
		return 0, false
	}
	ns := ip * 1000
	if i < len(b) {
		if b[i] != '.' {
			return 0, false
		}
		i++
		scale := int64(100)
		var frac int64
		round := false
		for j := 0; i < len(b); i, j = i+1, j+1 {
			c := b[i]
			if c < '0' || c > '9' {
				return 0, false
			}
			switch {
			case j < 3:
				frac += int64(c-'0') * scale
				scale /= 10
			case j == 3:
				round = c >= '5'
			}
		}
		ns += frac
		if round {
			ns++
		}
	}
	if neg {
		ns = -ns
	}
	return ns, true
}

// skip consumes one value of any kind, checking its syntax.
func (l *lexer) skip(depth int) error {
	if depth > maxDepth {
		return l.errf("nesting deeper than %d", maxDepth)
	}
	switch c := l.peek(); c {
	case '{':
		return l.object(func([]byte) error { return l.skip(depth + 1) })
	case '[':
		return l.array(func() error { return l.skip(depth + 1) })
	case '"':
		_, err := l.str()
		return err
	case 't':
		return l.literal("true")
	case 'f':
		return l.literal("false")
	case 'n':
		return l.literal("null")
	case 0:
		return l.eob()
	default:
		_, err := l.number()
		return err
	}
}

func (l *lexer) literal(word string) error {
	l.ws()
	rest := l.b[l.i:]
	if len(rest) < len(word) && string(rest) == word[:len(rest)] {
		return l.eob()
	}
	if len(rest) < len(word) || string(rest[:len(word)]) != word {
		return l.errf("invalid literal")
	}
	l.i += len(word)
	return nil
}

// end checks that nothing but white space follows the value.
func (l *lexer) end() error {
	if l.peek() != 0 {
		return l.errf("unexpected data after value")
	}
	return nil
}

// ints parses an array of integers.
func (l *lexer) ints(dst []int64) ([]int64, error) {
	dst = dst[:0]
	err := l.array(func() error {
		v, err := l.int()
		dst = append(dst, v)
		return err
	})
	return dst, err
}
