"""A stand-in for torch: see README.md. Not PyTorch."""
import os
import time

__version__ = "0.0-fake"


class _Version:
    cuda = "0.0"


version = _Version()


class _OOM(RuntimeError):
    pass


class _Event:
    def __init__(self, enable_timing=False):
        self.t = None

    def record(self):
        self.t = time.perf_counter()

    def synchronize(self):
        pass

    def query(self):
        return self.t is not None

    def elapsed_time(self, end):
        return (end.t - self.t) * 1000.0


class _Props:
    name = "Fake GPU"
    multi_processor_count = 7
    total_memory = 1 << 30
    major, minor = 9, 0

    def __init__(self, dev=0):
        # CUDA device dev is the machine's GPU 7-dev (the stand-in pynvml's
        # index), as CUDA_VISIBLE_DEVICES=7,6,... would number them.
        self.uuid = f"00000000-0000-0000-0000-{7 - dev:012d}"
        if os.environ.get("FAKE_UUID") == "unknown":  # one NVML does not know (a MIG slice's)
            self.uuid = f"ffffffff-0000-0000-0000-{dev:012d}"


class _Cuda:
    OutOfMemoryError = _OOM
    Event = _Event
    available = os.environ.get("FAKE_NO_GPU") != "1"

    def is_available(self):
        return self.available

    def device_count(self):
        return int(os.environ.get("FAKE_GPUS") or 8)

    def set_device(self, dev):
        self.dev = dev

    def current_device(self):
        return getattr(self, "dev", 0)

    def synchronize(self):
        pass

    def empty_cache(self):
        pass

    def get_device_name(self, dev):
        return _Props.name

    def get_device_properties(self, dev):
        return _Props(dev)

    def current_blas_handle(self):
        return 0


cuda = _Cuda()


class _Cudnn:
    def is_available(self):
        return True

    def version(self):
        return 91002


class _Backends:
    cudnn = _Cudnn()


backends = _Backends()


class _Tensor:
    def add_(self, v):
        return self


def device(kind, index=0):
    return (kind, index)


def zeros(*shape, device=None):
    return _Tensor()


int64 = "int64"


class _Values:
    """A 1-D tensor of numbers, for torch.distributed's stand-in."""

    def __init__(self, values):
        self.values = list(values)

    def __getitem__(self, i):
        return self.values[i]


def tensor(values, dtype=None):
    return _Values(values)


from . import distributed  # noqa: E402 - after the names it uses
