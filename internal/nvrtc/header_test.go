package nvrtc

import (
	"fmt"
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

	out := dltest.CompileCheck(t, inc, "nvrtc.h", b.String())
	vals, err := dltest.ParseValues(string(out))
	if err != nil {
		t.Fatal(err)
	}
	if len(vals) != len(consts) {
		t.Errorf("checked %d constants, want %d", len(vals), len(consts))
	}
	for name, want := range consts {
		if v, ok := vals[name]; ok && v != int64(want) {
			t.Errorf("%s = %d in nvrtc.h, %d in Go", name, v, want)
		}
	}
}
