package kname

import (
	"slices"
	"strings"

	"github.com/ianlancetaylor/demangle"
)

// kernelName is what BaseName and SameKernel compare.
type kernelName struct {
	base     string   // qualified function name without template arguments
	targToks []string // identifiers and numbers of the template arguments
	hasTargs bool     // the name has template arguments
	ok       bool     // targToks is trustworthy (the name parsed fully)
}

// BaseName returns the qualified function name of a kernel name, without
// return type, template arguments or parameters. It accepts
// Itanium-mangled names as CUPTI reports them
// ("_ZN8internal5gemvx6kernelIiiEEvT_" -> "internal::gemvx::kernel") and
// demangled names as PyTorch traces show them
// ("void at::native::vectorized_gather_kernel<16, long>(char*, ...)" ->
// "at::native::vectorized_gather_kernel"); C names such as
// "nvjet_sm90_hsh_192x128_64x5_1x2_h_bz_coopB_bias_TNT" come back
// unchanged. Anonymous namespaces read "(anonymous namespace)" in both
// forms. A name it cannot parse is returned trimmed but otherwise as is.
func BaseName(name string) string { return analyze(name).base }

// SameKernel reports whether a traced kernel name and a replayed one
// denote the same kernel. Either may be mangled or demangled. The base
// names (see BaseName) must be equal; when both names carry template
// arguments and both parse, the identifiers and integer literals of the
// template arguments must also be equal in order, so that for example
// cutlass::Kernel2<cutlass_80_simt_sgemm_128x32_8x5_nn_align1> and
// cutlass::Kernel2<cutlass_80_simt_sgemm_64x64_8x5_nn_align1> differ.
// Keywords and built-in types (int, float, const, ...) are not compared,
// since the mangled form does not spell them.
func SameKernel(traced, replayed string) bool {
	a, b := analyze(traced), analyze(replayed)
	if a.base != b.base {
		return false
	}
	if a.hasTargs && b.hasTargs && a.ok && b.ok {
		return slices.Equal(a.targToks, b.targToks)
	}
	return true
}

func analyze(name string) kernelName {
	s := strings.TrimSpace(name)
	if strings.HasPrefix(s, "__Z") { // Mach-O style extra underscore
		s = s[1:]
	}
	if strings.HasPrefix(s, "_Z") {
		d, err := demangleName(s)
		if err != nil {
			return kernelName{base: s}
		}
		return parseDemangled(d)
	}
	return parseDemangled(s)
}

// demangleName demangles an Itanium-mangled name with pprof's demangler
// into the text c++filt prints, which parseDemangled reads as it reads a
// trace's names (the parameters are kept: without them an operator's
// own "()" would read as the parameter list). Clone suffixes are dropped,
// only C++ manglings are accepted, and the text is bounded to 1 MiB.
func demangleName(s string) (string, error) {
	return demangle.ToString(s, demangle.NoClones, demangle.NoRust, demangle.MaxLength(20))
}

// ---- demangled text ----

// scanner tracks bracket depth over demangled text. Operator names
// ("operator<", "operator()", "operator->") are skipped as units so
// their symbols do not count as brackets.
type span struct{ open, close int }

// skipOperator returns the index just past an operator name starting at
// i (which points at "operator"), or i if there is none.
func skipOperator(s string, i int) int {
	const kw = "operator"
	if !strings.HasPrefix(s[i:], kw) {
		return i
	}
	if i > 0 && isIdentByte(s[i-1]) {
		return i
	}
	j := i + len(kw)
	if j < len(s) && isIdentByte(s[j]) {
		return i // an identifier such as "operators"
	}
	for _, sym := range []string{"<=>", "<<=", ">>=", "->*", "()", "[]", "<<", ">>", "<=", ">=", "->", "<", ">"} {
		if strings.HasPrefix(s[j:], sym) {
			return j + len(sym)
		}
	}
	return j
}

func isIdentByte(c byte) bool {
	return c == '_' || c == '$' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

// topLevel calls visit for every byte of s that is outside all brackets
// (depth 0), and reports whether the brackets balance.
func topLevel(s string, visit func(i int)) bool {
	var stack []byte
	for i := 0; i < len(s); i++ {
		if j := skipOperator(s, i); j > i {
			if len(stack) == 0 {
				for k := i; k < j; k++ {
					visit(k)
				}
			}
			i = j - 1
			continue
		}
		c := s[i]
		switch c {
		case '<', '(', '[', '{':
			if c == '<' && len(stack) > 0 && stack[len(stack)-1] == '(' {
				// a comparison inside parentheses, e.g. "(a<b)"; not a bracket
				break
			}
			if len(stack) == 0 {
				visit(i)
			}
			stack = append(stack, c)
			continue
		case '>', ')', ']', '}':
			if c == '>' && i > 0 && s[i-1] == '-' {
				break // "->"
			}
			if c == '>' && len(stack) > 0 && stack[len(stack)-1] == '(' {
				break
			}
			if len(stack) == 0 || stack[len(stack)-1] != map[byte]byte{'>': '<', ')': '(', ']': '[', '}': '{'}[c] {
				return false
			}
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				visit(i)
			}
			continue
		}
		if len(stack) == 0 {
			visit(i)
		}
	}
	return len(stack) == 0
}

// groups returns the top-level bracket groups of s opening with open.
func groups(s string, open, close byte) ([]span, bool) {
	var out []span
	start := -1
	ok := topLevel(s, func(i int) {
		switch s[i] {
		case open:
			start = i
		case close:
			if start >= 0 {
				out = append(out, span{start, i})
				start = -1
			}
		}
	})
	return out, ok
}

func parseDemangled(s string) kernelName {
	fallback := kernelName{base: s}
	if s == "" {
		return fallback
	}
	// Drop clone suffixes such as " [clone .cold]".
	if i := strings.Index(s, " [clone "); i > 0 && strings.HasSuffix(s, "]") {
		s = s[:i]
	}
	parens, ok := groups(s, '(', ')')
	if !ok {
		return fallback
	}
	// The parameter list is the last top-level "(...)" directly after the
	// name, followed by nothing but qualifiers.
	name := s
	for k := len(parens) - 1; k >= 0; k-- {
		g := parens[k]
		if g.open == 0 || !(isIdentByte(s[g.open-1]) || s[g.open-1] == '>' || s[g.open-1] == ']' || s[g.open-1] == '}' || s[g.open-1] == ')') {
			continue
		}
		if s[g.open-1] == ')' && !strings.HasSuffix(s[:g.open], "operator()") {
			continue
		}
		if !onlyQualifiers(s[g.close+1:]) {
			continue
		}
		name = s[:g.open]
		break
	}
	// Drop the return type: keep the last top-level space-separated word,
	// joining "operator new" and friends.
	var spaces []int
	if !topLevel(name, func(i int) {
		if name[i] == ' ' {
			spaces = append(spaces, i)
		}
	}) {
		return fallback
	}
	for k := len(spaces) - 1; k >= 0; k-- {
		before := strings.TrimRight(name[:spaces[k]], " ")
		if op := strings.LastIndex(before, "operator"); op >= 0 && (op == 0 || !isIdentByte(before[op-1])) &&
			skipOperator(before, op) == len(before) {
			continue // "operator new", "operator< <int>"
		}
		name = name[spaces[k]+1:]
		break
	}
	name = strings.TrimLeft(name, "*&")
	if name == "" {
		return fallback
	}
	// Split into components at top-level "::".
	var cuts []int
	topLevel(name, func(i int) {
		if name[i] == ':' && i+1 < len(name) && name[i+1] == ':' {
			cuts = append(cuts, i)
		}
	})
	var comps []string
	prev := 0
	for _, c := range cuts {
		if c < prev {
			continue // the second ':' of a pair already used
		}
		comps = append(comps, name[prev:c])
		prev = c + 2
	}
	comps = append(comps, name[prev:])
	out := kernelName{ok: true}
	var bases []string
	for _, c := range comps {
		base, targs, has, ok := splitComponent(c)
		if !ok {
			return fallback
		}
		bases = append(bases, base)
		if has {
			out.hasTargs = true
			out.targToks = append(out.targToks, tokenize(targs)...)
		}
	}
	out.base = strings.Join(bases, "::")
	return out
}

func onlyQualifiers(rest string) bool {
	for _, f := range strings.Fields(rest) {
		switch f {
		case "const", "volatile", "&", "&&", "noexcept", "__restrict", "restrict":
		default:
			return false
		}
	}
	return true
}

// splitComponent splits "name<args>(params)" into the base and the
// template argument text.
func splitComponent(c string) (base, targs string, has, ok bool) {
	c = strings.TrimSpace(c)
	if strings.HasPrefix(c, "{lambda(") || strings.HasPrefix(c, "'lambda") {
		return normalizeLambda(c), "", false, true
	}
	start := 0
	if j := skipOperator(c, 0); j > 0 {
		start = j
	}
	angles, ok := groups(c, '<', '>')
	if !ok {
		return "", "", false, false
	}
	cut := len(c)
	for _, g := range angles {
		if g.open >= start {
			cut = g.open
			targs = c[g.open+1 : g.close]
			has = true
			break
		}
	}
	if !has {
		if parens, _ := groups(c, '(', ')'); len(parens) > 0 {
			for _, g := range parens {
				if g.open > 0 && g.open >= start {
					cut = g.open
					break
				}
			}
		}
	}
	base = strings.TrimSpace(c[:cut])
	if base == "" {
		base = c
	}
	return base, targs, has, true
}

// normalizeLambda turns "{lambda(int)#2}" and "'lambda0'(int)" into
// "{lambda#2}", the form the mangled parser produces.
func normalizeLambda(c string) string {
	if strings.HasPrefix(c, "{lambda(") {
		if i := strings.LastIndex(c, "#"); i > 0 && strings.HasSuffix(c, "}") {
			return "{lambda" + c[i:]
		}
		return "{lambda#1}"
	}
	// LLVM style: 'lambda'(...) is #1, 'lambdaN'(...) is #N+2.
	rest := strings.TrimPrefix(c, "'lambda")
	end := strings.IndexByte(rest, '\'')
	if end <= 0 {
		return "{lambda#1}"
	}
	n := normalizeNumber(rest[:end])
	v := 0
	for _, ch := range n {
		if ch < '0' || ch > '9' || v > 1e6 {
			return "{lambda#1}"
		}
		v = v*10 + int(ch-'0')
	}
	return "{lambda#" + itoa(v+2) + "}"
}

func itoa(v int) string {
	if v == 0 {
		return "0"
	}
	var b []byte
	for v > 0 {
		b = append([]byte{byte('0' + v%10)}, b...)
		v /= 10
	}
	return string(b)
}

// skipWords are keywords and built-in type names a demangler prints but
// mangled names encode without identifiers.
var skipWords = map[string]bool{
	"void": true, "bool": true, "char": true, "signed": true, "unsigned": true, "short": true,
	"int": true, "long": true, "float": true, "double": true, "wchar_t": true, "char8_t": true,
	"char16_t": true, "char32_t": true, "__int128": true, "__float128": true, "_Float16": true,
	"_Float32": true, "_Float64": true, "_Float128": true, "_Float32x": true, "_Float64x": true,
	"__bf16": true, "half": true, "decltype": true, "nullptr": true, "auto": true, "const": true,
	"volatile": true, "restrict": true, "__restrict": true, "typename": true, "template": true,
	"sizeof": true, "alignof": true, "noexcept": true, "throw": true, "operator": true,
	"new": true, "delete": true, "static_cast": true, "dynamic_cast": true,
	"reinterpret_cast": true, "const_cast": true, "typeid": true, "anonymous": true,
	"namespace": true, "__vector": true, "_BitInt": true, "unsigned_BitInt": true,
}

// tokenize lists the identifiers and integer literals of demangled text,
// in order, skipping keywords, built-in types, lambda and unnamed-type
// markers with their "#N" discriminators, and "auto:N" placeholders.
func tokenize(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '{':
			// {lambda(params)#N}, {unnamed type#N}, {parm#N}, {default arg#N}
			end := matchBrace(s, i)
			if end < 0 {
				i++
				continue
			}
			inner := s[i+1 : end]
			if strings.HasPrefix(inner, "lambda(") {
				if close := strings.LastIndex(inner, ")"); close > len("lambda(") {
					out = append(out, tokenize(inner[len("lambda("):close])...)
				}
			} else if !strings.HasPrefix(inner, "unnamed type") && !strings.HasPrefix(inner, "parm#") &&
				!strings.HasPrefix(inner, "default arg") {
				out = append(out, tokenize(inner)...)
			}
			i = end + 1
		case c == '#':
			i++
			for i < len(s) && s[i] >= '0' && s[i] <= '9' {
				i++
			}
		case c == '[' && strings.HasPrefix(s[i:], "[abi:"):
			i += len("[abi:")
		case c == '\'' && strings.HasPrefix(s[i:], "'lambda"):
			i += len("'lambda")
			for i < len(s) && s[i] >= '0' && s[i] <= '9' {
				i++
			}
		case c >= '0' && c <= '9':
			j := i
			for j < len(s) && isIdentByte(s[j]) {
				j++
			}
			out = append(out, normalizeNumber(s[i:j]))
			i = j
		case isIdentByte(c):
			j := i
			for j < len(s) && isIdentByte(s[j]) {
				j++
			}
			w := s[i:j]
			i = j
			if w == "auto" && i < len(s) && s[i] == ':' {
				i++
				for i < len(s) && s[i] >= '0' && s[i] <= '9' {
					i++
				}
				continue
			}
			if !skipWords[w] {
				out = append(out, w)
			}
		default:
			i++
		}
	}
	return out
}

// matchBrace returns the index of the '}' closing the '{' at i, or -1
// if it is unbalanced.
func matchBrace(s string, i int) int {
	depth := 0
	for j := i; j < len(s); j++ {
		switch s[j] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}

// normalizeNumber strips C integer suffixes (u, l, ul, ll, ...) from a
// decimal literal; other text (hex float images) is kept as is.
func normalizeNumber(v string) string {
	end := len(v)
	for end > 0 && strings.IndexByte("uUlL", v[end-1]) >= 0 {
		end--
	}
	if end == 0 {
		return v
	}
	for i := 0; i < end; i++ {
		if v[i] < '0' || v[i] > '9' {
			return v
		}
	}
	d := strings.TrimLeft(v[:end], "0")
	if d == "" {
		d = "0"
	}
	return d
}
