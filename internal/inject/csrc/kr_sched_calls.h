/*
 * The driver calls the schedule recorder wraps in hook mode
 * (kr_sched_hook.c), with their arguments' types: KR_CALLS, and the
 * macros that spell an argument list out. kr_sched_check.c checks them
 * against CUDA's parameter structs where CUDA's headers are installed.
 */
#ifndef KR_SCHED_CALLS_H
#define KR_SCHED_CALLS_H

#include <stddef.h>

typedef unsigned long long kr_u64;

/* The argument lists of 1 to 11 arguments: declared, passed, and as the
 * fields of the parameter struct. */
#define KR_DECL1(t0) t0 a0
#define KR_DECL2(t0, t1) KR_DECL1(t0), t1 a1
#define KR_DECL3(t0, t1, t2) KR_DECL2(t0, t1), t2 a2
#define KR_DECL4(t0, t1, t2, t3) KR_DECL3(t0, t1, t2), t3 a3
#define KR_DECL5(t0, t1, t2, t3, t4) KR_DECL4(t0, t1, t2, t3), t4 a4
#define KR_DECL6(t0, t1, t2, t3, t4, t5) KR_DECL5(t0, t1, t2, t3, t4), t5 a5
#define KR_DECL10(t0, t1, t2, t3, t4, t5, t6, t7, t8, t9) KR_DECL6(t0, t1, t2, t3, t4, t5), t6 a6, t7 a7, t8 a8, t9 a9
#define KR_DECL11(t0, t1, t2, t3, t4, t5, t6, t7, t8, t9, t10) KR_DECL10(t0, t1, t2, t3, t4, t5, t6, t7, t8, t9), t10 a10
#define KR_FLD1(t0) t0 a0;
#define KR_FLD2(t0, t1) KR_FLD1(t0) t1 a1;
#define KR_FLD3(t0, t1, t2) KR_FLD2(t0, t1) t2 a2;
#define KR_FLD4(t0, t1, t2, t3) KR_FLD3(t0, t1, t2) t3 a3;
#define KR_FLD5(t0, t1, t2, t3, t4) KR_FLD4(t0, t1, t2, t3) t4 a4;
#define KR_FLD6(t0, t1, t2, t3, t4, t5) KR_FLD5(t0, t1, t2, t3, t4) t5 a5;
#define KR_FLD10(t0, t1, t2, t3, t4, t5, t6, t7, t8, t9) KR_FLD6(t0, t1, t2, t3, t4, t5) t6 a6; t7 a7; t8 a8; t9 a9;
#define KR_FLD11(t0, t1, t2, t3, t4, t5, t6, t7, t8, t9, t10) KR_FLD10(t0, t1, t2, t3, t4, t5, t6, t7, t8, t9) t10 a10;
#define KR_ARGS1 a0
#define KR_ARGS2 KR_ARGS1, a1
#define KR_ARGS3 KR_ARGS2, a2
#define KR_ARGS4 KR_ARGS3, a3
#define KR_ARGS5 KR_ARGS4, a4
#define KR_ARGS6 KR_ARGS5, a5
#define KR_ARGS10 KR_ARGS6, a6, a7, a8, a9
#define KR_ARGS11 KR_ARGS10, a10

/* Handles and pointers are void *, device pointers u64. */
#define H void *
#define D kr_u64
#define U unsigned int

/* KR_CALLS lists the recorded calls (kr_sched.c's calls[]) with their
 * arguments: X(name, count, types); KR_CALLS_WITH_PARAMS those of them
 * that have a CUPTI parameter struct in every CUDA 12 and 13 (all but
 * cuCtxSynchronize, wrapped as taking one pointer, see kr_sched_hook.c,
 * and its _v2). */
#define KR_CALLS(X)                                \
	KR_CALLS_WITH_PARAMS(X)                    \
	X(cuCtxSynchronize, 1, H)                  \
	X(cuCtxSynchronize_v2, 1, H)
#define KR_CALLS_WITH_PARAMS(X)                                                        \
	X(cuLaunchKernel, 11, H, U, U, U, U, U, U, U, H, void **, void **)             \
	X(cuLaunchCooperativeKernel, 10, H, U, U, U, U, U, U, U, H, void **)           \
	X(cuLaunchKernelEx, 4, const void *, H, void **, void **)                      \
	X(cuMemcpy, 3, D, D, size_t)                                                   \
	X(cuMemcpyAsync, 4, D, D, size_t, H)                                           \
	X(cuMemcpyPeer, 5, D, H, D, H, size_t)                                         \
	X(cuMemcpyPeerAsync, 6, D, H, D, H, size_t, H)                                 \
	X(cuMemcpyHtoD_v2, 3, D, const void *, size_t)                                 \
	X(cuMemcpyHtoDAsync_v2, 4, D, const void *, size_t, H)                         \
	X(cuMemcpyDtoH_v2, 3, void *, D, size_t)                                       \
	X(cuMemcpyDtoHAsync_v2, 4, void *, D, size_t, H)                               \
	X(cuMemcpyDtoD_v2, 3, D, D, size_t)                                            \
	X(cuMemcpyDtoDAsync_v2, 4, D, D, size_t, H)                                    \
	X(cuMemcpyDtoA_v2, 4, H, size_t, D, size_t)                                    \
	X(cuMemcpyAtoD_v2, 4, D, H, size_t, size_t)                                    \
	X(cuMemcpyAtoA_v2, 5, H, size_t, H, size_t, size_t)                            \
	X(cuMemcpyHtoA_v2, 4, H, size_t, const void *, size_t)                         \
	X(cuMemcpyHtoAAsync_v2, 5, H, size_t, const void *, size_t, H)                 \
	X(cuMemcpyAtoH_v2, 4, void *, H, size_t, size_t)                               \
	X(cuMemcpyAtoHAsync_v2, 5, void *, H, size_t, size_t, H)                       \
	X(cuMemcpy2D_v2, 1, const void *)                                              \
	X(cuMemcpy2DUnaligned_v2, 1, const void *)                                     \
	X(cuMemcpy2DAsync_v2, 2, const void *, H)                                      \
	X(cuMemcpy3D_v2, 1, const void *)                                              \
	X(cuMemcpy3DAsync_v2, 2, const void *, H)                                      \
	X(cuMemcpy3DPeer, 1, const void *)                                             \
	X(cuMemcpy3DPeerAsync, 2, const void *, H)                                     \
	X(cuMemsetD8_v2, 3, D, unsigned char, size_t)                                  \
	X(cuMemsetD16_v2, 3, D, unsigned short, size_t)                                \
	X(cuMemsetD32_v2, 3, D, U, size_t)                                             \
	X(cuMemsetD8Async, 4, D, unsigned char, size_t, H)                             \
	X(cuMemsetD16Async, 4, D, unsigned short, size_t, H)                           \
	X(cuMemsetD32Async, 4, D, U, size_t, H)                                        \
	X(cuMemsetD2D8_v2, 5, D, size_t, unsigned char, size_t, size_t)               \
	X(cuMemsetD2D16_v2, 5, D, size_t, unsigned short, size_t, size_t)              \
	X(cuMemsetD2D32_v2, 5, D, size_t, U, size_t, size_t)                           \
	X(cuMemsetD2D8Async, 6, D, size_t, unsigned char, size_t, size_t, H)           \
	X(cuMemsetD2D16Async, 6, D, size_t, unsigned short, size_t, size_t, H)         \
	X(cuMemsetD2D32Async, 6, D, size_t, U, size_t, size_t, H)                      \
	X(cuGraphLaunch, 2, H, H)                                                      \
	X(cuStreamSynchronize, 1, H)                                                   \
	X(cuEventSynchronize, 1, H)                                                    \
	X(cuStreamQuery, 1, H)                                                         \
	X(cuEventQuery, 1, H)                                                          \
	X(cuEventRecord, 2, H, H)                                                      \
	X(cuEventRecordWithFlags, 3, H, H, U)                                          \
	X(cuStreamWaitEvent, 3, H, H, U)

#endif /* KR_SCHED_CALLS_H */
