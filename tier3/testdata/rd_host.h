// Host emulation of the CUDA subset the reduction-family kernels use, for
// reduce_host_test.go: one fiber per CUDA thread, one block at a time, on
// one OS thread, with barriers for __syncthreads and for the exchanges of
// warp shuffles.
#include <ucontext.h>
#include <vector>
#include <cstring>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <functional>
#include <algorithm>

struct dim3e { unsigned x = 0, y = 0, z = 0; };
dim3e blockDim, gridDim;
struct uint4 { unsigned x, y, z, w; };
struct uint2 { unsigned x, y; };

// RD_HOST tells a kernel source it is compiled for the host (a dynamic
// __shared__ array must then be a static one).
#define RD_HOST 1
#define __device__
#define __global__
#define __forceinline__ inline
#define __restrict__ __restrict
#define __shared__ static
#define __launch_bounds__(...)

template <class T> inline T min(T a, T b) { return a < b ? a : b; }
template <class T> inline T max(T a, T b) { return a > b ? a : b; }
inline float __int_as_float(int i) { float f; memcpy(&f, &i, 4); return f; }
inline float __uint_as_float(unsigned i) { float f; memcpy(&f, &i, 4); return f; }
inline unsigned __float_as_uint(float f) { unsigned i; memcpy(&i, &f, 4); return i; }
inline double __longlong_as_double(long long i) { double f; memcpy(&f, &i, 8); return f; }
inline float __expf(float x) { return std::exp(x); }
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
using std::exp; using std::log;
inline uint4 make_uint4(unsigned a, unsigned b, unsigned c, unsigned d) { return uint4{a, b, c, d}; }
// The fibers of a block share one OS thread: an atomic is a plain update.
inline unsigned atomicXor(unsigned *p, unsigned v) { unsigned o = *p; *p = o ^ v; return o; }

inline float emu_h2f(unsigned short h) { return (float)*reinterpret_cast<_Float16 *>(&h); }
inline unsigned short emu_f2h(float f) { _Float16 h = (_Float16)f; unsigned short u; memcpy(&u, &h, 2); return u; }

// Each CUDA thread of a block is a fiber (ucontext) on the one OS thread:
// a fiber runs until it waits at a barrier (__syncthreads, or a warp's
// shuffle exchange) or ends, and the scheduler runs the block's fibers in
// turn, each one whose barrier has opened. (OS threads, one per CUDA
// thread, spent most of the tests' time creating threads and waking them.)
struct EmuBar { int expected = 0, arrived = 0; unsigned gen = 0; };
struct EmuFiber { ucontext_t ctx; EmuBar *wait = nullptr; unsigned gen = 0; bool done = false; };
dim3e threadIdx, blockIdx;
int emu_lin;
static ucontext_t emu_main;
static std::vector<EmuFiber> emu_fibers;
static std::vector<std::unique_ptr<char[]>> emu_stacks;
static const size_t emu_stack_size = 64 << 10;
static EmuBar emu_block;
static std::vector<EmuBar> emu_warps;
static std::vector<unsigned long long> emu_slots;
static std::function<void()> *emu_fn;

// emu_wait arrives at b and, unless the last to, waits for it to open.
inline void emu_wait(EmuBar &b) {
	if (++b.arrived == b.expected) {
		b.arrived = 0;
		b.gen++;
		return;
	}
	EmuFiber &f = emu_fibers[emu_lin];
	f.wait = &b;
	f.gen = b.gen;
	swapcontext(&f.ctx, &emu_main);
}

// emu_drop leaves b for good (the thread ended), opening it if the others
// all wait.
inline void emu_drop(EmuBar &b) {
	b.expected--;
	if (b.expected > 0 && b.arrived == b.expected) {
		b.arrived = 0;
		b.gen++;
	}
}

inline void __syncthreads() { emu_wait(emu_block); }

template <class T> T emu_shfl(T v, int src) {
	int lane = emu_lin % 32, base = emu_lin - lane;
	unsigned long long b = 0;
	memcpy(&b, &v, sizeof(T));
	emu_slots[emu_lin] = b;
	emu_wait(emu_warps[emu_lin / 32]);
	unsigned long long r = emu_slots[base + src];
	emu_wait(emu_warps[emu_lin / 32]);
	T o;
	memcpy(&o, &r, sizeof(T));
	return o;
}
template <class T> T __shfl_xor_sync(unsigned, T v, int m, int width = 32) {
	int lane = emu_lin % 32;
	int src = lane ^ m;
	if ((src & ~(width - 1)) != (lane & ~(width - 1))) src = lane;
	return emu_shfl(v, src);
}
template <class T> T __shfl_down_sync(unsigned, T v, unsigned d, int width = 32) {
	int lane = emu_lin % 32;
	int seg = lane & ~(width - 1);
	int src = lane + (int)d;
	if (src >= seg + width) src = lane;
	return emu_shfl(v, src);
}
template <class T> T __shfl_up_sync(unsigned, T v, unsigned d, int width = 32) {
	int lane = emu_lin % 32;
	int seg = lane & ~(width - 1);
	int src = lane - (int)d;
	if (src < seg) src = lane;
	return emu_shfl(v, src);
}
template <class T> T __shfl_sync(unsigned, T v, int s, int width = 32) {
	int lane = emu_lin % 32;
	return emu_shfl(v, (lane & ~(width - 1)) + (s % width));
}

static void emu_entry() {
	(*emu_fn)();
	emu_drop(emu_block);
	emu_drop(emu_warps[emu_lin / 32]);
	emu_fibers[emu_lin].done = true;
}

// emu_run switches to fiber t with its thread and block indexes.
static void emu_run(int t, dim3e b, dim3e blk) {
	emu_lin = t;
	threadIdx = {(unsigned)(t % b.x), (unsigned)((t / b.x) % b.y), (unsigned)(t / (b.x * b.y))};
	blockIdx = blk;
	emu_fibers[t].wait = nullptr;
	swapcontext(&emu_main, &emu_fibers[t].ctx);
}

// emu_block_run runs one block's n threads to their end.
static void emu_block_run(int n, dim3e b, dim3e blk) {
	emu_block = EmuBar{n};
	emu_warps.assign(n / 32, EmuBar{32});
	emu_slots.assign(n, 0);
	emu_fibers.assign(n, EmuFiber{});
	while ((int)emu_stacks.size() < n) emu_stacks.emplace_back(new char[emu_stack_size]);
	for (int t = 0; t < n; t++) {
		ucontext_t &c = emu_fibers[t].ctx;
		getcontext(&c);
		c.uc_stack.ss_sp = emu_stacks[t].get();
		c.uc_stack.ss_size = emu_stack_size;
		c.uc_link = &emu_main;
		makecontext(&c, emu_entry, 0);
	}
	for (;;) {
		bool live = false, ran = false;
		for (int t = 0; t < n; t++) {
			EmuFiber &f = emu_fibers[t];
			if (f.done) continue;
			live = true;
			if (f.wait && f.wait->gen == f.gen) continue;
			emu_run(t, b, blk);
			ran = true;
		}
		if (!live) return;
		if (!ran) { fprintf(stderr, "block (%u,%u,%u): every thread waits at a barrier that cannot open\n", blk.x, blk.y, blk.z); exit(2); }
	}
}

// emu_launch runs fn for every thread of every block, one block at a time.
inline void emu_launch(dim3e g, dim3e b, std::function<void()> fn) {
	gridDim = g;
	blockDim = b;
	int n = b.x * b.y * b.z;
	if (n % 32) { fprintf(stderr, "block %d not a multiple of 32\n", n); exit(2); }
	emu_fn = &fn;
	for (unsigned bz = 0; bz < g.z; bz++)
		for (unsigned by = 0; by < g.y; by++)
			for (unsigned bx = 0; bx < g.x; bx++) emu_block_run(n, b, {bx, by, bz});
}
