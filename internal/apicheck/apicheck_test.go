package apicheck

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const modPath = "github.com/kreplay/kreplay"

// root is the module's root, from this package's directory.
var root = filepath.Join("..", "..")

// The checker flags every exported use of an internal type in the sample
// package, and nothing else.
func TestDirSample(t *testing.T) {
	got, err := Dir(filepath.Join("testdata", "sample"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range got {
		names = append(names, o.Name)
	}
	want := []string{"BadParam", "BadResult", "I.Do", "T.Field", "T.Handle", "T.Method", "V", "Wrapped"}
	slices.Sort(names)
	if !slices.Equal(names, want) {
		t.Errorf("offenders %q, want %q:\n%v", names, want, got)
	}
}

// The public packages' exported API names no internal type, so that
// another module can call it (see the package comment for the one
// exception, aliases).
func TestPublicAPI(t *testing.T) {
	for _, pkg := range []string{"gpu", "replay", "tier1", "tier2", "tier3", "energy"} {
		got, err := Dir(filepath.Join(root, pkg))
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range got {
			t.Errorf("%s: %s", pkg, o)
		}
	}
}

// The packages that never touch CUDA use no cgo, themselves or through
// the module's packages they import.
func TestPureGo(t *testing.T) {
	for _, pkg := range []string{"signatures", "workload", "internal/kname", "internal/textfmt"} {
		got, err := CgoDeps(root, modPath, pkg)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) > 0 {
			t.Errorf("%s uses cgo through %s", pkg, strings.Join(got, ", "))
		}
	}
	// The checker sees cgo where it is.
	if got, err := CgoDeps(root, modPath, "internal/cupti"); err != nil || !slices.Contains(got, modPath+"/internal/cupti") {
		t.Errorf("CgoDeps(internal/cupti) = %v, %v: want it listed", got, err)
	}
}

// signatures and energy build without cgo (energy reports ErrNoNVML then).
func TestBuildWithoutCgo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds packages")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	cmd := exec.Command(gobin, "build", "./signatures", "./energy")
	cmd.Dir = root
	cmd.Env = append(cmd.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("CGO_ENABLED=0 go build ./signatures ./energy: %v\n%s", err, out)
	}
}

// The public packages are configured by options, not globals: their
// exported variables are the sentinel errors and these tables, which
// nothing configures.
func TestNoConfigGlobals(t *testing.T) {
	tables := map[string][]string{
		"replay":     {"Fidelities"},
		"tier3":      {"AttentionOps", "Util"},
		"signatures": {"CuDNNAttentionOps"},
	}
	for _, pkg := range []string{"gpu", "replay", "tier1", "tier2", "tier3", "bench", "energy", "signatures"} {
		got, err := Vars(filepath.Join(root, pkg))
		if err != nil {
			t.Fatal(err)
		}
		if want := tables[pkg]; !slices.Equal(got, want) {
			t.Errorf("%s: exported variables %q, want %q", pkg, got, want)
		}
	}
}

// Vars sees exported variables, in blocks too, and leaves errors out.
func TestVarsSample(t *testing.T) {
	got, err := Vars(filepath.Join("testdata", "sample"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"Setting", "V"}; !slices.Equal(got, want) {
		t.Errorf("Vars = %q, want %q", got, want)
	}
}
