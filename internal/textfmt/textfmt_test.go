package textfmt

import (
	"testing"
	"unicode/utf8"
)

func TestNS(t *testing.T) {
	for _, tc := range []struct {
		ns   float64
		want string
	}{
		{0, "0.00µs"},
		{1234, "1.23µs"},
		{-999_000, "-999.00µs"},
		{1e6, "1.000ms"},
		{-2.5e6, "-2.500ms"},
		{999.5e6, "999.500ms"},
		{1e9, "1.000s"},
		{-12.3456e9, "-12.346s"},
	} {
		if got := NS(tc.ns); got != tc.want {
			t.Errorf("NS(%g) = %q, want %q", tc.ns, got, tc.want)
		}
	}
}

func TestOneLine(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"two\nlines\tand a tab", 40, "two lines and a tab"},
		{"a long line of text", 10, "a long..."},
		{"µµµµµµ", 8, "µµ..."}, // cut on a rune boundary
		{"bad \xff byte", 20, "bad   byte"},
	} {
		got := OneLine(tc.s, tc.n)
		if got != tc.want {
			t.Errorf("OneLine(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
		if len(got) > tc.n || !utf8.ValidString(got) {
			t.Errorf("OneLine(%q, %d) = %q: longer than %d or not UTF-8", tc.s, tc.n, got, tc.n)
		}
	}
}

func FuzzOneLine(f *testing.F) {
	f.Add("a\nb", 5)
	f.Add("µµµµ", 4)
	f.Fuzz(func(t *testing.T, s string, n int) {
		if n < 4 || n > 1000 {
			return
		}
		got := OneLine(s, n)
		if len(got) > n {
			t.Errorf("OneLine(%q, %d) = %q: %d bytes", s, n, got, len(got))
		}
		for _, r := range got {
			if r < 0x20 || r == 0x7f {
				t.Errorf("OneLine(%q, %d) = %q keeps a control character", s, n, got)
			}
		}
	})
}
