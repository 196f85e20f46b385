"""A stand-in for torch.profiler: see README.md. The trace it exports is
the file $FAKE_TRACE (a real Kineto trace, plain JSON), or a stub."""
import json
import os
import shutil


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
        if os.environ.get("FAKE_TRACE"):
            shutil.copyfile(os.environ["FAKE_TRACE"], path)
            return
        with open(path, "w") as f:
            json.dump({"traceEvents": [], "fake": True}, f)
