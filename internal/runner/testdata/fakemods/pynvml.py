"""A stand-in for pynvml: see README.md. The energy counter (mJ) ticks
every 20 ms at 100 W."""
import time

_t0 = time.perf_counter()


class NVMLError(Exception):
    pass


def nvmlInit():
    pass


def nvmlDeviceGetHandleByIndex(i):
    return i


def nvmlDeviceGetHandleByUUID(uuid):
    if isinstance(uuid, str):
        uuid = uuid.encode()
    if not uuid.startswith(b"GPU-00000000-0000-0000-0000-"):
        raise NVMLError(f"no GPU {uuid!r}")
    return int(uuid[-12:])


def nvmlSystemGetDriverVersion():
    return "0.0-fake"


def nvmlDeviceGetUUID(h):
    return f"GPU-00000000-0000-0000-0000-{h:012d}"


def nvmlDeviceGetPowerManagementLimit(h):
    return 100000


def nvmlDeviceGetTotalEnergyConsumption(h):
    ticks = int((time.perf_counter() - _t0) / 0.02)
    return ticks * 2000  # 100 W x 20 ms


NVML_CLOCK_SM = 1


def nvmlDeviceGetClockInfo(h, clock):
    return 1980


def nvmlDeviceGetCurrentClocksEventReasons(h):
    # The software power cap (0x4) for the first half of every second.
    return 0x4 if (time.perf_counter() - _t0) % 1.0 < 0.5 else 0
