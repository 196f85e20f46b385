/*
 * Private declarations of the NVRTC entry points package nvrtc uses. No
 * NVRTC header is needed to build; names carry a kr_ prefix so that this
 * file can be included next to the real <nvrtc.h>, which header_test.go
 * does to check these declarations. KR_ENUM(real) is int unless the
 * includer maps it to the real enum type; nvrtcProgram uses nvrtc.h's
 * struct tag, so kr_nvrtcProgram and nvrtcProgram are the same type.
 */
#ifndef KR_NVRTC_TYPES_H
#define KR_NVRTC_TYPES_H

#include <stddef.h>

#ifndef KR_ENUM
#define KR_ENUM(real) int
#endif

typedef KR_ENUM(nvrtcResult) kr_nvrtcResult;
typedef struct _nvrtcProgram *kr_nvrtcProgram;

#define KR_NVRTC_SUCCESS 0

typedef const char *(*kr_pfn_nvrtcGetErrorString)(kr_nvrtcResult result);
typedef kr_nvrtcResult (*kr_pfn_nvrtcVersion)(int *major, int *minor);
typedef kr_nvrtcResult (*kr_pfn_nvrtcGetNumSupportedArchs)(int *numArchs);
typedef kr_nvrtcResult (*kr_pfn_nvrtcGetSupportedArchs)(int *supportedArchs);
typedef kr_nvrtcResult (*kr_pfn_nvrtcCreateProgram)(kr_nvrtcProgram *prog, const char *src, const char *name,
	int numHeaders, const char *const *headers, const char *const *includeNames);
typedef kr_nvrtcResult (*kr_pfn_nvrtcDestroyProgram)(kr_nvrtcProgram *prog);
typedef kr_nvrtcResult (*kr_pfn_nvrtcCompileProgram)(kr_nvrtcProgram prog, int numOptions, const char *const *options);
typedef kr_nvrtcResult (*kr_pfn_nvrtcGetPTXSize)(kr_nvrtcProgram prog, size_t *ptxSizeRet);
typedef kr_nvrtcResult (*kr_pfn_nvrtcGetPTX)(kr_nvrtcProgram prog, char *ptx);
typedef kr_nvrtcResult (*kr_pfn_nvrtcGetCUBINSize)(kr_nvrtcProgram prog, size_t *cubinSizeRet);
typedef kr_nvrtcResult (*kr_pfn_nvrtcGetCUBIN)(kr_nvrtcProgram prog, char *cubin);
typedef kr_nvrtcResult (*kr_pfn_nvrtcGetProgramLogSize)(kr_nvrtcProgram prog, size_t *logSizeRet);
typedef kr_nvrtcResult (*kr_pfn_nvrtcGetProgramLog)(kr_nvrtcProgram prog, char *log);

#endif /* KR_NVRTC_TYPES_H */
