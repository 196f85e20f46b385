// Package apicheck finds internal types in a package's exported API: the
// exported functions, methods, types, fields, variables and constants whose
// declared types name a package under an internal/ directory, which no
// other module can import, so that it cannot name those types to call the
// functions or fill the fields. An exported alias of an internal type
// (type Stream = cuda.Stream) is the one place an internal type may
// appear: it gives the type a public name, which the rest of the API uses.
//
// It also finds the packages of a module that use cgo, so that a test can
// hold a package's dependencies to pure Go (CgoDeps).
package apicheck

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// An Offender is one exported name whose type mentions an internal package.
type Offender struct {
	Pos  string // file:line
	Name string // the exported name: F, T, T.Field, T.Method, (T).Method
	Type string // the selector into the internal package, as written
}

func (o Offender) String() string { return fmt.Sprintf("%s: %s uses %s", o.Pos, o.Name, o.Type) }

// Dir checks the package in dir, with the files go build would compile
// on this machine (build constraints of the default context). Test files
// are left out.
func Dir(dir string) ([]Offender, error) {
	bp, err := build.Default.ImportDir(dir, 0)
	if err != nil {
		return nil, fmt.Errorf("apicheck: %s: %w", dir, err)
	}
	files := append(append([]string{}, bp.GoFiles...), bp.CgoFiles...)
	fset := token.NewFileSet()
	var out []Offender
	for _, name := range files {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, fmt.Errorf("apicheck: %w", err)
		}
		c := checker{fset: fset, internal: internalImports(f)}
		c.file(f)
		out = append(out, c.out...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out, nil
}

// internalImports maps the names a file imports internal packages under
// to their paths.
func internalImports(f *ast.File) map[string]string {
	m := map[string]string{}
	for _, imp := range f.Imports {
		path, err := strconv.Unquote(imp.Path.Value)
		if err != nil || !isInternal(path) {
			continue
		}
		name := path[strings.LastIndex(path, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		m[name] = path
	}
	return m
}

func isInternal(path string) bool {
	return strings.HasPrefix(path, "internal/") || strings.Contains(path, "/internal/") || strings.HasSuffix(path, "/internal")
}

type checker struct {
	fset     *token.FileSet
	internal map[string]string
	out      []Offender
}

func (c *checker) file(f *ast.File) {
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			c.fn(d)
		case *ast.GenDecl:
			for _, s := range d.Specs {
				c.spec(s)
			}
		}
	}
}

func (c *checker) fn(d *ast.FuncDecl) {
	if !d.Name.IsExported() {
		return
	}
	name := d.Name.Name
	if d.Recv != nil {
		recv := receiverName(d.Recv.List[0].Type)
		if !ast.IsExported(recv) {
			return // a method of an unexported type is not callable from outside
		}
		name = recv + "." + name
	}
	c.expr(name, d.Type)
}

func receiverName(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.ParenExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		case *ast.SelectorExpr:
			return t.Sel.Name
		default:
			return ""
		}
	}
}

func (c *checker) spec(s ast.Spec) {
	switch s := s.(type) {
	case *ast.TypeSpec:
		if _, sel := s.Type.(*ast.SelectorExpr); s.Assign.IsValid() && sel {
			return // a public name for the type: the rest of the API uses it
		}
		if s.Name.IsExported() {
			c.typ(s.Name.Name, s.Type)
		}
	case *ast.ValueSpec:
		for _, n := range s.Names {
			if n.IsExported() && s.Type != nil {
				c.expr(n.Name, s.Type)
			}
		}
	}
}

// typ checks a type declaration: a struct's exported and embedded fields,
// an interface's methods, anything else whole.
func (c *checker) typ(name string, t ast.Expr) {
	switch t := t.(type) {
	case *ast.StructType:
		for _, f := range t.Fields.List {
			if len(f.Names) == 0 { // embedded: its exported fields and methods are promoted
				c.expr(name+"."+receiverName(f.Type), f.Type)
				continue
			}
			for _, n := range f.Names {
				if n.IsExported() {
					c.expr(name+"."+n.Name, f.Type)
				}
			}
		}
	case *ast.InterfaceType:
		for _, m := range t.Methods.List {
			label := name
			if len(m.Names) > 0 {
				if !m.Names[0].IsExported() {
					continue
				}
				label += "." + m.Names[0].Name
			}
			c.expr(label, m.Type)
		}
	default:
		c.expr(name, t)
	}
}

// expr reports every selector into an internal package inside e, struct
// and func literals included.
func (c *checker) expr(name string, e ast.Expr) {
	ast.Inspect(e, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if x, ok := sel.X.(*ast.Ident); ok {
			if path, ok := c.internal[x.Name]; ok {
				p := c.fset.Position(sel.Pos())
				c.out = append(c.out, Offender{
					Pos:  fmt.Sprintf("%s:%d", filepath.Base(p.Filename), p.Line),
					Name: name,
					Type: fmt.Sprintf("%s.%s (%s)", x.Name, sel.Sel.Name, path),
				})
			}
		}
		return false
	})
}

// CgoDeps returns the packages of the module at root (module path
// modPath) that pkg (a path relative to root) imports, directly or not,
// or is, and that have cgo files under the default build context. Other
// modules' packages are not followed.
func CgoDeps(root, modPath, pkg string) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	var visit func(rel string) error
	visit = func(rel string) error {
		if seen[rel] {
			return nil
		}
		seen[rel] = true
		bp, err := build.Default.ImportDir(filepath.Join(root, rel), 0)
		if err != nil {
			return fmt.Errorf("apicheck: %s: %w", rel, err)
		}
		if len(bp.CgoFiles) > 0 {
			out = append(out, modPath+"/"+rel)
		}
		for _, imp := range bp.Imports {
			if r, ok := strings.CutPrefix(imp, modPath+"/"); ok {
				if err := visit(r); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := visit(pkg); err != nil {
		return nil, err
	}
	sort.Strings(out)
	return out, nil
}

// Vars returns the exported package-level variables of the package in dir
// (build constraints as in Dir, test files left out), other than the
// sentinel errors (names that start with Err): each a name another module
// could set, which is configuration by global if anything reads it.
func Vars(dir string) ([]string, error) {
	bp, err := build.Default.ImportDir(dir, 0)
	if err != nil {
		return nil, fmt.Errorf("apicheck: %s: %w", dir, err)
	}
	fset := token.NewFileSet()
	var out []string
	for _, name := range append(append([]string{}, bp.GoFiles...), bp.CgoFiles...) {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, fmt.Errorf("apicheck: %w", err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, s := range g.Specs {
				for _, n := range s.(*ast.ValueSpec).Names {
					if n.IsExported() && !strings.HasPrefix(n.Name, "Err") {
						out = append(out, n.Name)
					}
				}
			}
		}
	}
	sort.Strings(out)
	return out, nil
}
