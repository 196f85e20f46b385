"""Times 4-byte memsets and 8 MB device copies per stream under torch.profiler (Kineto)."""
import ctypes, json, statistics, sys
import torch
from kineto_events import events
from torch.profiler import profile, ProfilerActivity

cu = ctypes.CDLL("libcuda.so.1")
x = torch.empty(4, dtype=torch.uint8, device="cuda")
a = torch.empty(8 << 20, dtype=torch.uint8, device="cuda")
b = torch.empty_like(a)
streams = [("default", torch.cuda.default_stream())] + [(f"side{i}", torch.cuda.Stream()) for i in range(4)]
torch.cuda.synchronize()
res = []
for name, s in streams:
    with torch.cuda.stream(s):
        for op in ("memset4", "dtod_8m"):
            reps = 400 if op == "memset4" else 60
            with profile(activities=[ProfilerActivity.CUDA, ProfilerActivity.CPU]) as p:
                for _ in range(reps):
                    if op == "memset4":
                        cu.cuMemsetD8Async(ctypes.c_uint64(x.data_ptr()), ctypes.c_ubyte(0), ctypes.c_size_t(4), ctypes.c_void_p(s.cuda_stream))
                    else:
                        b.copy_(a)
                torch.cuda.synchronize()
            ev = events(p)
            d = [e["dur"] * 1000 for e in ev if e.get("cat") in ("gpu_memset", "gpu_memcpy")]
            d = sorted(d[len(d)//10:])
            if d:
                res.append({"stream": name, "op": op, "n": len(d), "med": statistics.median(d), "p10": d[len(d)//10], "p90": d[9*len(d)//10]})
for r in res:
    print(json.dumps(r))
