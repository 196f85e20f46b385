/*
 * Function table and call wrappers for package nvrtc. init.go defines
 * kr_nv_fn and fills it with package dl; the static inline wrappers call
 * through it and return KR_NVRTC_NOT_LOADED for an empty slot.
 */
#ifndef KR_NVRTC_H
#define KR_NVRTC_H

#include "kr_nvrtc_types.h"

/* Not an nvrtcResult: returned by a wrapper whose entry point is absent. */
#define KR_NVRTC_NOT_LOADED (-1)

/* Slots of kr_nv_fn. init.go has one entry per slot. */
enum {
	KR_NV_nvrtcGetErrorString,
	KR_NV_nvrtcVersion,
	KR_NV_nvrtcGetNumSupportedArchs,
	KR_NV_nvrtcGetSupportedArchs,
	KR_NV_nvrtcCreateProgram,
	KR_NV_nvrtcDestroyProgram,
	KR_NV_nvrtcCompileProgram,
	KR_NV_nvrtcGetPTXSize,
	KR_NV_nvrtcGetPTX,
	KR_NV_nvrtcGetCUBINSize,
	KR_NV_nvrtcGetCUBIN,
	KR_NV_nvrtcGetProgramLogSize,
	KR_NV_nvrtcGetProgramLog,
	KR_NV_COUNT
};

extern void *kr_nv_fn[KR_NV_COUNT];

#define KR_NV(kr_api_) ((kr_pfn_##kr_api_)kr_nv_fn[KR_NV_##kr_api_])
#define KR_NV_CALL(kr_api_, ...) \
	kr_pfn_##kr_api_ kr_fp_ = KR_NV(kr_api_); \
	if (kr_fp_ == NULL) return KR_NVRTC_NOT_LOADED; \
	return kr_fp_(__VA_ARGS__)

static inline const char *kr_nvrtcGetErrorString(kr_nvrtcResult r) {
	kr_pfn_nvrtcGetErrorString kr_fp_ = KR_NV(nvrtcGetErrorString);
	return kr_fp_ == NULL ? NULL : kr_fp_(r);
}
static inline kr_nvrtcResult kr_nvrtcVersion(int *major, int *minor) { KR_NV_CALL(nvrtcVersion, major, minor); }
static inline kr_nvrtcResult kr_nvrtcGetNumSupportedArchs(int *n) { KR_NV_CALL(nvrtcGetNumSupportedArchs, n); }
static inline kr_nvrtcResult kr_nvrtcGetSupportedArchs(int *archs) { KR_NV_CALL(nvrtcGetSupportedArchs, archs); }
static inline kr_nvrtcResult kr_nvrtcCreateProgram(kr_nvrtcProgram *p, const char *src, const char *name) {
	KR_NV_CALL(nvrtcCreateProgram, p, src, name, 0, NULL, NULL);
}
static inline kr_nvrtcResult kr_nvrtcDestroyProgram(kr_nvrtcProgram *p) { KR_NV_CALL(nvrtcDestroyProgram, p); }
static inline kr_nvrtcResult kr_nvrtcCompileProgram(kr_nvrtcProgram p, int n, char **opts) {
	KR_NV_CALL(nvrtcCompileProgram, p, n, (const char *const *)opts);
}
static inline kr_nvrtcResult kr_nvrtcGetPTXSize(kr_nvrtcProgram p, size_t *n) { KR_NV_CALL(nvrtcGetPTXSize, p, n); }
static inline kr_nvrtcResult kr_nvrtcGetPTX(kr_nvrtcProgram p, char *out) { KR_NV_CALL(nvrtcGetPTX, p, out); }
static inline kr_nvrtcResult kr_nvrtcGetCUBINSize(kr_nvrtcProgram p, size_t *n) { KR_NV_CALL(nvrtcGetCUBINSize, p, n); }
static inline kr_nvrtcResult kr_nvrtcGetCUBIN(kr_nvrtcProgram p, char *out) { KR_NV_CALL(nvrtcGetCUBIN, p, out); }
static inline kr_nvrtcResult kr_nvrtcGetProgramLogSize(kr_nvrtcProgram p, size_t *n) { KR_NV_CALL(nvrtcGetProgramLogSize, p, n); }
static inline kr_nvrtcResult kr_nvrtcGetProgramLog(kr_nvrtcProgram p, char *out) { KR_NV_CALL(nvrtcGetProgramLog, p, out); }

#endif /* KR_NVRTC_H */
