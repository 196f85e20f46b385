package nccl_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"github.com/kreplay/kreplay/internal/dl/dltest"
	"github.com/kreplay/kreplay/internal/nccl"
)

// ncclIncludeDirs returns the directories searched for nccl.h: $NCCL_HOME
// and $NCCL_ROOT's include, /usr/include, /usr/local/include and the CUDA
// toolkit's include directories.
func ncclIncludeDirs() []string {
	var dirs []string
	for _, env := range []string{"NCCL_HOME", "NCCL_ROOT"} {
		if r := os.Getenv(env); r != "" {
			dirs = append(dirs, filepath.Join(r, "include"))
		}
	}
	dirs = append(dirs, "/usr/include", "/usr/local/include")
	return append(dirs, dltest.IncludeDirs()...)
}

func findNCCLHeader() string {
	for _, d := range ncclIncludeDirs() {
		if _, err := os.Stat(filepath.Join(d, "nccl.h")); err == nil {
			return d
		}
	}
	return ""
}

// ncclConsts are the package's constants and the C expressions they must
// equal, each with the first NCCL_VERSION_CODE whose nccl.h declares it
// (checked against the nccl.h.in of the release tags 2.10 to 2.30).
func ncclConsts() []dltest.Const {
	c := func(name string, v int64, min int) dltest.Const {
		return dltest.Const{Expr: name, Val: v, Min: int64(min)}
	}
	return []dltest.Const{
		c("NCCL_UNIQUE_ID_BYTES", nccl.UniqueIDBytes, 0),
		c("sizeof(ncclUniqueId)", int64(unsafe.Sizeof(nccl.UniqueID{})), 0),
		c("ncclInt8", int64(nccl.Int8), 0),
		c("ncclChar", int64(nccl.Int8), 0),
		c("ncclUint8", int64(nccl.Uint8), 0),
		c("ncclInt32", int64(nccl.Int32), 0),
		c("ncclInt", int64(nccl.Int32), 0),
		c("ncclUint32", int64(nccl.Uint32), 0),
		c("ncclInt64", int64(nccl.Int64), 0),
		c("ncclUint64", int64(nccl.Uint64), 0),
		c("ncclFloat16", int64(nccl.Float16), 0),
		c("ncclHalf", int64(nccl.Float16), 0),
		c("ncclFloat32", int64(nccl.Float32), 0),
		c("ncclFloat", int64(nccl.Float32), 0),
		c("ncclFloat64", int64(nccl.Float64), 0),
		c("ncclDouble", int64(nccl.Float64), 0),
		c("ncclSum", int64(nccl.Sum), 0),
		c("ncclProd", int64(nccl.Prod), 0),
		c("ncclMax", int64(nccl.Max), 0),
		c("ncclMin", int64(nccl.Min), 0),
		c("ncclSuccess", int64(nccl.Success), 0),
		c("ncclUnhandledCudaError", int64(nccl.UnhandledCudaError), 0),
		c("ncclSystemError", int64(nccl.SystemError), 0),
		c("ncclInternalError", int64(nccl.InternalError), 0),
		c("ncclInvalidArgument", int64(nccl.InvalidArgument), 0),
		c("ncclInvalidUsage", int64(nccl.InvalidUsage), 0),
		// Later additions.
		c("ncclBfloat16", int64(nccl.Bfloat16), nccl.VersionCode(2, 10, 0)),
		c("ncclFloat8e4m3", int64(nccl.Float8e4m3), nccl.VersionCode(2, 24, 0)),
		c("ncclFloat8e5m2", int64(nccl.Float8e5m2), nccl.VersionCode(2, 24, 0)),
		c("ncclAvg", int64(nccl.Avg), nccl.VersionCode(2, 10, 0)),
		c("ncclRemoteError", int64(nccl.RemoteError), nccl.VersionCode(2, 13, 0)),
		c("ncclInProgress", int64(nccl.InProgress), nccl.VersionCode(2, 14, 0)),
		c("ncclTimeout", int64(nccl.Timeout), nccl.VersionCode(2, 30, 0)),
	}
}

// compileProbe compiles and runs a C program against nccl.h. nccl.h
// includes cuda_runtime.h, cuda_fp16.h, cuda_bf16.h and (2.24 and later)
// cuda_fp8.h; where the CUDA
// headers are not installed, stand-ins declaring what nccl.h uses
// (cudaStream_t, CUDART_VERSION) are searched after the system
// directories (-idirafter), so real headers always win.
func compileProbe(t *testing.T, dir, name, body string) (string, error) {
	t.Helper()
	stub := filepath.Join(dir, "stub")
	if err := os.MkdirAll(stub, 0o755); err != nil {
		t.Fatal(err)
	}
	stubs := map[string]string{
		"cuda_runtime.h": "#ifndef KR_STUB_CUDA_RUNTIME_H\n#define KR_STUB_CUDA_RUNTIME_H\n#define CUDART_VERSION 12000\ntypedef struct CUstream_st *cudaStream_t;\n#endif\n",
		"cuda_fp16.h":    "\n",
		"cuda_bf16.h":    "#define __CUDA_BF16_TYPES_EXIST__ 1\n",
		"cuda_fp8.h":     "\n",
	}
	for f, text := range stubs {
		if err := os.WriteFile(filepath.Join(stub, f), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	src := "#include <stdio.h>\n#include <nccl.h>\nint main(void) {\n" + body + "  return 0;\n}\n"
	cfile := filepath.Join(dir, name+".c")
	exe := filepath.Join(dir, name)
	if err := os.WriteFile(cfile, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-std=gnu11", "-w", "-o", exe, cfile}
	for _, d := range ncclIncludeDirs() {
		if st, err := os.Stat(d); err == nil && st.IsDir() && d != "/usr/include" {
			args = append(args, "-I"+d)
		}
	}
	args = append(args, "-idirafter", stub)
	out, err := exec.Command("cc", args...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("cc %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	out, err = exec.Command(exe).Output()
	if err != nil {
		return "", fmt.Errorf("running %s: %v", name, err)
	}
	return string(out), nil
}

// TestHeaderValues compiles a C probe against the installed nccl.h and
// compares every enumerator, NCCL_UNIQUE_ID_BYTES and sizeof(ncclUniqueId)
// with the package's. It runs wherever nccl.h is (on the GPU machine,
// /usr/include/nccl.h) and skips elsewhere.
func TestHeaderValues(t *testing.T) {
	inc := findNCCLHeader()
	if inc == "" {
		t.Skipf("nccl.h not found under %v", ncclIncludeDirs())
	}
	consts := ncclConsts()
	out, err := compileProbe(t, t.TempDir(), "probe", dltest.PrintConsts("NCCL_VERSION_CODE", consts))
	if err != nil {
		t.Fatal(err)
	}
	vals, err := dltest.ParseValues(out)
	if err != nil {
		t.Fatal(err)
	}
	code := dltest.CheckConsts(t, vals, "NCCL_VERSION_CODE", consts, "package nccl")
	t.Logf("checked against nccl.h of NCCL %s in %s", nccl.VersionString(int(code)), inc)
}
