package cuda

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/internal/gputest"
	"github.com/kreplay/kreplay/internal/nvrtc"
)

// fillPTX is a hand-written kernel, fill_u32(u32 *dst, u32 v, u32 n), so
// that module loading and launching are tested without NVRTC. PTX 7.0 for
// sm_70 is JIT-compiled by any driver from CUDA 11.0 on.
const fillPTX = `.version 7.0
.target sm_70
.address_size 64

.visible .entry fill_u32(
	.param .u64 fill_u32_param_0,
	.param .u32 fill_u32_param_1,
	.param .u32 fill_u32_param_2
)
{
	.reg .pred %p<2>;
	.reg .b32 %r<6>;
	.reg .b64 %rd<5>;

	ld.param.u64 %rd1, [fill_u32_param_0];
	ld.param.u32 %r1, [fill_u32_param_1];
	ld.param.u32 %r2, [fill_u32_param_2];
	mov.u32 %r3, %ctaid.x;
	mov.u32 %r4, %ntid.x;
	mov.u32 %r5, %tid.x;
	mad.lo.s32 %r3, %r3, %r4, %r5;
	setp.ge.u32 %p1, %r3, %r2;
	@%p1 bra $L__done;
	cvta.to.global.u64 %rd2, %rd1;
	mul.wide.u32 %rd3, %r3, 4;
	add.s64 %rd4, %rd2, %rd3;
	st.global.u32 [%rd4], %r1;
$L__done:
	ret;
}
`

func TestGPULaunchHandWrittenPTX(t *testing.T) {
	withContext(t, func(ctx *Context) {
		mod, err := LoadData([]byte(fillPTX))
		if err != nil {
			t.Fatal(err)
		}
		cleanupIn(t, ctx, "Module.Unload", mod.Unload)
		if _, err := mod.Function("no_such_kernel"); !IsCode(err, CodeNotFound) {
			t.Errorf("looking up a missing kernel: %v, want CUDA_ERROR_NOT_FOUND", err)
		}
		f, err := mod.Function("fill_u32")
		if err != nil {
			t.Fatal(err)
		}
		if name, err := f.Name(); err != nil || name != "fill_u32" {
			t.Errorf("Name() = %q, %v", name, err)
		}
		params, err := f.Params()
		switch {
		case errors.Is(err, ErrUnsupported):
			t.Log("cuFuncGetParamInfo not available; argument checking is off")
		case err != nil:
			t.Errorf("Params: %v", err)
		default:
			want := []ParamInfo{{0, 8}, {8, 4}, {12, 4}}
			if fmt.Sprint(params) != fmt.Sprint(want) {
				t.Errorf("Params() = %v, want %v", params, want)
			}
		}
		regs, err := f.NumRegs()
		if err != nil || regs <= 0 {
			t.Errorf("NumRegs = %d, %v", regs, err)
		}
		maxThreads, err := f.MaxThreadsPerBlock()
		if err != nil || maxThreads < 256 {
			t.Errorf("MaxThreadsPerBlock = %d, %v", maxThreads, err)
		}
		blocks, err := f.MaxActiveBlocksPerSM(256, 0)
		if err != nil || blocks <= 0 {
			t.Errorf("MaxActiveBlocksPerSM(256, 0) = %d, %v", blocks, err)
		}
		t.Logf("fill_u32: %d registers, max %d threads/block, %d blocks of 256/SM", regs, maxThreads, blocks)

		const n = 100003
		s := mustStream(t, ctx)
		p := mustAlloc(t, ctx, 4*(n+1))
		if err := MemsetD32Async(p, 0xFFFFFFFF, n+1, s); err != nil {
			t.Fatal(err)
		}
		grid := [3]uint32{(n + 255) / 256, 1, 1}
		block := [3]uint32{256, 1, 1}
		if err := f.Launch(grid, block, 0, s, p, uint32(0xC0FFEE), uint32(n)); err != nil {
			t.Fatal(err)
		}
		got := make([]byte, 4*(n+1))
		if err := CopyDtoH(got, p, s); err != nil {
			t.Fatal(err)
		}
		for i := range n {
			if v := binary.LittleEndian.Uint32(got[4*i:]); v != 0xC0FFEE {
				t.Fatalf("element %d = %#x, want 0xc0ffee", i, v)
			}
		}
		if v := binary.LittleEndian.Uint32(got[4*n:]); v != 0xFFFFFFFF {
			t.Errorf("element past n overwritten: %#x", v)
		}

		// Bad launches are refused before reaching the GPU. Wrong argument
		// counts and widths can only be caught where the driver reports the
		// kernel's parameters; elsewhere they must not even be tried.
		if params != nil {
			if err := f.Launch(grid, block, 0, s, p, uint32(1)); err == nil || !strings.Contains(err.Error(), "takes 3 parameters") {
				t.Errorf("launch with a missing argument: %v", err)
			}
			if err := f.Launch(grid, block, 0, s, p, uint64(1), uint32(n)); err == nil || !strings.Contains(err.Error(), "argument 1 has 8 bytes") {
				t.Errorf("launch with a 64-bit value for a 32-bit parameter: %v", err)
			}
		}
		if err := f.Launch(grid, block, 0, s, p, 1, n); err == nil || !strings.Contains(err.Error(), "no fixed width") {
			t.Errorf("launch with Go ints: %v", err)
		}
		if err := f.Launch([3]uint32{0, 1, 1}, block, 0, s, p, uint32(1), uint32(n)); err == nil {
			t.Error("launch with a zero grid succeeded")
		}
		if err := s.Synchronize(); err != nil {
			t.Fatalf("stream broken by refused launches: %v", err)
		}

		// A function of an unloaded module is refused, not launched.
		if err := mod.Unload(); err != nil {
			t.Fatal(err)
		}
		if err := f.Launch(grid, block, 0, s, p, uint32(1), uint32(n)); !errors.Is(err, ErrDestroyed) {
			t.Errorf("launch after Unload: %v", err)
		}
		if _, err := LoadData([]byte("this is not a module")); err == nil {
			t.Error("loading garbage succeeded")
		}
	})
}

const saxpySrc = `extern "C" __global__ void saxpy(int n, float a, const float *x, float *y) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) y[i] = a * x[i] + y[i];
}
`

// Compile saxpy with NVRTC, load it as CUBIN and as PTX, launch, verify.
func TestGPUNVRTCSaxpy(t *testing.T) {
	d := requireGPU(t)
	gputest.Require(t, nvrtc.Init)
	major, minor, err := d.ComputeCapability()
	if err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{"sm", "compute"} {
		arch := fmt.Sprintf("--gpu-architecture=%s_%d%d", target, major, minor)
		res, err := nvrtc.Compile(saxpySrc, "saxpy.cu", []string{arch})
		if err != nil {
			t.Fatalf("%s: %v", arch, err)
		}
		image := res.PTX
		if target == "sm" {
			image = res.CUBIN
		}
		if len(image) == 0 {
			t.Fatalf("%s produced no image", arch)
		}
		t.Run(target, func(t *testing.T) {
			withContext(t, func(ctx *Context) { saxpy(t, ctx, image) })
		})
	}
}

func saxpy(t *testing.T, ctx *Context, image []byte) {
	mod, err := LoadData(image)
	if IsCode(err, CodeUnsupportedPTXVersion) {
		gputest.Skipf(t, "driver older than NVRTC: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	cleanupIn(t, ctx, "Module.Unload", mod.Unload)
	f, err := mod.Function("saxpy")
	if err != nil {
		t.Fatal(err)
	}
	if params, err := f.Params(); err == nil {
		if want := []ParamInfo{{0, 4}, {4, 4}, {8, 8}, {16, 8}}; fmt.Sprint(params) != fmt.Sprint(want) {
			t.Errorf("Params() = %v, want %v", params, want)
		}
	}

	const n = 1<<20 + 7
	const a = float32(2.5)
	x := make([]float32, n)
	y := make([]float32, n)
	for i := range x {
		x[i] = float32(i%1000) * 0.25
		y[i] = float32(i%7) - 3
	}
	s := mustStream(t, ctx)
	dx := mustAlloc(t, ctx, 4*n)
	dy := mustAlloc(t, ctx, 4*n)
	if err := CopyHtoD(dx, f32bytes(x), s); err != nil {
		t.Fatal(err)
	}
	if err := CopyHtoD(dy, f32bytes(y), s); err != nil {
		t.Fatal(err)
	}
	if err := f.Launch([3]uint32{(n + 255) / 256, 1, 1}, [3]uint32{256, 1, 1}, 0, s,
		int32(n), a, dx, dy); err != nil {
		t.Fatal(err)
	}
	out := make([]byte, 4*n)
	if err := CopyDtoH(out, dy, s); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		got := math.Float32frombits(binary.LittleEndian.Uint32(out[4*i:]))
		want := a*x[i] + y[i]
		if diff := math.Abs(float64(got - want)); diff > 1e-5*math.Max(1, math.Abs(float64(want))) {
			t.Fatalf("y[%d] = %g, want %g", i, got, want)
		}
	}
}

func f32bytes(v []float32) []byte {
	b := make([]byte, 0, 4*len(v))
	for _, f := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(f))
	}
	return b
}
