/*
 * The CUDA declarations the schedule recorder (kr_sched.c) uses beyond
 * kr_inject_types.h: the 2D and 3D copy descriptors, the memory types and
 * results it reads. They mirror cuda.h of CUDA 13.0; kreplay's tests check
 * them, and the parameter words kr_sched.c reads, against the real headers
 * where those are installed (kr_sched_check.c).
 */
#ifndef KR_SCHED_TYPES_H
#define KR_SCHED_TYPES_H

#include "kr_inject_types.h"

#define KR_MEMORYTYPE_HOST 1
#define KR_MEMORYTYPE_ARRAY 3
#define KR_MEMORYTYPE_UNIFIED 4
#define KR_SUCCESS 0
#define KR_ERROR_NOT_READY 600
/* CU_STREAM_LEGACY and CU_STREAM_PER_THREAD, the default streams'
 * special handles. */
#define KR_STREAM_LEGACY 0x1
#define KR_STREAM_PER_THREAD 0x2

/* CUDA_MEMCPY2D: a 2D copy's descriptor. */
typedef struct {
	size_t srcXInBytes, srcY;
	int srcMemoryType;
	const void *srcHost;
	kr_CUdeviceptr srcDevice;
	void *srcArray;
	size_t srcPitch;
	size_t dstXInBytes, dstY;
	int dstMemoryType;
	void *dstHost;
	kr_CUdeviceptr dstDevice;
	void *dstArray;
	size_t dstPitch;
	size_t WidthInBytes, Height;
} kr_CUDA_MEMCPY2D;

/* CUDA_MEMCPY3D, and CUDA_MEMCPY3D_PEER, whose contexts sit where
 * CUDA_MEMCPY3D's reserved pointers do. */
typedef struct {
	size_t srcXInBytes, srcY, srcZ, srcLOD;
	int srcMemoryType;
	const void *srcHost;
	kr_CUdeviceptr srcDevice;
	void *srcArray;
	void *reserved0;
	size_t srcPitch, srcHeight;
	size_t dstXInBytes, dstY, dstZ, dstLOD;
	int dstMemoryType;
	void *dstHost;
	kr_CUdeviceptr dstDevice;
	void *dstArray;
	void *reserved1;
	size_t dstPitch, dstHeight;
	size_t WidthInBytes, Height, Depth;
} kr_CUDA_MEMCPY3D;

#endif /* KR_SCHED_TYPES_H */
