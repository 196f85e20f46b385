// PyTorch's reduce_kernel (ATen Reduce.cuh) for the faithful replay of a
// traced sum or mean over the innermost, contiguous elements of each
// output (tier3/reduce_pt.go). Prepended with util.cu and ew_common.cu.
//
// The launch is the traced one: block (BX, BY), one block per BY outputs
// (RP_SPLIT_Y 0: each row of threads, threadIdx.y, reduces its own output)
// or one block per output (RP_SPLIT_Y 1: the rows of threads split the
// output's inputs too and combine through shared memory). The threads of
// a row split the inputs: with RP_VEC > 1 each thread loads RP_VEC
// elements at once, vectors spaced by the threads that share the output,
// with RP_VEC accumulators (PyTorch's input-vectorized path); otherwise
// each thread reads RP_VT0 elements spaced by those threads, with RP_VT0
// accumulators. The row's partial sums are combined by warp shuffles
// (offsets 1, 2, 4, ... as PyTorch's block_x_reduce), through shared
// memory first when BX exceeds a warp. Thread x 0 (of row 0 when the
// rows split) writes sum * RP_SCALE-argument.
//
//   RP_IN, RP_OUT   dtype codes of ew_common.cu (EW_F16, EW_BF16, EW_F32)
//   RP_VEC          the input vector size (1: not vectorized)
//   RP_VT0          the values per thread of the scalar path
//   RP_SPLIT_Y      the rows of threads split the inputs of one output

typedef EwTy<RP_IN> rp_in;
typedef EwTy<RP_OUT> rp_out;

__device__ __forceinline__ float rp_ld(const typename rp_in::S *p) { return (float)rp_in::ld(*p); }

extern "C" __global__ void kr_reduce_pt(const typename rp_in::S *__restrict__ in, typename rp_out::S *__restrict__ out,
                                        unsigned outputs, unsigned R, float scale) {
	extern __shared__ float rp_shared[];
#if RP_SPLIT_Y
	const unsigned o = blockIdx.x;
	const unsigned t = threadIdx.x + threadIdx.y * blockDim.x, nt = blockDim.x * blockDim.y;
#else
	const unsigned o = blockIdx.x * blockDim.y + threadIdx.y;
	const unsigned t = threadIdx.x, nt = blockDim.x;
#endif
	float acc = 0.f;
	if (o < outputs) {
		const typename rp_in::S *data = in + (unsigned long long)o * R;
#if RP_VEC > 1
		// Rows start aligned to a vector (checked by the caller).
		float v[RP_VEC];
#pragma unroll
		for (int i = 0; i < RP_VEC; i++) v[i] = 0.f;
		unsigned idx = t;
		while (idx * RP_VEC + RP_VEC - 1 < R) {
			typename rp_in::S x[RP_VEC];
			ew_ldv<typename rp_in::S, RP_VEC>(data + idx * RP_VEC, x);
#pragma unroll
			for (int i = 0; i < RP_VEC; i++) v[i] += (float)rp_in::ld(x[i]);
			idx += nt;
		}
		unsigned tail = R - R % RP_VEC;
		if (tail + threadIdx.x < R && (!RP_SPLIT_Y || threadIdx.y == 0)) v[0] += rp_ld(data + tail + threadIdx.x);
#pragma unroll
		for (int i = 1; i < RP_VEC; i++) v[0] += v[i];
		acc = v[0];
#else
		float v[RP_VT0];
#pragma unroll
		for (int i = 0; i < RP_VT0; i++) v[i] = 0.f;
		for (unsigned idx = t; idx < R; idx += nt * RP_VT0) {
			typename rp_in::S x[RP_VT0];
			if (idx + (RP_VT0 - 1) * nt < R) {
#pragma unroll
				for (int i = 0; i < RP_VT0; i++) x[i] = data[idx + i * nt];
#pragma unroll
				for (int i = 0; i < RP_VT0; i++) v[i] += (float)rp_in::ld(x[i]);
			} else {
#pragma unroll
				for (int i = 0; i < RP_VT0; i++)
					if (idx + i * nt < R) v[i] += rp_ld(data + idx + i * nt);
			}
		}
#pragma unroll
		for (int i = 1; i < RP_VT0; i++) v[0] += v[i];
		acc = v[0];
#endif
	}
#if RP_SPLIT_Y
	// block_y_reduce: a tree over the rows through shared memory.
	{
		const unsigned base = threadIdx.x + threadIdx.y * blockDim.x;
		rp_shared[base] = acc;
		for (unsigned off = blockDim.y / 2; off > 0; off >>= 1) {
			__syncthreads();
			if (threadIdx.y < off && threadIdx.y + off < blockDim.y) {
				acc += rp_shared[base + off * blockDim.x];
				rp_shared[base] = acc;
			}
		}
		__syncthreads();
	}
#endif
	// block_x_reduce
	unsigned dimx = blockDim.x;
	if (dimx > 32) {
		const unsigned base = threadIdx.x + threadIdx.y * blockDim.x;
		rp_shared[base] = acc;
		for (unsigned off = dimx / 2; off >= 32; off >>= 1) {
			__syncthreads();
			if (threadIdx.x < off && threadIdx.x + off < blockDim.x) {
				acc += rp_shared[base + off];
				rp_shared[base] = acc;
			}
		}
		dimx = 32;
	}
	__syncthreads();
	for (unsigned off = 1; off < dimx; off <<= 1) acc += __shfl_down_sync(0xffffffffu, acc, off);
	if (o < outputs && threadIdx.x == 0 && (!RP_SPLIT_Y || threadIdx.y == 0)) out[o] = rp_out::st(acc * scale);
}
