package cupti

import (
	"strconv"
	"strings"
)

// This file parses the subset of the Itanium C++ ABI name mangling that
// GPU kernel names use, far enough to answer two questions: what is the
// function's qualified name, and which identifiers and numbers appear in
// its template arguments, in the order a demangler prints them (with
// substitutions and template parameters expanded). It does not render
// full demangled text. Unsupported constructs make the parse fail; the
// callers then fall back to weaker comparisons. Recursion depth and the
// number of tokens produced are bounded, so hostile input cannot make it
// run away.

const (
	maxParseDepth = 200
	maxTokens     = 1 << 14
)

// mnode is what the parser knows about one parsed entity.
type mnode struct {
	comps    []string // qualified name components, template arguments stripped
	toks     []string // identifier/number tokens as a demangler prints them
	targToks []string // tokens of the template arguments of the name only
	targs    []*mnode // the last template argument list, for T_ lookups
	hasTargs bool     // the name carries template arguments
	ret      []string // function types: return-type tokens
	params   []string // function types: parameter tokens
	isFunc   bool     // a function type (F...E)
	ctorDtor bool     // name ends in a constructor or destructor
	nameToks []string // encodings: the tokens of the name alone
}

type parseError struct{}

type mparser struct {
	s        string
	i        int
	depth    int
	ntoks    int
	subs     []*mnode
	tmpl     []*mnode
	inLambda int
}

func (p *mparser) fail() { panic(parseError{}) }

func (p *mparser) peek() byte {
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func (p *mparser) peekAt(k int) byte {
	if p.i+k < len(p.s) {
		return p.s[p.i+k]
	}
	return 0
}

func (p *mparser) next() byte {
	c := p.peek()
	if c == 0 {
		p.fail()
	}
	p.i++
	return c
}

func (p *mparser) expect(c byte) {
	if p.next() != c {
		p.fail()
	}
}

func (p *mparser) enter() {
	p.depth++
	if p.depth > maxParseDepth {
		p.fail()
	}
}

func (p *mparser) leave() { p.depth-- }

// cat concatenates token lists, enforcing the global token budget.
func (p *mparser) cat(lists ...[]string) []string {
	n := 0
	for _, l := range lists {
		n += len(l)
	}
	p.ntoks += n
	if p.ntoks > maxTokens {
		p.fail()
	}
	out := make([]string, 0, n)
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

func (p *mparser) addSub(n *mnode) { p.subs = append(p.subs, n) }

// parseMangled parses an Itanium-mangled function name ("_Z...") and
// returns its name node. Parameters of the top-level function are not
// parsed.
func parseMangled(s string) (n *mnode, ok bool) {
	if !strings.HasPrefix(s, "_Z") {
		return nil, false
	}
	p := &mparser{s: s, i: 2}
	defer func() {
		if r := recover(); r != nil {
			if _, is := r.(parseError); !is {
				panic(r)
			}
			n, ok = nil, false
		}
	}()
	if c := p.peek(); c == 'T' || c == 'G' {
		return nil, false // special names (vtables, guards, ...) are not functions
	}
	return p.name(), true
}

// encoding parses <encoding> inside a local name or an external-name
// literal: the name plus the function's parameter types. It returns the
// name with toks extended by the parameter tokens (a demangler prints
// "f<...>(params)" there, without the return type).
func (p *mparser) encoding() *mnode {
	p.enter()
	defer p.leave()
	name := p.name()
	c := p.peek()
	if c == 0 || c == 'E' || c == '.' {
		return name
	}
	saved := p.tmpl
	if name.hasTargs {
		p.tmpl = name.targs
	}
	if name.hasTargs && !name.ctorDtor {
		p.typ() // return type: not printed
	}
	var params []string
	for {
		c := p.peek()
		if c == 0 || c == 'E' || c == '.' {
			break
		}
		params = p.cat(params, p.typ().toks)
	}
	p.tmpl = saved
	out := *name
	out.toks = p.cat(name.toks, params)
	out.nameToks = name.toks
	if out.nameToks == nil {
		out.nameToks = []string{}
	}
	return &out
}

func (p *mparser) name() *mnode {
	p.enter()
	defer p.leave()
	switch p.peek() {
	case 'N':
		return p.nestedName()
	case 'Z':
		return p.localName()
	case 'S':
		if p.peekAt(1) == 't' {
			p.i += 2
			std := &mnode{comps: []string{"std"}, toks: []string{"std"}}
			n := p.combine(std, p.unqualifiedName(std))
			if p.peek() == 'I' {
				p.addSub(n)
				n = p.withArgs(n, p.templateArgs())
			}
			return n
		}
		sub := p.substitution()
		if p.peek() != 'I' {
			return sub
		}
		return p.withArgs(sub, p.templateArgs())
	}
	n := p.unqualifiedName(nil)
	if p.peek() == 'I' {
		p.addSub(n)
		n = p.withArgs(n, p.templateArgs())
	}
	return n
}

func (p *mparser) combine(prefix, comp *mnode) *mnode {
	if prefix == nil {
		return comp
	}
	return &mnode{
		comps:    append(append([]string(nil), prefix.comps...), comp.comps...),
		toks:     p.cat(prefix.toks, comp.toks),
		targToks: p.cat(prefix.targToks, comp.targToks),
		hasTargs: false,
		ctorDtor: comp.ctorDtor,
	}
}

// withArgs applies a template argument list to a name.
func (p *mparser) withArgs(n *mnode, args []*mnode) *mnode {
	var at []string
	for _, a := range args {
		at = p.cat(at, a.toks)
	}
	return &mnode{
		comps:    n.comps,
		toks:     p.cat(n.toks, at),
		targToks: p.cat(n.targToks, at),
		targs:    args,
		hasTargs: true,
		ctorDtor: n.ctorDtor,
	}
}

func (p *mparser) nestedName() *mnode {
	p.expect('N')
	for strings.IndexByte("rVK", p.peek()) >= 0 {
		p.i++
	}
	if c := p.peek(); c == 'R' || c == 'O' {
		p.i++
	}
	var cur *mnode
	for {
		c := p.peek()
		switch {
		case c == 0:
			p.fail()
		case c == 'E':
			p.i++
			if cur == nil {
				p.fail()
			}
			return cur
		case c == 'S':
			if cur != nil && p.peekAt(1) != 't' {
				cur = p.combine(cur, p.substitution())
			} else if p.peekAt(1) == 't' {
				p.i += 2
				cur = p.combine(cur, &mnode{comps: []string{"std"}, toks: []string{"std"}})
			} else {
				cur = p.substitution()
			}
			continue // substitutions are not added again
		case c == 'I':
			if cur == nil {
				p.fail()
			}
			cur = p.withArgs(cur, p.templateArgs())
		case c == 'T':
			cur = p.combine(cur, p.templateParam())
		case c == 'D' && (p.peekAt(1) == 't' || p.peekAt(1) == 'T'):
			cur = p.combine(cur, p.decltype())
		case c == 'M':
			p.i++
			continue
		default:
			cur = p.combine(cur, p.unqualifiedName(cur))
		}
		if p.peek() != 'E' {
			p.addSub(cur)
		}
	}
}

func (p *mparser) localName() *mnode {
	p.expect('Z')
	enc := p.encoding()
	p.expect('E')
	saved := p.tmpl
	if enc.hasTargs {
		p.tmpl = enc.targs
	}
	defer func() { p.tmpl = saved }()
	var ent *mnode
	if p.peek() == 's' {
		p.i++
		ent = &mnode{comps: []string{"string literal"}}
	} else {
		ent = p.name()
	}
	p.discriminator()
	return &mnode{
		comps:    append(append([]string(nil), enc.comps...), ent.comps...),
		toks:     p.cat(enc.toks, ent.toks),
		targToks: p.cat(enc.targToks, ent.targToks),
		targs:    ent.targs,
		hasTargs: ent.hasTargs,
	}
}

func (p *mparser) discriminator() {
	if p.peek() != '_' {
		return
	}
	p.i++
	if p.peek() == '_' {
		p.i++
		p.number()
		p.expect('_')
		return
	}
	if c := p.peek(); c >= '0' && c <= '9' {
		p.i++
		return
	}
	p.fail()
}

func (p *mparser) number() int {
	if p.peek() == 'n' {
		p.i++
	}
	start := p.i
	for c := p.peek(); c >= '0' && c <= '9'; c = p.peek() {
		p.i++
	}
	if p.i == start || p.i-start > 9 {
		p.fail()
	}
	v, _ := strconv.Atoi(p.s[start:p.i])
	return v
}

func (p *mparser) sourceName() string {
	n := p.number()
	if n <= 0 || n > len(p.s)-p.i {
		p.fail()
	}
	id := p.s[p.i : p.i+n]
	p.i += n
	return id
}

func isAnonNamespace(id string) bool {
	// GCC and NVCC spell anonymous namespaces "_GLOBAL_" + one of "._$" + "N...".
	return len(id) > 9 && strings.HasPrefix(id, "_GLOBAL_") && strings.IndexByte("._$", id[8]) >= 0 && id[9] == 'N'
}

func (p *mparser) unqualifiedName(prefix *mnode) *mnode {
	p.enter()
	defer p.leave()
	var n *mnode
	c := p.peek()
	switch {
	case c >= '0' && c <= '9':
		id := p.sourceName()
		if isAnonNamespace(id) {
			n = &mnode{comps: []string{"(anonymous namespace)"}}
		} else {
			n = &mnode{comps: []string{id}, toks: []string{id}}
		}
	case c == 'L':
		p.i++
		id := p.sourceName()
		n = &mnode{comps: []string{id}, toks: []string{id}}
		p.discriminator()
	case c == 'C' || (c == 'D' && p.peekAt(1) >= '0' && p.peekAt(1) <= '5'):
		p.i++
		inherit := c == 'C' && p.peek() == 'I'
		if inherit {
			p.i++
		}
		if d := p.next(); d < '0' || d > '5' {
			p.fail()
		}
		if inherit {
			p.typ()
		}
		if prefix == nil || len(prefix.comps) == 0 {
			p.fail()
		}
		last := prefix.comps[len(prefix.comps)-1]
		name := last
		if c == 'D' {
			name = "~" + last
		}
		n = &mnode{comps: []string{name}, toks: []string{last}, ctorDtor: true}
	case c == 'U':
		n = p.unnamedType()
	case c >= 'a' && c <= 'z':
		n = p.operatorName()
	default:
		p.fail()
	}
	for p.peek() == 'B' { // ABI tags
		p.i++
		tag := p.sourceName()
		n = &mnode{comps: append(append([]string(nil), n.comps[:len(n.comps)-1]...), n.comps[len(n.comps)-1]+"[abi:"+tag+"]"),
			toks: p.cat(n.toks, []string{tag}), ctorDtor: n.ctorDtor}
	}
	return n
}

func (p *mparser) unnamedType() *mnode {
	p.expect('U')
	switch p.next() {
	case 't':
		num := 1
		if p.peek() != '_' {
			num = p.number() + 2
		}
		p.expect('_')
		return &mnode{comps: []string{"{unnamed type#" + strconv.Itoa(num) + "}"}}
	case 'l':
		p.inLambda++
		var toks []string
		for p.peek() != 'E' {
			if p.peek() == 0 {
				p.fail()
			}
			toks = p.cat(toks, p.typ().toks)
		}
		p.inLambda--
		p.i++
		num := 1
		if p.peek() != '_' {
			num = p.number() + 2
		}
		p.expect('_')
		return &mnode{comps: []string{"{lambda#" + strconv.Itoa(num) + "}"}, toks: toks}
	}
	p.fail()
	return nil
}

var operatorSymbols = map[string]string{
	"nw": " new", "na": " new[]", "dl": " delete", "da": " delete[]", "ps": "+", "ng": "-",
	"ad": "&", "de": "*", "co": "~", "pl": "+", "mi": "-", "ml": "*", "dv": "/", "rm": "%",
	"an": "&", "or": "|", "eo": "^", "aS": "=", "pL": "+=", "mI": "-=", "mL": "*=", "dV": "/=",
	"rM": "%=", "aN": "&=", "oR": "|=", "eO": "^=", "ls": "<<", "rs": ">>", "lS": "<<=",
	"rS": ">>=", "eq": "==", "ne": "!=", "lt": "<", "gt": ">", "le": "<=", "ge": ">=",
	"ss": "<=>", "nt": "!", "aa": "&&", "oo": "||", "pp": "++", "mm": "--", "cm": ",",
	"pm": "->*", "pt": "->", "cl": "()", "ix": "[]", "qu": "?", "aw": " co_await",
}

func (p *mparser) operatorName() *mnode {
	if p.i+2 > len(p.s) {
		p.fail()
	}
	code := p.s[p.i : p.i+2]
	p.i += 2
	switch {
	case code == "cv":
		t := p.typ()
		return &mnode{comps: []string{"operator (conversion)"}, toks: t.toks}
	case code == "li":
		id := p.sourceName()
		return &mnode{comps: []string{`operator"" ` + id}, toks: []string{id}}
	case code[0] == 'v' && code[1] >= '0' && code[1] <= '9':
		id := p.sourceName()
		return &mnode{comps: []string{"operator " + id}, toks: []string{id}}
	}
	sym, ok := operatorSymbols[code]
	if !ok {
		p.fail()
	}
	return &mnode{comps: []string{"operator" + sym}}
}

var stdAbbrev = map[byte][]string{
	'a': {"std", "allocator"},
	'b': {"std", "basic_string"},
	's': {"std", "string"},
	'i': {"std", "istream"},
	'o': {"std", "ostream"},
	'd': {"std", "iostream"},
}

func (p *mparser) substitution() *mnode {
	p.expect('S')
	c := p.peek()
	if c == 't' {
		p.i++
		return &mnode{comps: []string{"std"}, toks: []string{"std"}}
	}
	if a, ok := stdAbbrev[c]; ok {
		p.i++
		return &mnode{comps: a, toks: a}
	}
	idx := 0
	if c != '_' {
		v := 0
		n := 0
		for {
			c = p.peek()
			var d int
			switch {
			case c >= '0' && c <= '9':
				d = int(c - '0')
			case c >= 'A' && c <= 'Z':
				d = int(c-'A') + 10
			default:
				d = -1
			}
			if d < 0 {
				break
			}
			v = v*36 + d
			n++
			p.i++
			if n > 6 {
				p.fail()
			}
		}
		if n == 0 {
			p.fail()
		}
		idx = v + 1
	}
	p.expect('_')
	if idx >= len(p.subs) {
		p.fail()
	}
	return p.subs[idx]
}

func (p *mparser) templateParam() *mnode {
	p.expect('T')
	idx := 0
	if p.peek() != '_' {
		idx = p.number() + 1
	}
	p.expect('_')
	if p.inLambda > 0 {
		return &mnode{} // generic lambda parameter: printed as "auto:N"
	}
	if idx >= len(p.tmpl) {
		p.fail()
	}
	return p.tmpl[idx]
}

func (p *mparser) templateArgs() []*mnode {
	p.enter()
	defer p.leave()
	p.expect('I')
	var args []*mnode
	for p.peek() != 'E' {
		if p.peek() == 0 {
			p.fail()
		}
		args = append(args, p.templateArg())
	}
	p.i++
	return args
}

func (p *mparser) templateArg() *mnode {
	switch p.peek() {
	case 'X':
		p.i++
		n := p.expr()
		p.expect('E')
		return n
	case 'L':
		return p.exprPrimary()
	case 'J':
		p.i++
		var toks []string
		for p.peek() != 'E' {
			if p.peek() == 0 {
				p.fail()
			}
			toks = p.cat(toks, p.templateArg().toks)
		}
		p.i++
		return &mnode{toks: toks}
	}
	return p.typ()
}

const builtinTypes = "vwbcahstijlmxynofdegz"

// typ parses a <type> and records substitution candidates as the ABI
// specifies.
func (p *mparser) typ() *mnode {
	p.enter()
	defer p.leave()
	c := p.peek()
	switch {
	case c != 0 && strings.IndexByte(builtinTypes, c) >= 0:
		p.i++
		return &mnode{}
	case c == 'u':
		p.i++
		id := p.sourceName()
		n := &mnode{toks: []string{id}}
		if p.peek() == 'I' {
			n = p.withArgs(n, p.templateArgs())
		}
		p.addSub(n)
		return n
	case c == 'r' || c == 'V' || c == 'K':
		for strings.IndexByte("rVK", p.peek()) >= 0 {
			p.i++
		}
		inner := p.typ()
		n := &mnode{toks: inner.toks, isFunc: inner.isFunc, ret: inner.ret, params: inner.params}
		p.addSub(n)
		return n
	case c == 'P' || c == 'R' || c == 'O' || c == 'C' || c == 'G':
		p.i++
		inner := p.typ()
		n := &mnode{toks: inner.toks}
		p.addSub(n)
		return n
	case c == 'F':
		n := p.functionType()
		p.addSub(n)
		return n
	case c == 'A':
		p.i++
		var dim []string
		if d := p.peek(); d >= '0' && d <= '9' {
			dim = []string{strconv.Itoa(p.number())}
		} else if d != '_' {
			dim = p.expr().toks
		}
		p.expect('_')
		elem := p.typ()
		n := &mnode{toks: p.cat(elem.toks, dim)}
		p.addSub(n)
		return n
	case c == 'M':
		p.i++
		class := p.typ()
		member := p.typ()
		var n *mnode
		if member.isFunc {
			n = &mnode{toks: p.cat(member.ret, class.toks, member.params)}
		} else {
			n = &mnode{toks: p.cat(member.toks, class.toks)}
		}
		p.addSub(n)
		return n
	case c == 'T':
		switch p.peekAt(1) {
		case 's', 'u', 'e':
			p.i += 2
			n := p.name()
			p.addSub(n)
			return n
		}
		n := p.templateParam()
		p.addSub(n)
		if p.peek() == 'I' {
			n = p.withArgs(n, p.templateArgs())
			p.addSub(n)
		}
		return n
	case c == 'S':
		if p.peekAt(1) == 't' {
			n := p.name()
			p.addSub(n)
			return n
		}
		n := p.substitution()
		if p.peek() == 'I' {
			n = p.withArgs(n, p.templateArgs())
			p.addSub(n)
		}
		return n
	case c == 'D':
		return p.dType()
	case c == 'N' || c == 'Z' || (c >= '0' && c <= '9'):
		n := p.name()
		p.addSub(n)
		return n
	case c == 'U':
		p.i++
		p.sourceName()
		if p.peek() == 'I' {
			p.templateArgs()
		}
		inner := p.typ()
		n := &mnode{toks: inner.toks}
		p.addSub(n)
		return n
	}
	p.fail()
	return nil
}

func (p *mparser) dType() *mnode {
	p.expect('D')
	c := p.next()
	switch c {
	case 'p':
		inner := p.typ()
		n := &mnode{toks: inner.toks}
		p.addSub(n)
		return n
	case 't', 'T':
		p.i -= 2
		n := p.decltype()
		p.addSub(n)
		return n
	case 'v':
		var dim []string
		if d := p.peek(); d >= '0' && d <= '9' {
			dim = []string{strconv.Itoa(p.number())}
		} else {
			p.expect('_')
			dim = p.expr().toks
		}
		p.expect('_')
		elem := p.typ()
		n := &mnode{toks: p.cat(elem.toks, dim)}
		p.addSub(n)
		return n
	case 'n', 'a', 'c', 'f', 'd', 'e', 'h', 'i', 's', 'u':
		return &mnode{}
	case 'F':
		p.number()
		switch p.peek() {
		case '_', 'x':
			p.i++
		case 'b':
			p.i++
		default:
			p.fail()
		}
		return &mnode{}
	case 'B', 'U':
		if d := p.peek(); d >= '0' && d <= '9' {
			p.number()
		} else {
			p.expr()
		}
		p.expect('_')
		return &mnode{}
	case 'o':
		return p.typ() // noexcept function type
	}
	p.fail()
	return nil
}

func (p *mparser) decltype() *mnode {
	p.expect('D')
	if c := p.next(); c != 't' && c != 'T' {
		p.fail()
	}
	n := p.expr()
	p.expect('E')
	return &mnode{toks: n.toks}
}

func (p *mparser) functionType() *mnode {
	p.expect('F')
	if p.peek() == 'Y' {
		p.i++
	}
	ret := p.typ()
	var params []string
	for {
		c := p.peek()
		if c == 'E' {
			p.i++
			break
		}
		if (c == 'R' || c == 'O') && p.peekAt(1) == 'E' {
			p.i += 2
			break
		}
		if c == 0 {
			p.fail()
		}
		params = p.cat(params, p.typ().toks)
	}
	return &mnode{toks: p.cat(ret.toks, params), ret: ret.toks, params: params, isFunc: true}
}

func (p *mparser) exprPrimary() *mnode {
	p.expect('L')
	if p.peek() == '_' && p.peekAt(1) == 'Z' {
		p.i += 2
		n := p.encoding()
		p.expect('E')
		return &mnode{toks: nameOnly(n)}
	}
	if p.peek() == 'Z' {
		p.i++
		n := p.encoding()
		p.expect('E')
		return &mnode{toks: nameOnly(n)}
	}
	c := p.peek()
	var typeToks []string
	isBool := c == 'b'
	if c != 0 && strings.IndexByte(builtinTypes, c) >= 0 {
		p.i++
	} else {
		typeToks = p.typ().toks
	}
	if p.peek() == 'n' {
		p.i++
	}
	start := p.i
	for c := p.peek(); c != 'E'; c = p.peek() {
		if c == 0 {
			p.fail()
		}
		p.i++
	}
	val := p.s[start:p.i]
	p.i++
	switch {
	case val == "":
		return &mnode{toks: typeToks}
	case isBool && val == "0":
		return &mnode{toks: []string{"false"}}
	case isBool && val == "1":
		return &mnode{toks: []string{"true"}}
	}
	return &mnode{toks: p.cat(typeToks, []string{normalizeNumber(val)})}
}

// nameOnly returns the tokens of an encoding's name without its
// parameters, as a demangler prints an external name used as a template
// argument.
func nameOnly(n *mnode) []string {
	if n.nameToks != nil {
		return n.nameToks
	}
	return n.toks
}

// unary and binary operator codes in expressions.
var unaryOps = map[string]bool{"ps": true, "ng": true, "ad": true, "de": true, "co": true, "nt": true, "pp": true, "mm": true, "sz": true, "az": true, "nx": true, "te": true}
var binaryOps = map[string]bool{
	"pl": true, "mi": true, "ml": true, "dv": true, "rm": true, "an": true, "or": true, "eo": true,
	"aS": true, "pL": true, "mI": true, "mL": true, "dV": true, "rM": true, "aN": true, "oR": true,
	"eO": true, "ls": true, "rs": true, "lS": true, "rS": true, "eq": true, "ne": true, "lt": true,
	"gt": true, "le": true, "ge": true, "ss": true, "aa": true, "oo": true, "cm": true, "pm": true,
}

func (p *mparser) expr() *mnode {
	p.enter()
	defer p.leave()
	c := p.peek()
	switch {
	case c == 'L':
		return p.exprPrimary()
	case c == 'T':
		n := p.templateParam()
		return &mnode{toks: n.toks}
	case c == 'f' && p.peekAt(1) == 'p':
		p.i += 2
		for strings.IndexByte("rVK", p.peek()) >= 0 {
			p.i++
		}
		if p.peek() != '_' {
			p.number()
		}
		p.expect('_')
		return &mnode{}
	case c >= '0' && c <= '9':
		n := p.unqualifiedName(nil)
		if p.peek() == 'I' {
			n = p.withArgs(n, p.templateArgs())
		}
		return &mnode{toks: n.toks}
	}
	if p.i+2 > len(p.s) {
		p.fail()
	}
	code := p.s[p.i : p.i+2]
	p.i += 2
	switch code {
	case "st", "at", "ti":
		return &mnode{toks: p.typ().toks}
	case "sr":
		var toks []string
		if p.peek() == 'N' {
			p.i++
			toks = p.typ().toks
			for p.peek() != 'E' {
				toks = p.cat(toks, p.simpleID())
			}
			p.i++
		} else if c := p.peek(); c >= '0' && c <= '9' {
			// global unresolved name
		} else {
			toks = p.typ().toks
		}
		return &mnode{toks: p.cat(toks, p.simpleID())}
	case "cv":
		t := p.typ()
		if p.peek() == '_' {
			p.i++
			toks := t.toks
			for p.peek() != 'E' {
				if p.peek() == 0 {
					p.fail()
				}
				toks = p.cat(toks, p.expr().toks)
			}
			p.i++
			return &mnode{toks: toks}
		}
		return &mnode{toks: p.cat(t.toks, p.expr().toks)}
	case "sc", "dc", "rc", "cc":
		t := p.typ()
		return &mnode{toks: p.cat(t.toks, p.expr().toks)}
	case "cl", "il":
		var toks []string
		for p.peek() != 'E' {
			if p.peek() == 0 {
				p.fail()
			}
			toks = p.cat(toks, p.expr().toks)
		}
		p.i++
		return &mnode{toks: toks}
	case "tl":
		toks := p.typ().toks
		for p.peek() != 'E' {
			if p.peek() == 0 {
				p.fail()
			}
			toks = p.cat(toks, p.expr().toks)
		}
		p.i++
		return &mnode{toks: toks}
	case "dt", "pt":
		e := p.expr()
		return &mnode{toks: p.cat(e.toks, p.simpleID())}
	case "qu":
		a, b, c := p.expr(), p.expr(), p.expr()
		return &mnode{toks: p.cat(a.toks, b.toks, c.toks)}
	case "sZ":
		if p.peek() == 'T' {
			return &mnode{toks: p.templateParam().toks}
		}
		return p.expr()
	}
	if code == "pp" || code == "mm" {
		if p.peek() == '_' {
			p.i++
		}
	}
	if unaryOps[code] {
		return &mnode{toks: p.expr().toks}
	}
	if binaryOps[code] {
		a := p.expr()
		b := p.expr()
		return &mnode{toks: p.cat(a.toks, b.toks)}
	}
	p.fail()
	return nil
}

// simpleID parses <source-name> [<template-args>] (or an operator name)
// in an unresolved name.
func (p *mparser) simpleID() []string {
	var n *mnode
	if c := p.peek(); c >= '0' && c <= '9' {
		id := p.sourceName()
		n = &mnode{toks: []string{id}}
	} else if p.peek() == 'o' && p.peekAt(1) == 'n' {
		p.i += 2
		n = p.operatorName()
	} else {
		p.fail()
	}
	if p.peek() == 'I' {
		n = p.withArgs(n, p.templateArgs())
	}
	return n.toks
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
