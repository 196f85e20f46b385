package nvrtc

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/internal/gputest"
)

// These tests need NVRTC but no GPU. They skip without NVRTC, or fail
// under KREPLAY_REQUIRE_GPU=1.

const saxpySrc = `extern "C" __global__ void saxpy(int n, float a, const float *x, float *y) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) y[i] = a * x[i] + y[i];
}
`

func TestVersionAndArchs(t *testing.T) {
	gputest.Require(t, Init)
	lib, _ := Library()
	major, minor, err := Version()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("NVRTC %d.%d from %s", major, minor, lib)
	if major < 11 {
		t.Errorf("NVRTC version %d.%d, want 11 or newer", major, minor)
	}
	archs, err := SupportedArchs()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(archs, 90) {
		t.Errorf("supported archs %v do not include sm_90", archs)
	}
}

func TestCompilePTX(t *testing.T) {
	gputest.Require(t, Init)
	res, err := Compile(saxpySrc, "saxpy.cu", []string{"--gpu-architecture=compute_90"})
	if err != nil {
		t.Fatal(err)
	}
	ptx := string(res.PTX)
	for _, want := range []string{".version", ".target sm_90", ".entry saxpy"} {
		if !strings.Contains(ptx, want) {
			t.Errorf("PTX lacks %q:\n%s", want, ptx)
		}
	}
	if strings.ContainsRune(ptx, 0) {
		t.Error("PTX contains a NUL byte")
	}
}

func TestCompileCUBIN(t *testing.T) {
	gputest.Require(t, Init)
	res, err := Compile(saxpySrc, "saxpy.cu", []string{"--gpu-architecture=sm_90"})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(res.CUBIN, []byte("\x7fELF")) {
		t.Errorf("CUBIN does not start with the ELF magic: % x", res.CUBIN[:min(16, len(res.CUBIN))])
	}
}

func TestCompileErrorCarriesLog(t *testing.T) {
	gputest.Require(t, Init)
	_, err := Compile(`extern "C" __global__ void broken(float *y) { y[0] = undefined_name; }`,
		"broken.cu", []string{"--gpu-architecture=compute_90"})
	if err == nil {
		t.Fatal("compiling broken source succeeded")
	}
	if !IsCode(err, CodeCompilation) {
		t.Errorf("error %v is not NVRTC_ERROR_COMPILATION", err)
	}
	for _, want := range []string{"broken.cu", "undefined_name", "NVRTC_ERROR_COMPILATION"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error message lacks %q:\n%v", want, err)
		}
	}
}

func TestCompileBadOption(t *testing.T) {
	gputest.Require(t, Init)
	_, err := Compile(saxpySrc, "saxpy.cu", []string{"--no-such-nvrtc-option"})
	if !IsCode(err, CodeInvalidOption) {
		t.Errorf("bad option gave %v, want NVRTC_ERROR_INVALID_OPTION", err)
	}
}
