package nvrtc

// #include "kr_nvrtc.h"
import "C"

import (
	"errors"
	"fmt"
	"strings"
)

// Error is an NVRTC call that failed. For compilation failures Log holds
// the compiler's diagnostics.
type Error struct {
	Call string // e.g. "nvrtcCompileProgram"
	Code int    // the nvrtcResult value
	Name string // e.g. "NVRTC_ERROR_COMPILATION"
	Log  string // the program log, if any
}

// Error formats e as "call: NAME" followed, when there is a log, by the
// log on the next lines.
func (e *Error) Error() string {
	name := e.Name
	if name == "" {
		name = fmt.Sprintf("nvrtcResult(%d)", e.Code)
	}
	s := name
	if e.Call != "" {
		s = e.Call + ": " + name
	}
	if log := strings.TrimSpace(e.Log); log != "" {
		s += "\n" + log
	}
	return s
}

// IsCode reports whether err is, or wraps, an [*Error] with the given code.
func IsCode(err error, code int) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == code
}

// nvrtcResult values callers may test for (checked against nvrtc.h by
// header_test.go).
const (
	CodeSuccess             = 0
	CodeOutOfMemory         = 1
	CodeProgramCreation     = 2
	CodeInvalidInput        = 3
	CodeInvalidProgram      = 4
	CodeInvalidOption       = 5
	CodeCompilation         = 6
	CodeBuiltinOperation    = 7
	CodeInternalError       = 11
	CodeTimeFileWriteFailed = 12
)

// resultNames names the nvrtcResult values of CUDA 13.0, for when
// nvrtcGetErrorString is not available.
var resultNames = map[int]string{
	0: "NVRTC_SUCCESS", 1: "NVRTC_ERROR_OUT_OF_MEMORY", 2: "NVRTC_ERROR_PROGRAM_CREATION_FAILURE",
	3: "NVRTC_ERROR_INVALID_INPUT", 4: "NVRTC_ERROR_INVALID_PROGRAM", 5: "NVRTC_ERROR_INVALID_OPTION",
	6: "NVRTC_ERROR_COMPILATION", 7: "NVRTC_ERROR_BUILTIN_OPERATION_FAILURE",
	8: "NVRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION", 9: "NVRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION",
	10: "NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID", 11: "NVRTC_ERROR_INTERNAL_ERROR",
	12: "NVRTC_ERROR_TIME_FILE_WRITE_FAILED", 13: "NVRTC_ERROR_NO_PCH_CREATE_ATTEMPTED",
	14: "NVRTC_ERROR_PCH_CREATE_HEAP_EXHAUSTED", 15: "NVRTC_ERROR_PCH_CREATE",
	16: "NVRTC_ERROR_CANCELLED", 17: "NVRTC_ERROR_TIME_TRACE_FILE_WRITE_FAILED",
}

// resultName returns NVRTC's name for code (nvrtcGetErrorString when
// loaded, else the table).
func resultName(code int) string {
	if has(int(C.KR_NV_nvrtcGetErrorString)) {
		if s := C.kr_nvrtcGetErrorString(C.kr_nvrtcResult(code)); s != nil {
			if name := C.GoString(s); name != "" && !strings.Contains(name, "unknown") {
				return name
			}
		}
	}
	return resultNames[code]
}

// check turns an nvrtcResult into nil or an *Error.
func check(call string, r C.kr_nvrtcResult, log string) error {
	if r == C.KR_NVRTC_SUCCESS {
		return nil
	}
	if r == C.KR_NVRTC_NOT_LOADED {
		return fmt.Errorf("%s: %w", call, ErrUnsupported)
	}
	return &Error{Call: call, Code: int(r), Name: resultName(int(r)), Log: log}
}
