// Host driver of examples/whatif/rmsnorm/rmsnorm_fused.cu (or, with KERNEL
// defined, another kernel of the row-norm ABI: rmsnorm_fused_bf16.cu) for
// host_test.go: compiled after tier3/testdata/rd_host.h (the CUDA shim: one
// fiber per CUDA thread, barriers for __syncthreads and the shuffles) and
// the kernel. Reads on stdin u32 rows, cols, grid, block, misalign; f32 eps;
// x (rows x cols u16), w (cols u16); runs the kernel with x, w and y
// offset by misalign elements from 16-byte boundaries; writes y.
#include <cstdint>

#ifndef KERNEL
#define KERNEL rmsnorm_fused
#endif

template <class T> static T rd() {
	T v;
	if (fread(&v, sizeof v, 1, stdin) != 1) { fprintf(stderr, "short read\n"); exit(2); }
	return v;
}

static u16 *buf(size_t n, unsigned misalign) {
	size_t bytes = ((n + misalign) * 2 + 15) & ~(size_t)15;
	u16 *p = (u16 *)aligned_alloc(16, bytes);
	memset(p, 0xff, bytes); // NaN in f16 and bf16: an output the kernel leaves unwritten shows
	return p + misalign;
}

int main() {
	unsigned rows = rd<unsigned>(), cols = rd<unsigned>(), grid = rd<unsigned>(), block = rd<unsigned>(), mis = rd<unsigned>();
	float eps = rd<float>();
	size_t n = (size_t)rows * cols;
	u16 *x = buf(n, mis), *w = buf(cols, mis), *y = buf(n, mis);
	if (fread(x, 2, n, stdin) != n || fread(w, 2, cols, stdin) != cols) { fprintf(stderr, "short read\n"); return 2; }
	emu_launch({grid, 1, 1}, {block, 1, 1}, [&] { KERNEL(x, w, y, (int)rows, (int)cols, eps); });
	fwrite(y, 2, n, stdout);
	return 0;
}
