package tier3

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// The host test harnesses (hostbuild_test.go) compile their kernel
// variants in translation units that start with a shim including system
// headers: the C++20 ones of rd_host.h take about half a second a unit to
// read. hostPCH precompiles those headers once, into the user's cache
// directory.

var hostPCHs sync.Map // key -> *hostPCHOnce

type hostPCHOnce struct {
	once  sync.Once
	flags []string
}

// hostPCH returns the flags that make cxx, run with flags, include the
// system headers that shim includes from a precompiled header. It returns
// nil, and the sources include the headers themselves, where the compiler
// is not GCC or the header cannot be built.
func hostPCH(cxx string, flags []string, shim string) []string {
	var inc []string
	for _, l := range strings.Split(shim, "\n") {
		if strings.HasPrefix(l, "#include <") {
			inc = append(inc, l)
		}
	}
	if len(inc) == 0 {
		return nil
	}
	header := strings.Join(inc, "\n") + "\n"
	key := cxx + "\x00" + strings.Join(flags, " ") + "\x00" + header
	v, _ := hostPCHs.LoadOrStore(key, &hostPCHOnce{})
	o := v.(*hostPCHOnce)
	o.once.Do(func() { o.flags = buildPCH(cxx, flags, header) })
	return o.flags
}

// buildPCH builds header's precompiled form under the user's cache
// directory, keyed by the compiler's version, the flags and the header,
// unless it is there already.
func buildPCH(cxx string, flags []string, header string) []string {
	ver, err := exec.Command(cxx, "--version").Output()
	if err != nil || !bytes.Contains(ver, []byte("Free Software Foundation")) {
		return nil // not GCC: its .gch files mean nothing to the compiler
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return nil
	}
	h := sha256.Sum256([]byte(string(ver) + "\x00" + strings.Join(flags, " ") + "\x00" + header))
	dir := filepath.Join(base, "kreplay", "hostpch", hex.EncodeToString(h[:12]))
	use := []string{"-include", filepath.Join(dir, "pch.h")}
	if _, err := os.Stat(filepath.Join(dir, "pch.h.gch")); err == nil {
		return use
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return nil
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "tmp")
	if err != nil {
		return nil
	}
	defer os.RemoveAll(tmp)
	if os.WriteFile(filepath.Join(tmp, "pch.h"), []byte(header), 0o644) != nil {
		return nil
	}
	args := append(append([]string{}, flags...), "-x", "c++-header", filepath.Join(tmp, "pch.h"), "-o", filepath.Join(tmp, "pch.h.gch"))
	if exec.Command(cxx, args...).Run() != nil {
		return nil
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, serr := os.Stat(filepath.Join(dir, "pch.h.gch")); serr != nil {
			return nil // another process's rename won the race, or failed
		}
	}
	return use
}
