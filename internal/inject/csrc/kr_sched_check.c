/* Compiled by kreplay's tests where CUDA's headers are installed: fails to
 * compile if kr_sched_types.h, or the parameter words kr_sched.c reads
 * (its table calls[]), disagree with cuda.h or generated_cuda_meta.h. */
#include <cuda.h>
#include <cupti.h> /* includes generated_cuda_meta.h */
#include <stddef.h>
#include "kr_sched_types.h"
#include "kr_sched_calls.h"

#define SAME(a, b) _Static_assert(sizeof(a) == sizeof(b), "size of " #a)
#define OFF(a, b, f) _Static_assert(offsetof(a, f) == offsetof(b, f), #a "." #f)
#define EQ(a, b) _Static_assert((long long)(a) == (long long)(b), #a " != " #b)
#define WORD(t, f, w) _Static_assert(offsetof(t, f) == 8 * (w), #t "." #f " is not word " #w)

SAME(kr_CUDA_MEMCPY2D, CUDA_MEMCPY2D);
OFF(kr_CUDA_MEMCPY2D, CUDA_MEMCPY2D, srcMemoryType);
OFF(kr_CUDA_MEMCPY2D, CUDA_MEMCPY2D, srcDevice);
OFF(kr_CUDA_MEMCPY2D, CUDA_MEMCPY2D, dstMemoryType);
OFF(kr_CUDA_MEMCPY2D, CUDA_MEMCPY2D, dstDevice);
OFF(kr_CUDA_MEMCPY2D, CUDA_MEMCPY2D, WidthInBytes);
OFF(kr_CUDA_MEMCPY2D, CUDA_MEMCPY2D, Height);
SAME(kr_CUDA_MEMCPY3D, CUDA_MEMCPY3D);
SAME(kr_CUDA_MEMCPY3D, CUDA_MEMCPY3D_PEER);
OFF(kr_CUDA_MEMCPY3D, CUDA_MEMCPY3D, srcMemoryType);
OFF(kr_CUDA_MEMCPY3D, CUDA_MEMCPY3D, srcDevice);
OFF(kr_CUDA_MEMCPY3D, CUDA_MEMCPY3D, dstMemoryType);
OFF(kr_CUDA_MEMCPY3D, CUDA_MEMCPY3D, dstDevice);
OFF(kr_CUDA_MEMCPY3D, CUDA_MEMCPY3D, WidthInBytes);
OFF(kr_CUDA_MEMCPY3D, CUDA_MEMCPY3D, Depth);
OFF(kr_CUDA_MEMCPY3D, CUDA_MEMCPY3D_PEER, srcMemoryType);
OFF(kr_CUDA_MEMCPY3D, CUDA_MEMCPY3D_PEER, dstDevice);
OFF(kr_CUDA_MEMCPY3D, CUDA_MEMCPY3D_PEER, Depth);

EQ(KR_MEMORYTYPE_HOST, CU_MEMORYTYPE_HOST);
EQ(KR_MEMORYTYPE_ARRAY, CU_MEMORYTYPE_ARRAY);
EQ(KR_MEMORYTYPE_UNIFIED, CU_MEMORYTYPE_UNIFIED);
EQ(KR_SUCCESS, CUDA_SUCCESS);
EQ(KR_ERROR_NOT_READY, CUDA_ERROR_NOT_READY);
EQ(KR_STREAM_LEGACY, CU_STREAM_LEGACY);
EQ(KR_STREAM_PER_THREAD, CU_STREAM_PER_THREAD);

/* The words of calls[] in kr_sched.c. */
WORD(cuMemcpy_params, ByteCount, 2);
WORD(cuMemcpy_params, src, 1);
WORD(cuMemcpyAsync_params, ByteCount, 2);
WORD(cuMemcpyAsync_params, hStream, 3);
WORD(cuMemcpyPeer_params, srcDevice, 2);
WORD(cuMemcpyPeer_params, ByteCount, 4);
WORD(cuMemcpyPeerAsync_params, hStream, 5);
WORD(cuMemcpyHtoD_v2_params, ByteCount, 2);
WORD(cuMemcpyHtoDAsync_v2_params, hStream, 3);
WORD(cuMemcpyDtoH_v2_params, srcDevice, 1);
WORD(cuMemcpyDtoH_v2_params, ByteCount, 2);
WORD(cuMemcpyDtoHAsync_v2_params, hStream, 3);
WORD(cuMemcpyDtoD_v2_params, ByteCount, 2);
WORD(cuMemcpyDtoDAsync_v2_params, hStream, 3);
WORD(cuMemcpyDtoA_v2_params, ByteCount, 3);
WORD(cuMemcpyAtoD_v2_params, ByteCount, 3);
WORD(cuMemcpyAtoA_v2_params, ByteCount, 4);
WORD(cuMemcpyHtoA_v2_params, ByteCount, 3);
WORD(cuMemcpyHtoAAsync_v2_params, hStream, 4);
WORD(cuMemcpyAtoH_v2_params, ByteCount, 3);
WORD(cuMemcpyAtoHAsync_v2_params, hStream, 4);
WORD(cuMemcpy2DAsync_v2_params, hStream, 1);
WORD(cuMemcpy3DAsync_v2_params, hStream, 1);
WORD(cuMemcpy3DPeerAsync_params, hStream, 1);
WORD(cuMemsetD8_v2_params, N, 2);
WORD(cuMemsetD16_v2_params, N, 2);
WORD(cuMemsetD32_v2_params, N, 2);
WORD(cuMemsetD32Async_params, hStream, 3);
WORD(cuMemsetD2D8_v2_params, Width, 3);
WORD(cuMemsetD2D8_v2_params, Height, 4);
WORD(cuMemsetD2D32Async_params, hStream, 5);
WORD(cuGraphLaunch_params, hStream, 1);
WORD(cuStreamSynchronize_params, hStream, 0);
WORD(cuEventSynchronize_params, hEvent, 0);
WORD(cuStreamQuery_params, hStream, 0);
WORD(cuEventQuery_params, hEvent, 0);
WORD(cuEventRecord_params, hStream, 1);
WORD(cuEventRecordWithFlags_params, hStream, 1);
WORD(cuStreamWaitEvent_params, hEvent, 1);
WORD(cuMemcpyHtoDAsync_v2_ptsz_params, hStream, 3);
WORD(cuStreamWaitEvent_ptsz_params, hEvent, 1);

/* The argument lists the hook mode's wrappers take (kr_sched_calls.h):
 * laid out as a struct, each is its call's parameter struct's size (the
 * wrappers hand that layout to the decoder). */
#define KR_CHECK(fn, n, ...)                                                  \
	typedef struct {                                                      \
		KR_FLD##n(__VA_ARGS__)                                        \
	} chk_##fn;                                                           \
	_Static_assert(sizeof(chk_##fn) == sizeof(fn##_params), #fn " takes other arguments");
KR_CALLS_WITH_PARAMS(KR_CHECK)

int main(void) { return 0; }
