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
	in, err := loadInput(pos[0], signatures.Options{})
	if err != nil {
		return err
	}
	set, group := in.sets[0], len(in.sets) > 1
	workloadName := bench.Workload(set.Source)
	if group {
		workloadName = bench.GroupWorkload(set.Source)
	}
	dir := *out
	if dir == "" {
		dir = bench.PackageName(workloadName)
	}
	source, err := genSource(pos[0], dir)
	if err != nil {
		return err
	}
	spec, err := genSpec(pos[0], set, in.bundle, stderr)
	if err != nil {
		return err
	}
	opt := bench.GenOptions{Package: *pkg, Source: source, Spec: spec}
	var files map[string][]byte
	if group {
		files, err = bench.GenerateGroup(in.sets, opt)
	} else {
		files, err = bench.Generate(set, opt)
	}
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := removeStale(dir, files); err != nil {
		return err
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
	sigs, what := len(set.Signatures), "workload"
	if group {
		sigs = 0
		for _, s := range in.sets {
			sigs += len(s.Signatures)
		}
		what = fmt.Sprintf("the %d ranks of workload", len(in.sets))
	}
	fmt.Fprintf(stderr, "%s: %d signatures of %s %s -> %s (%s)\n", pos[0], sigs, what, workloadName, dir, strings.Join(names, ", "))
	return nil
}

// removeStale removes from dir the files a generation other than files
// would have written and that would mislead: a spec.json from a bundle
// when there is none now, the one set.json or the sets of ranks
// (set.rankN.json) of a package of the other kind.
func removeStale(dir string, files map[string][]byte) error {
	stale, err := filepath.Glob(filepath.Join(dir, "set.rank*.json"))
	if err != nil {
		return err
	}
	stale = append(stale, filepath.Join(dir, bench.SpecFile), filepath.Join(dir, bench.SetFile))
	for _, path := range stale {
		if _, keep := files[filepath.Base(path)]; keep {
			continue
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
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
