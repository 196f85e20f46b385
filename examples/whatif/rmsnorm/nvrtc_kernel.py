"""A CUDA C++ kernel compiled with NVRTC and launched with the CUDA driver
API, both through ctypes: no nvcc, no cupy, no cuda-python.

fused_model.py launches rmsnorm_fused.cu's kernels with it. The kernel is
compiled as kreplay's what-if compiles it (tier3.Source.options): for the
device's real architecture, sm_XY, with --std=c++17 and -default-device,
to a CUBIN that the driver loads into the context current on the calling
thread (the primary context PyTorch made current there). A launch goes on
the stream given (PyTorch's current stream) with the tensors' data_ptr().

The library search, the options and the argument packing are plain Python
that test_fused.py checks without a GPU; everything that calls into NVRTC
or the driver needs them installed (the driver and a GPU for the driver).
"""
import ctypes
import glob
import os

# NVRTC_LIB_ENV names the NVRTC library to load before any other: kreplay's
# own variable (internal/nvrtc), so that the what-if and this program can
# be pinned to one compiler.
NVRTC_LIB_ENV = "KREPLAY_NVRTC_LIB"

# Sonames tried through the dynamic loader after the PyTorch install's
# copies, newest first (as kreplay's internal/nvrtc tries them).
NVRTC_SONAMES = ("libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2", "libnvrtc.so")

# Where the PyTorch install keeps NVRTC, relative to a site-packages
# directory: the CUDA wheels' nvidia/cuda_nvrtc/lib (CUDA 12) or
# nvidia/cu13/lib (CUDA 13), and torch/lib for builds that bundle it.
NVRTC_GLOBS = ("nvidia/cuda_nvrtc/lib/libnvrtc.so*", "nvidia/cu*/lib/libnvrtc.so*", "torch/lib/libnvrtc*.so*")


def compile_options(major, minor):
    """NVRTC's options for a device of compute capability major.minor:
    the ones kreplay's what-if compiles a .cu kernel with."""
    if major < 1 or minor < 0:
        raise ValueError(f"compute capability {major}.{minor}: not a device's")
    return [f"--gpu-architecture=sm_{major}{minor}", "--std=c++17", "-default-device"]


def nvrtc_candidates(env, site_dirs, cuda_major=None):
    """The NVRTC libraries to try, in order: env[NVRTC_LIB_ENV], then the
    PyTorch install's copies under site_dirs (those of CUDA major version
    cuda_major first; libnvrtc-builtins, a part NVRTC loads itself, left
    out), then NVRTC_SONAMES through the loader. No duplicates."""
    out = []

    def add(p):
        if p and p not in out:
            out.append(p)

    add(env.get(NVRTC_LIB_ENV, ""))
    found = []
    for d in site_dirs:
        for pattern in NVRTC_GLOBS:
            for p in sorted(glob.glob(os.path.join(d, pattern))):
                if "builtins" not in os.path.basename(p) and os.path.isfile(p):
                    found.append(p)
    if cuda_major is not None:
        tag = f".so.{cuda_major}"
        found.sort(key=lambda p: 0 if tag in os.path.basename(p) else 1)  # stable: glob order within each
    for p in found:
        add(p)
    for n in NVRTC_SONAMES:
        add(n)
    return out


def builtins_beside(path):
    """The libnvrtc-builtins libraries in the directory of an NVRTC given
    by its path (none for a bare soname). NVRTC dlopens its builtins by
    soname; loading them first from beside it lets that find them where
    the directory is not on the loader's path (a pip wheel's lib/)."""
    d = os.path.dirname(path)
    if not d:
        return []
    return sorted(p for p in glob.glob(os.path.join(d, "libnvrtc-builtins*.so*")) if os.path.isfile(p))


class Error(RuntimeError):
    """A failed NVRTC or driver call, named with its code and message."""


class NVRTC:
    """libnvrtc through ctypes: load() tries nvrtc_candidates in order."""

    def __init__(self, lib, path):
        self.lib, self.path = lib, path
        P, I, S = ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t
        sig = {
            "nvrtcVersion": [ctypes.POINTER(I), ctypes.POINTER(I)],
            "nvrtcCreateProgram": [ctypes.POINTER(P), ctypes.c_char_p, ctypes.c_char_p, I, P, P],
            "nvrtcCompileProgram": [P, I, ctypes.POINTER(ctypes.c_char_p)],
            "nvrtcDestroyProgram": [ctypes.POINTER(P)],
            "nvrtcGetProgramLogSize": [P, ctypes.POINTER(S)],
            "nvrtcGetProgramLog": [P, ctypes.c_char_p],
            "nvrtcGetCUBINSize": [P, ctypes.POINTER(S)],
            "nvrtcGetCUBIN": [P, ctypes.c_char_p],
        }
        for name, args in sig.items():
            fn = getattr(lib, name)  # AttributeError names a missing entry point
            fn.argtypes, fn.restype = args, I
        lib.nvrtcGetErrorString.argtypes, lib.nvrtcGetErrorString.restype = [I], ctypes.c_char_p

    @classmethod
    def load(cls, candidates):
        errors = []
        for c in candidates:
            for b in builtins_beside(c):
                try:
                    ctypes.CDLL(b, mode=ctypes.RTLD_GLOBAL)
                except OSError as e:
                    errors.append(f"{b}: {e}")
            try:
                return cls(ctypes.CDLL(c), c)
            except (OSError, AttributeError) as e:
                errors.append(f"{c}: {e}")
        raise Error("no NVRTC library could be loaded (set $%s to one): %s" % (NVRTC_LIB_ENV, "; ".join(errors)))

    def _check(self, rc, what):
        if rc != 0:
            msg = self.lib.nvrtcGetErrorString(rc)
            raise Error(f"{what}: NVRTC error {rc} ({msg.decode() if msg else '?'})")

    def version(self):
        ma, mi = ctypes.c_int(), ctypes.c_int()
        self._check(self.lib.nvrtcVersion(ctypes.byref(ma), ctypes.byref(mi)), "nvrtcVersion")
        return ma.value, mi.value

    def compile(self, source, name, options):
        """The CUBIN of source (file name name, for messages) compiled with
        options; an Error with the compiler's log when it does not compile."""
        prog = ctypes.c_void_p()
        self._check(self.lib.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), name.encode(), 0, None, None),
                    "nvrtcCreateProgram")
        try:
            opts = (ctypes.c_char_p * len(options))(*[o.encode() for o in options])
            rc = self.lib.nvrtcCompileProgram(prog, len(options), opts)
            if rc != 0:
                n = ctypes.c_size_t()
                self.lib.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
                log = ctypes.create_string_buffer(max(1, n.value))
                self.lib.nvrtcGetProgramLog(prog, log)
                msg = self.lib.nvrtcGetErrorString(rc)
                raise Error(f"compiling {name} with {' '.join(options)}: NVRTC error {rc} "
                            f"({msg.decode() if msg else '?'}):\n{log.value.decode(errors='replace')}")
            n = ctypes.c_size_t()
            self._check(self.lib.nvrtcGetCUBINSize(prog, ctypes.byref(n)), "nvrtcGetCUBINSize")
            if n.value == 0:
                raise Error(f"compiling {name}: NVRTC returned no CUBIN (options {' '.join(options)})")
            buf = ctypes.create_string_buffer(n.value)
            self._check(self.lib.nvrtcGetCUBIN(prog, buf), "nvrtcGetCUBIN")
            return buf.raw
        finally:
            self.lib.nvrtcDestroyProgram(ctypes.byref(prog))


class Driver:
    """The CUDA driver API (libcuda.so.1) through ctypes: the calls a
    module load and a kernel launch need."""

    def __init__(self, lib=None):
        self.lib = lib if lib is not None else ctypes.CDLL("libcuda.so.1")
        P, I, U = ctypes.c_void_p, ctypes.c_int, ctypes.c_uint
        sig = {
            "cuInit": [U],
            "cuCtxGetCurrent": [ctypes.POINTER(P)],
            "cuModuleLoadData": [ctypes.POINTER(P), ctypes.c_char_p],
            "cuModuleGetFunction": [ctypes.POINTER(P), P, ctypes.c_char_p],
            "cuLaunchKernel": [P, U, U, U, U, U, U, U, P, ctypes.POINTER(P), P],
            "cuGetErrorName": [I, ctypes.POINTER(ctypes.c_char_p)],
            "cuGetErrorString": [I, ctypes.POINTER(ctypes.c_char_p)],
        }
        for name, args in sig.items():
            fn = getattr(self.lib, name)
            fn.argtypes, fn.restype = args, I
        self.check(self.lib.cuInit(0), "cuInit")

    def check(self, rc, what):
        if rc != 0:
            name, msg = ctypes.c_char_p(), ctypes.c_char_p()
            self.lib.cuGetErrorName(rc, ctypes.byref(name))
            self.lib.cuGetErrorString(rc, ctypes.byref(msg))
            n = name.value.decode() if name.value else "?"
            m = msg.value.decode() if msg.value else "?"
            raise Error(f"{what}: CUDA driver error {rc} {n} ({m})")

    def current_context(self):
        """The context current on this thread; an Error when there is none
        (PyTorch makes its device's primary context current once it used
        the device on the thread)."""
        ctx = ctypes.c_void_p()
        self.check(self.lib.cuCtxGetCurrent(ctypes.byref(ctx)), "cuCtxGetCurrent")
        if not ctx.value:
            raise Error("no CUDA context is current on this thread (use the device with PyTorch first)")
        return ctx.value

    def function(self, image, name):
        """Loads image (a CUBIN) into the current context and returns its
        kernel name's handle."""
        self.current_context()
        mod, fn = ctypes.c_void_p(), ctypes.c_void_p()
        self.check(self.lib.cuModuleLoadData(ctypes.byref(mod), image), "cuModuleLoadData")
        self.check(self.lib.cuModuleGetFunction(ctypes.byref(fn), mod, name.encode()), f"cuModuleGetFunction({name})")
        return fn.value


class RowNormArgs:
    """The row-norm ABI's arguments (const T *x, const T *w, T *y, int
    rows, int cols, float eps) as the driver takes them: an array of
    pointers to the values, kept and refilled for each launch."""

    def __init__(self):
        self.x, self.w, self.y = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
        self.rows, self.cols, self.eps = ctypes.c_int(), ctypes.c_int(), ctypes.c_float()
        vals = (self.x, self.w, self.y, self.rows, self.cols, self.eps)
        self.params = (ctypes.c_void_p * len(vals))(*[ctypes.addressof(v) for v in vals])

    def set(self, x, w, y, rows, cols, eps):
        if not (0 < rows < 2**31 and 0 < cols < 2**31):
            raise ValueError(f"rows {rows}, cols {cols}: the ABI's ints take 1 to 2^31-1")
        if not (x and w and y):
            raise ValueError("a null pointer among x, w, y")
        self.x.value, self.w.value, self.y.value = x, w, y
        self.rows.value, self.cols.value, self.eps.value = rows, cols, eps
        return self.params


class RowNormKernel:
    """A row-norm kernel (kreplay's whatif.RowNormABI) loaded in the
    current context, launched with grid (rows), a block of block threads
    and no dynamic shared memory: kreplay whatif's defaults (-grid rows
    -block 256 -shared 0)."""

    def __init__(self, driver, fn, name, block=256):
        self.driver, self.fn, self.name, self.block = driver, fn, name, block
        self.args = RowNormArgs()

    def launch(self, x, w, y, rows, cols, eps, stream):
        params = self.args.set(x, w, y, rows, cols, eps)
        rc = self.driver.lib.cuLaunchKernel(self.fn, rows, 1, 1, self.block, 1, 1, 0, stream or None, params, None)
        if rc != 0:
            self.driver.check(rc, f"cuLaunchKernel({self.name}, grid {rows}, block {self.block})")
