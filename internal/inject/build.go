package inject

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

//go:embed csrc/kr_inject.c
var source []byte

//go:embed csrc/kr_inject_types.h
var typesHeader []byte

// Source returns the recorder's C source; it includes TypesHeader as
// "kr_inject_types.h".
func Source() []byte { return source }

// TypesHeader returns the header of CUDA and CUPTI declarations the
// recorder's source includes.
func TypesHeader() []byte { return typesHeader }

// ErrNoCompiler is wrapped by Build's error when no C compiler is found.
var ErrNoCompiler = errors.New("no C compiler to build the kernel recorder (set CC)")

// Build compiles the recorder into dir (created if needed) with $CC, cc,
// gcc or clang, and returns the library's path. The library's name holds
// the source's hash, so a built library is reused.
func Build(dir string) (string, error) {
	sum := sha256.Sum256(append(slices.Clone(source), typesHeader...))
	lib := filepath.Join(dir, "libkr_inject-"+hex.EncodeToString(sum[:6])+".so")
	if st, err := os.Stat(lib); err == nil && st.Size() > 0 {
		return lib, nil
	}
	cc, err := compiler()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	src := filepath.Join(dir, "kr_inject.c")
	if err := os.WriteFile(src, source, 0o644); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "kr_inject_types.h"), typesHeader, 0o644); err != nil {
		return "", err
	}
	tmp := lib + ".tmp"
	out, err := exec.Command(cc, "-O2", "-shared", "-fPIC", "-o", tmp, src, "-ldl", "-lpthread").CombinedOutput()
	if err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("building the kernel recorder with %s: %v: %s", cc, err, strings.TrimSpace(string(out)))
	}
	if err := os.Rename(tmp, lib); err != nil {
		return "", err
	}
	return lib, nil
}

func compiler() (string, error) {
	names := []string{"cc", "gcc", "clang"}
	if cc := os.Getenv("CC"); cc != "" {
		names = append([]string{strings.Fields(cc)[0]}, names...)
	}
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	return "", ErrNoCompiler
}

// Env returns the environment that makes a CUDA process load the recorder
// at lib and write into dir, keeping snapBytes of each buffer (0: the
// library's default, 256 KiB).
func Env(lib, dir string, snapBytes int) []string {
	env := []string{"CUDA_INJECTION64_PATH=" + lib, "KREPLAY_INJECT_LIB=" + lib, "KREPLAY_INJECT_DIR=" + dir}
	if snapBytes > 0 {
		env = append(env, fmt.Sprintf("KREPLAY_INJECT_SNAP_BYTES=%d", snapBytes))
	}
	return env
}
