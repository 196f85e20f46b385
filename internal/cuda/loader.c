// The function table of the CUDA driver library (libcuda.so.1), the
// cuGetProcAddress_v2 call and the kernel parameter arrays.
//
// Nothing here links against CUDA: init.go opens the library with package
// dl and stores each entry point in kr_cu_fn, deciding per symbol whether
// to use cuGetProcAddress_v2 or dlsym.

#include <stdlib.h>
#include <string.h>

#include "kr_cuda.h"

void *kr_cu_fn[KR_FN_COUNT];

// kr_cu_getproc calls getproc, a cuGetProcAddress_v2 entry point, for
// symbol at the ABI of cudaVersion with legacy default stream semantics.
// It returns the entry point or NULL; *result receives the CUresult of the
// query and *status its CUdriverProcAddressQueryResult (-1 when getproc is
// NULL).
void *kr_cu_getproc(void *getproc, const char *symbol, int cudaVersion, int *result, int *status) {
	kr_pfn_cuGetProcAddress fn = (kr_pfn_cuGetProcAddress)getproc;
	kr_CUdriverProcAddressQueryResult st = 0;
	void *pfn = NULL;

	if (fn == NULL) {
		*result = KR_CUDA_ERROR_NOT_INITIALIZED;
		*status = -1;
		return NULL;
	}
	*result = (int)fn(symbol, &pfn, cudaVersion, KR_CU_GET_PROC_ADDRESS_LEGACY_STREAM, &st);
	*status = (int)st;
	return pfn;
}

// kr_params_new builds the kernelParams array for cuLaunchKernel in one C
// allocation: n pointers followed by a copy of blob; pointer i points at
// blob+offsets[i] inside the copy. Neither blob nor offsets is retained.
// Returns NULL if malloc fails or an offset is out of range. n may be 0,
// in which case a valid (never dereferenced) pointer is still returned.
void **kr_params_new(const void *blob, size_t blobLen, const size_t *offsets, int n) {
	size_t head, i;
	unsigned char *mem;
	void **params;

	if (n < 0) {
		return NULL;
	}
	head = (size_t)n * sizeof(void *);
	// Round the header up to 16 so blob keeps the alignment it was packed with.
	head = (head + 15) & ~(size_t)15;
	mem = malloc(head + blobLen + 16);
	if (mem == NULL) {
		return NULL;
	}
	memset(mem, 0, head + blobLen + 16);
	if (blobLen > 0) {
		memcpy(mem + head, blob, blobLen);
	}
	params = (void **)mem;
	for (i = 0; i < (size_t)n; i++) {
		if (offsets[i] > blobLen) {
			free(mem);
			return NULL;
		}
		params[i] = mem + head + offsets[i];
	}
	return params;
}

void kr_params_free(void **params) {
	free(params);
}
