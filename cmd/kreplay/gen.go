package main

import (
	"errors"
	"fmt"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kreplay/kreplay/bench"
	"github.com/kreplay/kreplay/internal/atomicfile"
	"github.com/kreplay/kreplay/signatures"
	"github.com/kreplay/kreplay/workload"
)

func cmdGen(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("gen")
	out := fs.String("o", "", "write the package into `DIR` (default: ./PKG, PKG the workload as a Go identifier)")
	pkg := fs.String("pkg", "", "Go package `NAME` (default: the workload as a Go identifier)")
	pos, err := parseArgs(fs, args, 1, 1)
	if err != nil {
		return err
	}
	if *pkg != "" && !token.IsIdentifier(*pkg) {
		return usagef("-pkg %q: want a Go identifier", *pkg)
	}
	set, bundle, err := load(pos[0])
	if err != nil {
		return err
	}
	dir := *out
	if dir == "" {
		dir = bench.PackageName(bench.Workload(set.Source))
	}
	source, err := genSource(pos[0], dir)
	if err != nil {
		return err
	}
	spec, err := genSpec(pos[0], set, bundle, stderr)
	if err != nil {
		return err
	}
	files, err := bench.Generate(set, bench.GenOptions{Package: *pkg, Source: source, Spec: spec})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if spec == nil {
		// A spec.json left from a generation from a bundle would mislead.
		if err := os.Remove(filepath.Join(dir, bench.SpecFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if err := atomicfile.WriteBytes(filepath.Join(dir, name), files[name]); err != nil {
			return err
		}
	}
	fmt.Fprintf(stderr, "%s: %d signatures of workload %s -> %s (%s)\n", pos[0], len(set.Signatures),
		bench.Workload(set.Source), dir, strings.Join(names, ", "))
	return nil
}

// genSpec is the workload spec the package embeds: the bundle's, checked;
// without a bundle, none, and gen says what BenchmarkModel will do.
func genSpec(arg string, set *signatures.Set, b *workload.Bundle, stderr io.Writer) ([]byte, error) {
	if b == nil {
		if _, err := bench.ModelSpec(set, nil); err != nil {
			fmt.Fprintf(stderr, "kreplay gen: %s: %v: BenchmarkModel will say so\n", arg, err)
		} else {
			fmt.Fprintf(stderr, "kreplay gen: %s is a trace, not a bundle: BenchmarkModel runs the built-in model its workload name gives\n", arg)
		}
		return nil, nil
	}
	if _, err := b.Spec(); err != nil {
		return nil, err
	}
	return b.SpecJSON()
}

// genSource is the argument the generated go:generate directive passes to
// kreplay gen: an embedded trace as named, a file by its path relative to
// the package directory.
func genSource(arg, dir string) (string, error) {
	if strings.HasPrefix(arg, embeddedPrefix) {
		return arg, nil
	}
	absArg, err := filepath.Abs(arg)
	if err != nil {
		return "", err
	}
	absDir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(absDir, absArg)
	if err != nil {
		return filepath.ToSlash(absArg), nil
	}
	return filepath.ToSlash(rel), nil
}
