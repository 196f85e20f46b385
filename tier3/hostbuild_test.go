package tier3

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// The host test harnesses (elementwise_host_test.go, reduce_host_test.go)
// build a few hundred variants of the kernel sources, each a source with
// its own -D definitions. One g++ run per variant spent most of its time
// starting up and reading the shim's headers, so hostBuild compiles them
// in batches: a subtest registers its variant (want) before t.Parallel,
// and the first subtest that needs a binary compiles every variant
// registered so far, several to a translation unit, each in a namespace of
// its own (the unit's main picks one by its first argument), the units in
// parallel. Batches are cached under the user's cache directory, keyed by
// the compiler's version, the flags and the unit's text.

// hostBuild compiles the variants of one harness.
type hostBuild struct {
	tag     string   // names the namespaces and the cache directory
	cxx     string   // compiler path
	flags   []string // compiler flags, -D definitions excepted
	prelude string   // the shim, once at the head of every unit

	mu       sync.Mutex
	variants map[string]*hostVariant
	pending  []*hostVariant
}

// hostVariant is one variant: a source and its definitions, built into
// binary bin, where argument index selects it.
type hostVariant struct {
	body string
	defs []string // NAME=VALUE, sorted
	done chan struct{}
	bin  string
	idx  int
	err  error
}

// hostBatchMax bounds the variants of one translation unit: a unit takes
// about 0.05 s a variant at -O1 on top of 0.1 s to 0.5 s of its own.
const hostBatchMax = 24

// newHostBuild returns a harness's builder, or skips t where cxx is not
// installed.
func newHostBuild(t testing.TB, tag, cxx string, flags []string, prelude string) *hostBuild {
	t.Helper()
	path, err := exec.LookPath(cxx)
	if err != nil {
		t.Skipf("no C++ compiler (%s): %v", cxx, err)
	}
	return &hostBuild{tag: tag, cxx: path, flags: flags, prelude: prelude, variants: map[string]*hostVariant{}}
}

// hostEntry is the entry point a variant's body defines instead of main:
// int host_main(int argc, char **argv).
const hostEntry = "host_main"

// want registers the variant of body (a kernel source and a launcher that
// defines host_main) with defs, and returns it. Bodies must not contain
// extern "C" (every variant's kernels would be one function).
func (b *hostBuild) want(body string, defs map[string]string) *hostVariant {
	var d []string
	for k, v := range defs {
		d = append(d, k+"="+v)
	}
	slices.Sort(d)
	key := body + "\x00" + strings.Join(d, "\x00")
	b.mu.Lock()
	defer b.mu.Unlock()
	if v := b.variants[key]; v != nil {
		return v
	}
	v := &hostVariant{body: body, defs: d, done: make(chan struct{})}
	b.variants[key] = v
	b.pending = append(b.pending, v)
	return v
}

// binary returns the binary of v and its selecting argument, compiling
// every pending variant first if v is one of them.
func (b *hostBuild) binary(t testing.TB, v *hostVariant) (string, string) {
	t.Helper()
	b.mu.Lock()
	var batch []*hostVariant
	if slices.Contains(b.pending, v) {
		batch, b.pending = b.pending, nil
	}
	b.mu.Unlock()
	if batch != nil {
		b.compileAll(batch)
	}
	<-v.done
	if v.err != nil {
		t.Fatal(v.err)
	}
	return v.bin, strconv.Itoa(v.idx)
}

// compileAll compiles batch in units of at most hostBatchMax variants, as
// many units at once as there are CPUs.
func (b *hostBuild) compileAll(batch []*hostVariant) {
	n := (len(batch) + hostBatchMax - 1) / hostBatchMax
	n = max(n, min(len(batch), runtime.NumCPU()))
	sem := make(chan struct{}, runtime.NumCPU())
	var wg sync.WaitGroup
	for i := range n {
		unit := batch[i*len(batch)/n : (i+1)*len(batch)/n]
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			b.compileUnit(unit)
		}()
	}
	wg.Wait()
}

// compileUnit compiles unit into one binary; where that fails, it
// compiles each variant alone, so that an error names its variant.
func (b *hostBuild) compileUnit(unit []*hostVariant) {
	defer func() {
		for _, v := range unit {
			close(v.done)
		}
	}()
	bin, err := b.compile(unit)
	if err == nil || len(unit) == 1 {
		for i, v := range unit {
			v.bin, v.idx, v.err = bin, i, err
		}
		return
	}
	for _, v := range unit {
		v.idx = 0
		v.bin, v.err = b.compile([]*hostVariant{v})
	}
}

// hostDefine finds the macros a body defines, to undefine them after it.
var hostDefine = regexp.MustCompile(`(?m)^\s*#\s*define\s+([A-Za-z_][A-Za-z_0-9]*)`)

var hostDefined sync.Map // body -> []string, hostDefines's

// hostDefines is the macros body defines, found once per body: the
// variants of a harness share a few bodies, and the regexp over each,
// every unit, took seconds under -race.
func hostDefines(body string) []string {
	if v, ok := hostDefined.Load(body); ok {
		return v.([]string)
	}
	var names []string
	for _, m := range hostDefine.FindAllStringSubmatch(body, -1) {
		names = append(names, m[1])
	}
	hostDefined.Store(body, names)
	return names
}

// source is the translation unit of variants.
func (b *hostBuild) source(variants []*hostVariant) string {
	var s strings.Builder
	s.WriteString(b.prelude)
	for i, v := range variants {
		var names []string
		fmt.Fprintf(&s, "\n// variant %d\n", i)
		for _, d := range v.defs {
			name, val, _ := strings.Cut(d, "=")
			fmt.Fprintf(&s, "#define %s %s\n", name, val)
			names = append(names, name)
		}
		fmt.Fprintf(&s, "namespace %s%d {\n%s\n} // namespace %[1]s%[2]d\n", b.tag, i, v.body)
		names = append(names, hostDefines(v.body)...)
		slices.Sort(names)
		for _, n := range slices.Compact(names) {
			fmt.Fprintf(&s, "#undef %s\n", n)
		}
	}
	s.WriteString("\nint main(int argc, char **argv) {\n\tswitch (argc > 1 ? atoi(argv[1]) : -1) {\n")
	for i := range variants {
		fmt.Fprintf(&s, "\tcase %d:\n\t\treturn %s%d::%s(argc - 1, argv + 1);\n", i, b.tag, i, hostEntry)
	}
	s.WriteString("\t}\n\tfprintf(stderr, \"usage: %s VARIANT ARGS...\\n\", argv[0]);\n\treturn 2;\n}\n")
	return s.String()
}

// compile builds variants into one binary, or finds it in the cache.
func (b *hostBuild) compile(variants []*hostVariant) (string, error) {
	code := b.source(variants)
	pch := hostPCH(b.cxx, b.flags, b.prelude)
	h := sha256.Sum256([]byte(hostCompilerVersion(b.cxx) + "\x00" + strings.Join(b.flags, " ") + "\x00" + code))
	dir := ""
	if base, err := os.UserCacheDir(); err == nil {
		dir = filepath.Join(base, "kreplay", "hostbin", b.tag)
	}
	if dir == "" || os.MkdirAll(dir, 0o755) != nil {
		d, err := os.MkdirTemp("", "kreplay-hostbin")
		if err != nil {
			return "", err
		}
		dir = d
	}
	bin := filepath.Join(dir, hex.EncodeToString(h[:12]))
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	tmp, err := os.MkdirTemp(dir, "tmp")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	cc := filepath.Join(tmp, "unit.cc")
	if err := os.WriteFile(cc, []byte(code), 0o644); err != nil {
		return "", err
	}
	args := append(append(slices.Clone(b.flags), pch...), "-o", filepath.Join(tmp, "bin"), cc)
	if out, err := exec.Command(b.cxx, args...).CombinedOutput(); err != nil {
		return "", fmt.Errorf("%s %s (variant definitions %v): %v\n%s", b.cxx, strings.Join(b.flags, " "), hostDefs(variants), err, out)
	}
	if err := os.Rename(filepath.Join(tmp, "bin"), bin); err != nil {
		return "", err
	}
	return bin, nil
}

// hostDefs lists the variants' definitions for an error message.
func hostDefs(variants []*hostVariant) [][]string {
	var d [][]string
	for _, v := range variants {
		d = append(d, v.defs)
	}
	return d
}

var hostVersions sync.Map // compiler path -> its --version output

// hostCompilerVersion is cxx's --version output (empty if it has none).
func hostCompilerVersion(cxx string) string {
	if v, ok := hostVersions.Load(cxx); ok {
		return v.(string)
	}
	out, _ := exec.Command(cxx, "--version").Output()
	hostVersions.Store(cxx, string(out))
	return string(out)
}

// TestHostBuild builds variants of one body in units of two and runs
// each: every variant sees its own definitions and its own copy of the
// body's macros, and a variant that does not compile fails alone.
func TestHostBuild(t *testing.T) {
	cxx := os.Getenv("CXX")
	if cxx == "" {
		cxx = "g++"
	}
	b := newHostBuild(t, "hbv", cxx, []string{"-std=c++17", "-O1", "-w"}, "#include <cstdio>\n#include <cstdlib>\n")
	body := `#ifndef HB_SCALE
#define HB_SCALE 1
#endif
#define HB_OUT (HB_VALUE * HB_SCALE)
int host_main(int argc, char **argv) { printf("%d %s\n", HB_OUT, argc > 1 ? argv[1] : "-"); return 0; }`
	cases := []struct {
		defs map[string]string
		want string // output, or "" for a variant that does not compile
	}{
		{map[string]string{"HB_VALUE": "4", "HB_SCALE": "10"}, "40 x\n"},
		{map[string]string{"HB_VALUE": "3"}, "3 x\n"}, // 30 if HB_SCALE leaked
		{map[string]string{"HB_VALUE": "not_declared"}, ""},
		{map[string]string{"HB_VALUE": "5"}, "5 x\n"},
	}
	var vs []*hostVariant
	for _, c := range cases {
		vs = append(vs, b.want(body, c.defs))
	}
	if again := b.want(body, map[string]string{"HB_VALUE": "3"}); again != vs[1] {
		t.Error("the same variant registered twice is two variants")
	}
	units := [][]*hostVariant{vs[:2], vs[2:]}
	for _, u := range units {
		b.compileUnit(u)
	}
	for i, c := range cases {
		v := vs[i]
		if c.want == "" {
			if v.err == nil || !strings.Contains(v.err.Error(), "HB_VALUE=not_declared") {
				t.Errorf("variant %d: error %v, want one naming HB_VALUE=not_declared", i, v.err)
			}
			continue
		}
		if v.err != nil {
			t.Fatalf("variant %d: %v", i, v.err)
		}
		out, err := exec.Command(v.bin, strconv.Itoa(v.idx), "x").Output()
		if err != nil || string(out) != c.want {
			t.Errorf("variant %d: %q %v, want %q", i, out, err, c.want)
		}
	}
}
