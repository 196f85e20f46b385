// Package cuda is a thin binding to the CUDA driver API, loaded at run time.
//
// # Run-time loading
//
// Nothing in this package links against CUDA, and no CUDA header or toolkit
// is needed to build it: the few types and function signatures it uses are
// declared by hand in kr_cuda_types.h. [Init] opens libcuda.so.1 with dlopen
// (the way github.com/NVIDIA/go-nvml opens NVML) and fills a table of entry
// points. Each entry point is resolved with cuGetProcAddress_v2, asking for
// the ABI of the CUDA version whose signature this package declares (for
// example cuMemAlloc at 3020, which is cuMemAlloc_v2, and cuEventElapsedTime
// at 12080, which is cuEventElapsedTime_v2 on drivers that have it). Where
// cuGetProcAddress_v2 is missing or does not know a symbol, the versioned
// name that cuda.h maps the call to is looked up with dlsym instead. Setting
// KREPLAY_CUDA_RESOLVE=dlsym in the environment skips cuGetProcAddress_v2.
//
// A machine without the driver is an ordinary condition, not a crash: Init
// returns an error that wraps [ErrNoDriver], and every other call returns
// that same error. A missing required entry point makes Init fail with an
// error naming the symbol and library; optional ones (cuFuncGetName,
// cuFuncGetParamInfo, cuDeviceGetPCIBusId) only disable what needs them.
//
// Errors returned by the driver are [*Error] values carrying the call, the
// CUresult code and the driver's name and description of it.
//
// # Threads and contexts
//
// A CUDA context is current per OS thread, while a goroutine may move from
// thread to thread between any two statements. So the rule is: every call
// that needs a context (allocation, copies, streams, events, modules,
// launches, graphs) must run on a goroutine locked to its OS thread with the
// context made current on that thread. [Context.Do] does exactly that for a
// function; [Context.Lock] and [Context.Unlock] do it for a stretch of code.
// Device queries ([Device.Name], [Device.Attribute], ...) and [Init] need no
// context. Handles (streams, events, memory, modules) belong to the context
// they were created in and may be used from any goroutine that follows the
// rule with that context.
//
// # Host memory and cgo
//
// Asynchronous copies read or write host memory after the call returns, so
// they must be given memory the Go garbage collector does not manage: pinned
// memory from [HostAlloc] or C memory from [PageableAlloc]. Go slices may be
// passed only to the synchronous helpers [CopyHtoD] and [CopyDtoH]. Kernel
// arguments are copied into C memory before launch (see [Function.Launch]).
package cuda
