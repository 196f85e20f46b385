// Host emulation of the CUDA subset the reduction-family kernels use, for
// reduce_host_test.go: one OS thread per CUDA thread, one block at a time,
// std::barrier for __syncthreads and for the exchanges of warp shuffles.
#include <barrier>
#include <thread>
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
thread_local dim3e threadIdx, blockIdx;
dim3e blockDim, gridDim;
struct uint4 { unsigned x, y, z, w; };
struct uint2 { unsigned x, y; };

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

inline float emu_h2f(unsigned short h) { return (float)*reinterpret_cast<_Float16 *>(&h); }
inline unsigned short emu_f2h(float f) { _Float16 h = (_Float16)f; unsigned short u; memcpy(&u, &h, 2); return u; }

struct EmuWarp {
	std::barrier<> bar{32};
	unsigned long long slot[32];
};
std::barrier<> *emu_block;
std::vector<std::unique_ptr<EmuWarp>> emu_warps;
thread_local int emu_lin;

inline void __syncthreads() { emu_block->arrive_and_wait(); }

template <class T> T emu_shfl(T v, int src) {
	EmuWarp &w = *emu_warps[emu_lin / 32];
	int lane = emu_lin % 32;
	unsigned long long b = 0;
	memcpy(&b, &v, sizeof(T));
	w.slot[lane] = b;
	w.bar.arrive_and_wait();
	unsigned long long r = w.slot[src];
	w.bar.arrive_and_wait();
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

// emu_launch runs fn for every thread of every block, one block at a time.
inline void emu_launch(dim3e g, dim3e b, std::function<void()> fn) {
	gridDim = g;
	blockDim = b;
	int n = b.x * b.y * b.z;
	if (n % 32) { fprintf(stderr, "block %d not a multiple of 32\n", n); exit(2); }
	for (unsigned bz = 0; bz < g.z; bz++)
		for (unsigned by = 0; by < g.y; by++)
			for (unsigned bx = 0; bx < g.x; bx++) {
				std::barrier<> bar(n);
				emu_block = &bar;
				emu_warps.clear();
				for (int w = 0; w < n / 32; w++) emu_warps.emplace_back(new EmuWarp);
				std::vector<std::thread> ts;
				for (int t = 0; t < n; t++) {
					ts.emplace_back([&, t] {
						emu_lin = t;
						threadIdx = {(unsigned)(t % b.x), (unsigned)((t / b.x) % b.y), (unsigned)(t / (b.x * b.y))};
						blockIdx = {bx, by, bz};
						fn();
						emu_block->arrive_and_drop();
						emu_warps[t / 32]->bar.arrive_and_drop();
					});
				}
				for (auto &t : ts) t.join();
			}
}
