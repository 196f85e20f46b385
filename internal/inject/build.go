package inject

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// sources is the recorder's C source: the recorder (kr_inject.c), its
// CUDA graphs (kr_inject_graph.c), what they share (kr_inject.h), the
// CUDA and CUPTI declarations they use (kr_inject_types.h) and the opening
// of libcuda and libcupti it shares with the schedule recorder (kr_open.h).
//
//go:embed csrc/kr_inject.c csrc/kr_inject_graph.c csrc/kr_inject.h csrc/kr_inject_types.h csrc/kr_open.h
var sources embed.FS

// units are the sources compiled, in order; the headers come with them.
var units = []string{"kr_inject.c", "kr_inject_graph.c"}

// Source returns the recorder's C source file name (kr_inject.c,
// kr_inject_graph.c, kr_inject.h, kr_inject_types.h, kr_open.h), or nil
// for another.
func Source(name string) []byte {
	b, err := sources.ReadFile("csrc/" + name)
	if err != nil {
		return nil
	}
	return b
}

// TypesHeader returns the header of CUDA and CUPTI declarations the
// recorder's source includes.
func TypesHeader() []byte { return Source("kr_inject_types.h") }

// ErrNoCompiler is Build's and BuildSchedule's error when no C compiler
// is found.
var ErrNoCompiler = errors.New("no C compiler to build kreplay's CUDA injection libraries (set CC)")

// Build compiles the recorder into dir (created if needed) with $CC, cc,
// gcc or clang, and returns the library's path. The library's name holds
// the sources' hash, so a built library is reused.
func Build(dir string) (string, error) {
	return build(sources, "libkr_inject", units, dir, "the kernel recorder")
}

// build compiles the units of the C sources in fsys's csrc directory into
// dir as name-HASH.so, HASH the sources' hash, unless that library is
// there; what names the library in errors.
func build(fsys embed.FS, name string, units []string, dir, what string) (string, error) {
	files, err := fsys.ReadDir("csrc")
	if err != nil {
		return "", err
	}
	read := func(f string) []byte {
		b, _ := fsys.ReadFile("csrc/" + f)
		return b
	}
	h := sha256.New()
	for _, f := range files {
		h.Write([]byte(f.Name()))
		h.Write(read(f.Name()))
	}
	lib := filepath.Join(dir, name+"-"+hex.EncodeToString(h.Sum(nil)[:6])+".so")
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
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.Name()), read(f.Name()), 0o644); err != nil {
			return "", err
		}
	}
	tmp := lib + ".tmp"
	args := []string{"-O2", "-shared", "-fPIC", "-o", tmp}
	for _, u := range units {
		args = append(args, filepath.Join(dir, u))
	}
	out, err := exec.Command(cc, append(args, "-ldl", "-lpthread")...).CombinedOutput()
	if err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("building %s with %s: %v: %s", what, cc, err, strings.TrimSpace(string(out)))
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
// library's default, 256 KiB; a buffer whose first bytes are mostly runs
// up to 8 MiB, when snapBytes is less).
func Env(lib, dir string, snapBytes int) []string {
	env := []string{"CUDA_INJECTION64_PATH=" + lib, "KREPLAY_INJECT_LIB=" + lib, "KREPLAY_INJECT_DIR=" + dir}
	if snapBytes > 0 {
		env = append(env, fmt.Sprintf("KREPLAY_INJECT_SNAP_BYTES=%d", snapBytes))
	}
	return env
}
