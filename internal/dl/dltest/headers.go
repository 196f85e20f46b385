package dltest

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// CUDARoots returns the toolkit roots searched for headers: $CUDA_HOME,
// $CUDA_PATH and /usr/local/cuda, in that order, without duplicates.
func CUDARoots() []string {
	var roots []string
	seen := map[string]bool{}
	for _, r := range []string{os.Getenv("CUDA_HOME"), os.Getenv("CUDA_PATH"), "/usr/local/cuda"} {
		if r != "" && !seen[r] {
			seen[r] = true
			roots = append(roots, r)
		}
	}
	return roots
}

// IncludeDirs returns the existing header directories under CUDARoots:
// include, extras/CUPTI/include and targets/*/include.
func IncludeDirs() []string {
	var dirs []string
	for _, r := range CUDARoots() {
		cands := []string{filepath.Join(r, "include"), filepath.Join(r, "extras", "CUPTI", "include")}
		more, _ := filepath.Glob(filepath.Join(r, "targets", "*", "include"))
		cands = append(cands, more...)
		for _, d := range cands {
			if st, err := os.Stat(d); err == nil && st.IsDir() {
				dirs = append(dirs, d)
			}
		}
	}
	return dirs
}

// FindHeader returns the first include directory holding name, or "".
func FindHeader(name string) string {
	for _, d := range IncludeDirs() {
		if _, err := os.Stat(filepath.Join(d, name)); err == nil {
			return d
		}
	}
	return ""
}

// FindLibraryHeader returns the directory and the name of the first of
// names found in $rootEnv/include (when rootEnv is set), IncludeDirs and
// the system's include directories, in that order; "", "" when none is.
func FindLibraryHeader(rootEnv string, names ...string) (dir, name string) {
	var dirs []string
	if r := os.Getenv(rootEnv); r != "" {
		dirs = append(dirs, filepath.Join(r, "include"))
	}
	dirs = append(dirs, IncludeDirs()...)
	dirs = append(dirs, "/usr/include", "/usr/include/x86_64-linux-gnu", "/usr/include/aarch64-linux-gnu", "/usr/local/include")
	for _, d := range dirs {
		for _, n := range names {
			if _, err := os.Stat(filepath.Join(d, n)); err == nil {
				return d, n
			}
		}
	}
	return "", ""
}

// CompileAndRun compiles the C program src with cc against IncludeDirs
// in dir and returns what it prints.
func CompileAndRun(dir, src string) (string, error) {
	cfile := filepath.Join(dir, "probe.c")
	exe := filepath.Join(dir, "probe")
	if err := os.WriteFile(cfile, []byte(src), 0o644); err != nil {
		return "", err
	}
	args := []string{"-std=gnu11", "-w", "-o", exe, cfile}
	for _, d := range IncludeDirs() {
		args = append(args, "-I"+d)
	}
	out, err := exec.Command("cc", args...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("cc %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	out, err = exec.Command(exe).Output()
	if err != nil {
		return "", fmt.Errorf("running probe: %v", err)
	}
	return string(out), nil
}

// ParseValues parses lines "NAME VALUE" (VALUE a decimal integer) as a
// probe program prints them.
func ParseValues(out string) (map[string]int64, error) {
	vals := map[string]int64{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 2 {
			continue
		}
		v, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("bad probe line %q: %v", sc.Text(), err)
		}
		vals[f[0]] = v
	}
	return vals, sc.Err()
}

// CompileCheck compiles the C program src with $CC (default cc) against
// the headers in inc and the package directory (for its kr_ headers),
// with -Werror so that a kr_ declaration that does not match header (a
// file in inc, named in the failure) fails, runs it and returns what it
// prints. A failure stops the test.
func CompileCheck(t testing.TB, inc, header, src string) []byte {
	t.Helper()
	pkgDir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfile, bin := filepath.Join(dir, "check.c"), filepath.Join(dir, "check")
	if err := os.WriteFile(cfile, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "cc"
	}
	// Deprecation warnings from the headers are not ours to fix.
	out, err := exec.Command(cc, "-Werror", "-Wno-deprecated-declarations", "-I", inc, "-I", pkgDir, "-o", bin, cfile).CombinedOutput()
	if err != nil {
		t.Fatalf("compiling the declaration check against %s/%s failed (a kr_ declaration does not match %s): %v\n%s", inc, header, header, err, out)
	}
	out, err = exec.Command(bin).Output()
	if err != nil {
		t.Fatalf("running the check: %v", err)
	}
	return out
}
