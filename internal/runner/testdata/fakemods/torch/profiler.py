"""A stand-in for torch.profiler: see README.md."""
import json


class ProfilerActivity:
    CPU, CUDA = "cpu", "cuda"


class profile:
    def __init__(self, activities=None, record_shapes=False):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def export_chrome_trace(self, path):
        with open(path, "w") as f:
            json.dump({"traceEvents": [], "fake": True}, f)
