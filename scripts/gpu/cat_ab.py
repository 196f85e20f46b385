# A/B of BLOOM-560M decode's KV-cache cat (cat [[1,16,46,64] [1,16,1,64]] along
# dim 2, the new key a strided view of the QKV output): PyTorch's
# CatArrayBatchedCopy and kreplay's kr_cat_pt on the same buffers, in the same
# process and stream, timed by torch.profiler (CUPTI). kreplay's cubin comes
# from its kernel cache (run kreplay on the signature first).
# With TORCH_CUBIN (the sm_90 cubin of libtorch_cuda that holds Shape.cu's
# kernels, from cuobjdump -xelf), PyTorch's kernel is also launched from that
# cubin through the driver API, as kr_cat_pt is.
# Usage: python3 cat_ab.py KERNEL_CACHE_DIR [TORCH_CUBIN]
import ctypes, glob, json, os, statistics, struct, sys
import torch
from torch.profiler import profile, ProfilerActivity

f16 = torch.float16
torch.zeros(1, device="cuda")
cu = ctypes.CDLL("libcuda.so.1")
cubins = [f for f in glob.glob(os.path.join(sys.argv[1], "*.cubin")) if b"kr_cat_pt" in open(f, "rb").read()]
mod, fn = ctypes.c_void_p(), ctypes.c_void_p()
data = open(cubins[0], "rb").read()
assert cu.cuModuleLoadData(ctypes.byref(mod), data) == 0
assert cu.cuModuleGetFunction(ctypes.byref(fn), mod, b"kr_cat_pt") == 0

# The same kernels loaded as context-independent libraries (cuLibraryLoadData,
# as the CUDA runtime loads PyTorch's), launched as CUkernel handles.
lib, lfn = ctypes.c_void_p(), ctypes.c_void_p()
assert cu.cuLibraryLoadData(ctypes.byref(lib), data, None, None, 0, None, None, 0) == 0
assert cu.cuLibraryGetKernel(ctypes.byref(lfn), lib, b"kr_cat_pt") == 0
tfn = tlfn = None
if len(sys.argv) > 2:
    tdata = open(sys.argv[2], "rb").read()
    tmod, tfn = ctypes.c_void_p(), ctypes.c_void_p()
    assert cu.cuModuleLoadData(ctypes.byref(tmod), tdata) == 0
    name = b"_ZN2at6native40_GLOBAL__N__0f1a8107_8_Shape_cu_49f7391c19CatArrayBatchedCopyINS1_10OpaqueTypeILj2EEEjLi4ELi64ELi64EEEvPT_NS1_25CatArrInputTensorMetadataIS5_T0_XT2_EXT3_EEENS1_16TensorSizeStrideIS8_Lj4EEEiS8_"
    assert cu.cuModuleGetFunction(ctypes.byref(tfn), tmod, name) == 0
    tlib, tlfn = ctypes.c_void_p(), ctypes.c_void_p()
    assert cu.cuLibraryLoadData(ctypes.byref(tlib), tdata, None, None, 0, None, None, 0) == 0
    assert cu.cuLibraryGetKernel(ctypes.byref(tlfn), tlib, name) == 0

def theirs(past, key, out, f=None):
    """PyTorch's CatArrayBatchedCopy<OpaqueType<2>, unsigned, 4, 64, 64> from its cubin, 3440 bytes of parameters."""
    s = past.shape[2]
    b = bytearray(3440)
    def put(off, fmt, *v): struct.pack_into(fmt, b, off, *v)
    put(0, "<Q", out.data_ptr())
    for i, (t, off, dsz, contig) in enumerate([(past, 0, s, 1), (key, s, 1, 0)]):
        put(8 + 8 * i, "<Q", t.data_ptr()); put(520 + 4 * i, "<I", off); put(776 + 4 * i, "<I", dsz)
        put(1032 + 4 * i, "<I", t.numel()); put(1288 + i, "<B", contig)
        put(1352 + 32 * i, "<8I", *t.shape, *t.stride())
    put(3400, "<8I", *out.shape, *out.stride()); put(3432, "<iI", 2, out.stride(2))
    buf = (ctypes.c_char * len(b)).from_buffer(b)
    base = ctypes.addressof(buf)
    params = (ctypes.c_void_p * 5)(base, base + 8, base + 3400, base + 3432, base + 3436)
    st = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
    r = cu.cuLaunchKernel(f or tfn, 264, 2, 1, 512, 1, 1, 0, st, params, None)
    assert r == 0, r
    theirs.keep = b

def setup(seq, separate):
    """past [1,16,seq,64] and the strided key; separate: each in its own large allocation."""
    if separate:
        past = torch.empty(4 << 20, device="cuda", dtype=f16)[:16 * seq * 64].view(1, 16, seq, 64).normal_()
        qkv = torch.empty(4 << 20, device="cuda", dtype=f16)[:3072].view(1, 1, 3072).normal_()
        out = torch.empty(4 << 20, device="cuda", dtype=f16)[:16 * (seq + 1) * 64].view(1, 16, seq + 1, 64)
    else:
        past = torch.randn(1, 16, seq, 64, device="cuda", dtype=f16)
        qkv = torch.randn(1, 1, 3072, device="cuda", dtype=f16)
        out = torch.empty(1, 16, seq + 1, 64, device="cuda", dtype=f16)
    key = qkv.view(1, 1, 16, 3, 64)[..., 1, :].transpose(1, 2)
    return past, key, out

def ours(past, key, out, f=None):
    s = seq = past.shape[2]
    vals = [out.data_ptr(), 2, 1, 16, s + 1, 64, *out.stride(),
            past.data_ptr(), past.numel(), s, 0, 1, *past.shape, *past.stride(),
            key.data_ptr(), key.numel(), 1, s * 64, 0, *key.shape, *key.stride()]
    buf = (ctypes.c_int64 * len(vals))(*vals)
    params = (ctypes.c_void_p * 1)(ctypes.addressof(buf))
    st = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
    r = cu.cuLaunchKernel(f or fn, 264, 2, 1, 512, 1, 1, 0, st, params, None)
    assert r == 0, r

ITERS = int(os.environ.get("ITERS", "60"))

def run(label, body, iters=ITERS):
    for _ in range(5 if iters > 5 else 1): body()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        for _ in range(iters): body()
        torch.cuda.synchronize()
    path = "/tmp/cat_ab.json"; p.export_chrome_trace(path)
    ev = [e for e in json.load(open(path))["traceEvents"] if e.get("cat") == "kernel"]
    by = {}
    for e in ev:
        n = "kr_cat_pt" if "kr_cat_pt" in e["name"] else ("torch" if "CatArray" in e["name"] else None)
        if n: by.setdefault(n, []).append(e["dur"])
    print("%-44s %s" % (label, "  ".join("%s n=%d %.2f us" % (k, len(v), statistics.median(v)) for k, v in sorted(by.items()))), flush=True)

for separate in (False, True):
    past, key, out = setup(46, separate)
    ours(past, key, out); torch.cuda.synchronize()
    ref = torch.cat([past, key], 2)
    print("separate allocations" if separate else "caching-allocator blocks", "| kr_cat_pt output equals torch.cat:", torch.equal(out, ref))
    run("  torch.cat", lambda: torch.cat([past, key], 2))
    run("  torch.cat out=", lambda: torch.cat([past, key], 2, out=out))
    run("  kr_cat_pt", lambda: ours(past, key, out))
    run("  alternating", lambda: (torch.cat([past, key], 2, out=out), ours(past, key, out)))
    if tfn is not None:
        out.zero_(); theirs(past, key, out); torch.cuda.synchronize()
        print("  PyTorch's kernel from its cubin: output equals torch.cat:", torch.equal(out, ref))
        run("  torch kernel from its cubin", lambda: theirs(past, key, out))
        run("  torch kernel from its cubin, kr_cat_pt", lambda: (theirs(past, key, out), ours(past, key, out)))
        run("  torch kernel, library-loaded", lambda: theirs(past, key, out, tlfn))
    run("  kr_cat_pt, library-loaded", lambda: ours(past, key, out, lfn))
