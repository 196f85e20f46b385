package cuda

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestErrorFormat(t *testing.T) {
	tests := []struct {
		err  Error
		want string
	}{
		{Error{Call: "cuMemAlloc", Code: 2, Name: "CUDA_ERROR_OUT_OF_MEMORY", Msg: "out of memory"},
			"cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY (out of memory)"},
		{Error{Call: "cuInit", Code: 100, Name: "CUDA_ERROR_NO_DEVICE"},
			"cuInit: CUDA_ERROR_NO_DEVICE"},
		{Error{Code: 1, Name: "CUDA_ERROR_INVALID_VALUE", Msg: "invalid argument"},
			"CUDA_ERROR_INVALID_VALUE (invalid argument)"},
		{Error{Call: "cuLaunchKernel", Code: 12345},
			"cuLaunchKernel: CUresult(12345)"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("%+v.Error() = %q, want %q", tt.err, got, tt.want)
		}
	}
}

func TestIsCode(t *testing.T) {
	oom := &Error{Call: "cuMemAlloc", Code: CodeOutOfMemory}
	tests := []struct {
		name string
		err  error
		code int
		want bool
	}{
		{"direct", oom, CodeOutOfMemory, true},
		{"wrapped", fmt.Errorf("alloc weights: %w", oom), CodeOutOfMemory, true},
		{"double wrapped", fmt.Errorf("a: %w", fmt.Errorf("b: %w", oom)), CodeOutOfMemory, true},
		{"other code", oom, CodeInvalidValue, false},
		{"not an Error", errors.New("out of memory"), CodeOutOfMemory, false},
		{"nil", nil, CodeOutOfMemory, false},
	}
	for _, tt := range tests {
		if got := IsCode(tt.err, tt.code); got != tt.want {
			t.Errorf("%s: IsCode = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// IsSticky is true for the codes that leave the context unusable, through
// wrapping, and false for the errors a context survives.
func TestIsSticky(t *testing.T) {
	fault := &Error{Call: "cuStreamSynchronize", Code: CodeIllegalAddress, Name: "CUDA_ERROR_ILLEGAL_ADDRESS"}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"illegal address", fault, true},
		{"wrapped", fmt.Errorf("measure: %w", fault), true},
		{"double wrapped", fmt.Errorf("a: %w", fmt.Errorf("b: %w", fault)), true},
		{"joined", errors.Join(errors.New("other"), fault), true},
		{"ECC uncorrectable", &Error{Code: CodeECCUncorrectable}, true},
		{"contained", &Error{Code: CodeContained}, true},
		{"launch timeout", &Error{Code: CodeLaunchTimeout}, true},
		{"assert", &Error{Code: CodeAssert}, true},
		{"hardware stack error", &Error{Code: CodeHardwareStackError}, true},
		{"illegal instruction", &Error{Code: CodeIllegalInstruction}, true},
		{"misaligned address", &Error{Code: CodeMisalignedAddress}, true},
		{"invalid address space", &Error{Code: CodeInvalidAddressSpace}, true},
		{"invalid PC", &Error{Code: CodeInvalidPC}, true},
		{"launch failed", &Error{Code: CodeLaunchFailed}, true},
		{"tensor memory leak", &Error{Code: CodeTensorMemoryLeak}, true},
		{"out of memory", &Error{Code: CodeOutOfMemory}, false},
		{"out of resources", &Error{Code: CodeLaunchOutOfResources}, false},
		{"invalid value", fmt.Errorf("x: %w", &Error{Code: CodeInvalidValue}), false},
		{"invalid context", &Error{Code: CodeInvalidContext}, false},
		{"unknown", &Error{Code: CodeUnknown}, false},
		{"named like one, not an Error", errors.New("CUDA_ERROR_ILLEGAL_ADDRESS"), false},
		{"nil", nil, false},
	}
	for _, tt := range tests {
		if got := IsSticky(tt.err); got != tt.want {
			t.Errorf("%s: IsSticky(%v) = %v, want %v", tt.name, tt.err, got, tt.want)
		}
	}
}

func TestCheck(t *testing.T) {
	if err := check("cuInit", 0); err != nil {
		t.Errorf("check(CUDA_SUCCESS) = %v", err)
	}
	err := check("cuMemAlloc", CodeOutOfMemory)
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("check returned %T, want *Error", err)
	}
	if e.Call != "cuMemAlloc" || e.Code != CodeOutOfMemory || e.Name != "CUDA_ERROR_OUT_OF_MEMORY" {
		t.Errorf("check built %+v", e)
	}
	if !strings.HasPrefix(err.Error(), "cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY") {
		t.Errorf("message %q", err)
	}
}

func TestErrorNameTable(t *testing.T) {
	seen := make(map[string]int)
	for code, name := range errorNames {
		if code == 0 {
			if name != "CUDA_SUCCESS" {
				t.Errorf("code 0 named %s", name)
			}
			continue
		}
		if !strings.HasPrefix(name, "CUDA_ERROR_") {
			t.Errorf("code %d named %q", code, name)
		}
		if prev, dup := seen[name]; dup {
			t.Errorf("%s used for %d and %d", name, prev, code)
		}
		seen[name] = code
	}
	// The exported codes must agree with the name table.
	for code, name := range map[int]string{
		CodeInvalidValue: "CUDA_ERROR_INVALID_VALUE", CodeOutOfMemory: "CUDA_ERROR_OUT_OF_MEMORY",
		CodeNotInitialized: "CUDA_ERROR_NOT_INITIALIZED", CodeDeinitialized: "CUDA_ERROR_DEINITIALIZED",
		CodeStubLibrary: "CUDA_ERROR_STUB_LIBRARY", CodeNoDevice: "CUDA_ERROR_NO_DEVICE",
		CodeInvalidDevice: "CUDA_ERROR_INVALID_DEVICE", CodeInvalidImage: "CUDA_ERROR_INVALID_IMAGE",
		CodeInvalidContext: "CUDA_ERROR_INVALID_CONTEXT", CodeNoBinaryForGPU: "CUDA_ERROR_NO_BINARY_FOR_GPU",
		CodeInvalidPTX: "CUDA_ERROR_INVALID_PTX", CodeUnsupportedPTXVersion: "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
		CodeInvalidHandle: "CUDA_ERROR_INVALID_HANDLE", CodeNotFound: "CUDA_ERROR_NOT_FOUND",
		CodeNotReady: "CUDA_ERROR_NOT_READY", CodeIllegalAddress: "CUDA_ERROR_ILLEGAL_ADDRESS",
		CodeLaunchOutOfResources: "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", CodeLaunchFailed: "CUDA_ERROR_LAUNCH_FAILED",
		CodeNotPermitted: "CUDA_ERROR_NOT_PERMITTED", CodeNotSupported: "CUDA_ERROR_NOT_SUPPORTED",
		CodeECCUncorrectable: "CUDA_ERROR_ECC_UNCORRECTABLE", CodeContained: "CUDA_ERROR_CONTAINED",
		CodeLaunchTimeout: "CUDA_ERROR_LAUNCH_TIMEOUT", CodeAssert: "CUDA_ERROR_ASSERT",
		CodeHardwareStackError: "CUDA_ERROR_HARDWARE_STACK_ERROR", CodeIllegalInstruction: "CUDA_ERROR_ILLEGAL_INSTRUCTION",
		CodeMisalignedAddress: "CUDA_ERROR_MISALIGNED_ADDRESS", CodeInvalidAddressSpace: "CUDA_ERROR_INVALID_ADDRESS_SPACE",
		CodeInvalidPC: "CUDA_ERROR_INVALID_PC", CodeTensorMemoryLeak: "CUDA_ERROR_TENSOR_MEMORY_LEAK",
		CodeStreamCaptureUnsupported: "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED",
		CodeStreamCaptureInvalidated: "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED",
		CodeStreamCaptureWrongThread: "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD",
		CodeUnknown:                  "CUDA_ERROR_UNKNOWN",
	} {
		if errorNames[code] != name {
			t.Errorf("errorNames[%d] = %q, want %q", code, errorNames[code], name)
		}
	}
	if got := ErrorName(424242); got != "" && !loaded() {
		t.Errorf("ErrorName(unknown) = %q", got)
	}
}
