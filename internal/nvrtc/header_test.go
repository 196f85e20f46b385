package nvrtc

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/internal/dl/dltest"
)

// TestDeclarationsMatchNvrtcHeader compiles a program that includes the
// real nvrtc.h next to kr_nvrtc_types.h and statically asserts that each
// kr_pfn_ typedef is the type of the function nvrtc.h declares, then
// compares the nvrtcResult values hard-coded in Go. It skips only when no
// nvrtc.h is installed.
func TestDeclarationsMatchNvrtcHeader(t *testing.T) {
	inc := dltest.FindHeader("nvrtc.h")
	if inc == "" {
		t.Skipf("no nvrtc.h under %v", dltest.CUDARoots())
	}
	consts := map[string]int{
		"NVRTC_SUCCESS": CodeSuccess, "NVRTC_ERROR_OUT_OF_MEMORY": CodeOutOfMemory,
		"NVRTC_ERROR_PROGRAM_CREATION_FAILURE": CodeProgramCreation, "NVRTC_ERROR_INVALID_INPUT": CodeInvalidInput,
		"NVRTC_ERROR_INVALID_PROGRAM": CodeInvalidProgram, "NVRTC_ERROR_INVALID_OPTION": CodeInvalidOption,
		"NVRTC_ERROR_COMPILATION": CodeCompilation, "NVRTC_ERROR_BUILTIN_OPERATION_FAILURE": CodeBuiltinOperation,
		"NVRTC_ERROR_INTERNAL_ERROR": CodeInternalError, "NVRTC_ERROR_TIME_FILE_WRITE_FAILED": CodeTimeFileWriteFailed,
	}
	var b strings.Builder
	b.WriteString(`#include <stdio.h>
#include <nvrtc.h>
#define KR_ENUM(real) real
#include "kr_nvrtc_types.h"
_Static_assert(KR_NVRTC_SUCCESS == NVRTC_SUCCESS, "KR_NVRTC_SUCCESS");
_Static_assert(sizeof(kr_nvrtcResult) == 4, "nvrtcResult is not 32 bits");
int main(void) {
	{ kr_nvrtcProgram kr_p = 0; nvrtcProgram p = kr_p; (void)p; }
`)
	for _, s := range symbols {
		fmt.Fprintf(&b, "\t_Static_assert(__builtin_types_compatible_p(kr_pfn_%s, __typeof__(&%s)), \"kr_pfn_%s does not match nvrtc.h\");\n",
			s.Name, s.Name, s.Name)
	}
	for name := range consts {
		fmt.Fprintf(&b, "\tprintf(\"%s %%d\\n\", (int)%s);\n", name, name)
	}
	b.WriteString("\treturn 0;\n}\n")

	pkgDir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	src, bin := filepath.Join(dir, "check.c"), filepath.Join(dir, "check")
	if err := os.WriteFile(src, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "cc"
	}
	out, err := exec.Command(cc, "-Werror", "-Wno-deprecated-declarations", "-I", inc, "-I", pkgDir, "-o", bin, src).CombinedOutput()
	if err != nil {
		t.Fatalf("declarations do not match %s/nvrtc.h: %v\n%s", inc, err, out)
	}
	out, err = exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	n := 0
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 2 {
			t.Fatalf("bad line %q", sc.Text())
		}
		v, _ := strconv.Atoi(f[1])
		if v != consts[f[0]] {
			t.Errorf("%s = %d in nvrtc.h, %d in Go", f[0], v, consts[f[0]])
		}
		n++
	}
	if n != len(consts) {
		t.Errorf("checked %d constants, want %d", n, len(consts))
	}
}
