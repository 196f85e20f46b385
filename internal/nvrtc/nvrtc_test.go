package nvrtc

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/kreplay/kreplay/internal/dl"
)

func TestSymbolsCoverEverySlotOnce(t *testing.T) {
	if err := dl.CheckSymbols(symbols, len(fnTable)); err != nil {
		t.Error(err)
	}
}

func TestCandidatesOrder(t *testing.T) {
	t.Setenv(LibraryEnv, "/opt/custom/libnvrtc.so.99")
	t.Setenv("CUDA_HOME", "/opt/cuda-13")
	t.Setenv("CUDA_PATH", "")
	c := candidates()
	index := func(s string) int {
		for i, v := range c {
			if v == s {
				return i
			}
		}
		t.Fatalf("%s not among candidates %v", s, c)
		return -1
	}
	order := []string{
		"/opt/custom/libnvrtc.so.99",
		"libnvrtc.so.13",
		"libnvrtc.so.12",
		"libnvrtc.so.11.2",
		"libnvrtc.so",
		"/opt/cuda-13/lib64/libnvrtc.so.13",
		"/opt/cuda-13/lib64/libnvrtc.so.12",
		"/usr/local/cuda/lib64/libnvrtc.so.13",
	}
	for i := 1; i < len(order); i++ {
		if index(order[i-1]) >= index(order[i]) {
			t.Errorf("%s should be tried before %s", order[i-1], order[i])
		}
	}
}

func TestInitWithoutLibrary(t *testing.T) {
	err := Init()
	if err == nil {
		t.Skip("NVRTC is installed; this test covers machines without it")
	}
	if !errors.Is(err, ErrNoLibrary) {
		t.Fatalf("Init error %v does not wrap ErrNoLibrary", err)
	}
	for _, name := range []string{"libnvrtc.so.13", "libnvrtc.so.12"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("Init error does not mention %s: %v", name, err)
		}
	}
	// Every call fails with the same cause, without crashing.
	if _, _, err := Version(); !errors.Is(err, ErrNoLibrary) {
		t.Errorf("Version: %v", err)
	}
	if _, err := Compile("__global__ void k() {}", "k.cu", nil); !errors.Is(err, ErrNoLibrary) {
		t.Errorf("Compile: %v", err)
	}
	if _, err := SupportedArchs(); !errors.Is(err, ErrNoLibrary) {
		t.Errorf("SupportedArchs: %v", err)
	}
	if _, err := Library(); !errors.Is(err, ErrNoLibrary) {
		t.Errorf("Library: %v", err)
	}
}

func TestInitConcurrent(t *testing.T) {
	errs := make([]error, 16)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = Init() }()
	}
	wg.Wait()
	for i := range errs {
		if errs[i] != errs[0] {
			t.Errorf("Init #%d = %v, #0 = %v", i, errs[i], errs[0])
		}
	}
}

func TestErrorFormat(t *testing.T) {
	tests := []struct {
		err  Error
		want string
	}{
		{Error{Call: "nvrtcCompileProgram", Code: 6, Name: "NVRTC_ERROR_COMPILATION",
			Log: "k.cu(1): error: identifier \"x\" is undefined\n\n1 error detected\n"},
			"nvrtcCompileProgram: NVRTC_ERROR_COMPILATION\nk.cu(1): error: identifier \"x\" is undefined\n\n1 error detected"},
		{Error{Call: "nvrtcVersion", Code: 3, Name: "NVRTC_ERROR_INVALID_INPUT"},
			"nvrtcVersion: NVRTC_ERROR_INVALID_INPUT"},
		{Error{Code: 99}, "nvrtcResult(99)"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
	wrapped := fmt.Errorf("compile k.cu: %w", &Error{Code: CodeCompilation})
	if !IsCode(wrapped, CodeCompilation) || IsCode(wrapped, CodeInvalidOption) || IsCode(errors.New("x"), CodeCompilation) {
		t.Error("IsCode does not see through wrapping or matches the wrong code")
	}
}

func TestResultNames(t *testing.T) {
	for code, name := range map[int]string{
		CodeSuccess: "NVRTC_SUCCESS", CodeOutOfMemory: "NVRTC_ERROR_OUT_OF_MEMORY",
		CodeProgramCreation: "NVRTC_ERROR_PROGRAM_CREATION_FAILURE", CodeInvalidInput: "NVRTC_ERROR_INVALID_INPUT",
		CodeInvalidProgram: "NVRTC_ERROR_INVALID_PROGRAM", CodeInvalidOption: "NVRTC_ERROR_INVALID_OPTION",
		CodeCompilation: "NVRTC_ERROR_COMPILATION", CodeBuiltinOperation: "NVRTC_ERROR_BUILTIN_OPERATION_FAILURE",
		CodeInternalError: "NVRTC_ERROR_INTERNAL_ERROR", CodeTimeFileWriteFailed: "NVRTC_ERROR_TIME_FILE_WRITE_FAILED",
	} {
		if resultNames[code] != name {
			t.Errorf("resultNames[%d] = %q, want %q", code, resultNames[code], name)
		}
	}
}
