// Package textfmt formats numbers and strings as kreplay's text reports
// print them.
package textfmt

import (
	"fmt"
	"strings"
	"time"
	"unicode"
)

// NS formats a duration in nanoseconds as reports print it: seconds,
// milliseconds or microseconds, with three or two decimals.
func NS(ns float64) string {
	d := time.Duration(ns)
	switch {
	case d >= time.Second || d <= -time.Second:
		return fmt.Sprintf("%.3fs", d.Seconds())
	case d >= time.Millisecond || d <= -time.Millisecond:
		return fmt.Sprintf("%.3fms", ns/1e6)
	default:
		return fmt.Sprintf("%.2fµs", ns/1e3)
	}
}

// OneLine makes s safe for a line comment or a table cell: control
// characters become spaces, and a longer s is cut to at most n bytes on a
// rune boundary, ending in "...".
func OneLine(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == unicode.ReplacementChar {
			return ' '
		}
		return r
	}, s)
	if len(s) <= n {
		return s
	}
	cut := n - 3
	for cut > 0 && !utf8RuneStart(s[cut]) {
		cut--
	}
	return strings.TrimSpace(s[:cut]) + "..."
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
