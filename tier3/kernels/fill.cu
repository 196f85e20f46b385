// arange of tier 3: out[i] = start + i * step in the output's dtype
// (EW_DO), computed in double for floating outputs and in 64-bit integers
// otherwise, as PyTorch does for integer outputs. Prepended with util.cu and
// ew_common.cu. (fill_ and zero_ are elementwise copies of a constant; see
// elementwise.cu.)

typedef EwTy<EW_DO> EwO;

extern "C" __global__ void kr_arange(char *out, long long n, double start, double step, long long istart,
                                     long long istep) {
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
#if EW_DO >= EW_F16
		typename EwO::N v = (typename EwO::N)(start + step * (double)i);
#else
		typename EwO::N v = (typename EwO::N)(istart + istep * i);
#endif
		typename EwO::S *q = reinterpret_cast<typename EwO::S *>(out) + i;
		EW_ACCESS(q, sizeof(*q), sizeof(*q));
		*q = EwO::st(v);
	}
}
