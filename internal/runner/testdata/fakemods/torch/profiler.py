"""A stand-in for torch.profiler: see README.md. The trace it exports is
the file $FAKE_TRACE (a real Kineto trace, plain JSON), or a stub that
says how many steps the profiler had seen and how many of them its
schedule profiled as warm-up."""
import json
import os
import shutil


class ProfilerActivity:
    CPU, CUDA = "cpu", "cuda"


class _Schedule:
    def __init__(self, wait, warmup, active):
        self.wait, self.warmup, self.active = wait, warmup, active


def schedule(*, wait, warmup, active, repeat=0, skip_first=0):
    return _Schedule(wait, warmup, active)


class profile:
    def __init__(self, activities=None, record_shapes=False, schedule=None, on_trace_ready=None):
        self.schedule, self.on_trace_ready, self.steps = schedule, on_trace_ready, 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def step(self):
        # As torch's: the trace is ready at the step that ends the active phase.
        self.steps += 1
        s = self.schedule
        if s is not None and self.on_trace_ready and self.steps == s.wait + s.warmup + s.active:
            self.on_trace_ready(self)

    def export_chrome_trace(self, path):
        if os.environ.get("FAKE_TRACE"):
            shutil.copyfile(os.environ["FAKE_TRACE"], path)
            return
        warmup = self.schedule.warmup if self.schedule else 0
        with open(path, "w") as f:
            json.dump({"traceEvents": [], "fake": True, "steps": self.steps, "warmup": warmup}, f)
