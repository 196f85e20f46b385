"""kreplay_runner: what kreplay needs from a program that runs inference.

It speaks kreplay's line protocol on stdin/stdout and does the timing, the
NVML energy metering, the profiling and the kernel recording; the program
only says how to run one inference. kreplay's own Hugging Face runner
(runner.py) is built on it, and so can your own inference script be:

    import torch
    import kreplay_runner

    def build(spec):
        # spec is the workload spec kreplay resolved (a dict): "devices",
        # "dtype", "seed", "workload" ({"kind": "prefill", "batch": ...})
        # and "command" {"argv", "dir", "args"}, your free-form arguments.
        model = load_my_model().to(torch.device("cuda", spec["devices"][0]))
        inputs = make_inputs(spec["workload"])
        def run_one_inference():
            with torch.no_grad():
                model(inputs)
        return run_one_inference   # or (run_one_inference, {"note": ...})

    kreplay_runner.serve(build)

Point a workload spec's "command" at the script ({"argv": ["python3",
"my_infer.py"]}); kreplay puts this module on PYTHONPATH when it starts the
command. Everything the script prints goes to stderr: serve() keeps the
real standard output for the protocol.

The protocol: one JSON object per line each way. The program's first line
is {"ok": true, "ready": true, "protocol": 1} (or {"ok": false, "error": ...}
and exit status 2 when it cannot start: torch or pynvml missing). Then,
request by request:

  {"cmd": "load", "spec": {...}}
      -> {"ok": true, "gpu": ..., "torch": ..., "cuda": ..., "driver": ..., ...}
         build(spec) runs here, on spec["devices"][0] (a rank of a group:
         on spec["distributed"]["device"], see Ranks below, and the reply
         adds "rank", "world_size" and "device"); what build returns beside
         the callable is added to the reply.
  {"cmd": "warmup", "n": 3, "min_s": 3}
      -> {"ok": true, "inferences": k, "s": ...}
         at least n inferences and min_s seconds (torch.compile compiles here).
  {"cmd": "run", "min_ticks": 20, "max_s": 300, "min_inferences": 20}
      -> {"ok": true, "inferences": k, "inside": ..., "wall_s_per_inference": ...,
          "event_ms_per_inference": ..., "energy_j_per_inference": ...,
          "energy_j_per_inference_with_firsts": ...,
          "energy_j": ..., "window_s": ..., "ticks": ..., "idle_w": ...,
          "sm_clock_mhz": ..., "sm_clock_min_mhz": ..., "sm_clock_max_mhz": ...,
          "power_capped": ..., "throttled": ..., "clock_samples": ...,
          "gpu_temp_c": ..., "gpu_temp_max_c": ...,
          "tpot_ms": [p10, p50, p90], "tokens_per_inference": ...}
         (tpot_ms, a generate's time per output token, only where the
         program calls mark_token() at each token; the energy window and
         inside are over the inferences that follow another back to back,
         each block's first left out; energy_j_per_inference_with_firsts
         counts them too)
  {"cmd": "capture", "path": "/abs/trace.json.gz", "warmup_steps": 1}
      -> {"ok": true, "path": ..., "bytes": ...}
         one inference under torch.profiler (CPU and CUDA, record_shapes),
         written as a gzip'ed Kineto trace, after warmup_steps inferences
         profiled and discarded (the profiler's schedule; default 1).
  {"cmd": "record", "detach": true}
      -> {"ok": true}
         one inference with the kernel recorder armed: the library named by
         $KREPLAY_INJECT_LIB (loaded through CUDA_INJECTION64_PATH) gets
         kr_inject_arm(1) before and kr_inject_arm(0), kr_inject_flush() after;
         with "detach", kr_inject_detach() last, which lets go of CUPTI
         (unsubscribes and finalizes it) so that the measured run is not
         slowed by it and the profiler can trace this process afterwards.
  {"cmd": "run", ..., "schedule": {"path": "/abs/schedule.txt", "n": 10, "process": 0, "blocks": 3, "pairs": 5}}
      -> the run's reply, plus "block_wall_ms": [...] and "schedule": {"path": ...,
          "inferences": k, "recorder": "hook" or "cupti", "armed_wall_ns": ...,
          "measured_wall_ns": ..., "overhead_ns_per_inference": ...,
          "overhead_ns_per_call": ..., "records": ..., "lost": ..., "outside": ...,
          "incomplete": ..., "other_threads": ..., "blocks": ...,
          ["cost_pairs": ..., "hook_old": ..., "hook_second": ...]}
         (or "schedule_error" where the file could not be written)
         a run that records the host's schedule (docs/whole-inference.md)
         with the schedule recorder named by $KREPLAY_SCHED_LIB.
         Hook mode (the recorder preloaded with LD_PRELOAD interposed the
         driver's entry points: kr_sched_hooked() > 0): the measured run is
         the recorded run. After the recorder's per-call probe (which arms
         it), blocks measured blocks, each as a run with its share of
         min_ticks and of min_inferences (at least n in all), all armed:
         kr_sched_mark(4) after the synchronize that starts a block, each
         inference marked kr_sched_mark(1) before it and kr_sched_mark(3)
         after its event is recorded (mark_token() marks 2 in between).
         Then the recorder's cost, in the same process: pairs pairs of
         single inferences, one armed (its marks of kind 0, outside any
         inference: not written) and one disarmed, in alternating order,
         each timed on the host from a synchronize to a synchronize;
         armed_wall_ns and measured_wall_ns are the armed and the disarmed
         median, overhead_ns_per_inference the first less the second
         (signed). hook_old counts the entry points that got a function of
         another ABI than the wrappers' (CUDA 12.0's), passed through
         unrecorded, hook_second the lookups that resolved a
         wrapped call to another definition than the wrapper's first
         (recorded, the wrapper calling the first).
         CUPTI mode (the recorder loaded through CUDA_INJECTION64_PATH
         alone): the recorded inferences (n) are interleaved with the
         measured ones:
         blocks measured blocks, each as a run with its share of min_ticks
         and min_inferences, and between each two a block of recorded
         inferences with the recorder armed: kr_sched_arm(1) the
         first time (after the recorder's cost probe), kr_sched_arm(2)
         (resume) after; one armed inference unmarked, a synchronize and
         kr_sched_mark(4) (the block's start), then the block's
         inferences run back to back as run's do, each marked
         kr_sched_mark(1) before it and kr_sched_mark(3) after its event is
         recorded (mark_token() marks 2 in between); kr_sched_pause() lets
         go of CUPTI after each recorded block. armed_wall_ns is the wall
         per recorded inference, measured_wall_ns the measured blocks',
         their difference the recorder's overhead with the host's moves
         between neighbouring blocks.
         In both, after the last measured block the schedule is flushed to
         path and the recorder freed (kr_sched_detach); the file's header
         holds the walls and the overhead, with process (an index the
         capture gives) and the host's CPU. records is what the recorder
         kept, lost the calls past its buffer's end, outside those outside
         an inference (the unmarked ones), incomplete the inferences left
         out without their end. A recorder that cannot record fails the
         request with kind "schedule".
  {"cmd": "env"}
      -> {"ok": true, "gpu": ..., "sm_count": ..., "memory_bytes": ...,
          "driver": ..., "cuda_runtime": ..., "cublas": ..., "cublaslt": ...,
          "cudnn": ..., "nccl": ..., "torch": ..., "triton": ..., "transformers": ...,
          "cpu": ...}
  {"cmd": "quit"}
      -> {"ok": true}, then the program exits.

Ranks. kreplay runs a tensor-parallel workload as one process per rank
(its Group), each started with torch.distributed's environment
(MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE;
NCCL_NVLS_ENABLE=0, which this module forces too) and sent every request
in lock step. The load request's spec then holds "distributed": {"rank",
"world_size", "local_rank", "device", "master_addr", "master_port",
"backend"}; before build(spec) runs, this module sets the CUDA device to
"device" and initializes the default process group (NCCL) and a gloo
group of its own, so build(spec) only shards its model (world_size(),
rank() say where it is). Every timed request starts with a barrier, so
that the ranks start together; warmup and run decide together when to
stop (a gloo all-reduce on the host after each inference once
min_inferences ran), so that every rank runs the same inferences and no
collective waits for a rank that stopped. Each rank meters its own GPU.

A runner that generates calls mark_token() at each generated token (kreplay's
Hugging Face runner does, from a pass-through LogitsProcessor): it marks the
token in the host's schedule while a recorded block of a run records one,
and does nothing otherwise.

A failure is {"ok": false, "error": "...", "kind": K}, and the program goes
on reading requests; K is "oom" for torch.cuda.OutOfMemoryError,
"unavailable" when there is no CUDA device, "schedule" when the schedule
recorder cannot record, "error" otherwise.

Timing (run): inferences run back to back with no host synchronization
between them, as a serving loop runs, a CUDA event after each;
wall_s_per_inference is the host time from the first launch to the last
inference's end over the count, event_ms_per_inference the same span on
the GPU's clock. Energy: NVML's total-energy counter advances about every
100 ms, so a thread polls it every millisecond while the inferences run;
the window spans every whole tick inside the inferences' span on the GPU
(at least min_ticks), and the inferences inside it count by the fraction of
their time inside. idle_w is the GPU's power just after, from whole ticks.
The same thread samples the SM clock and NVML's clocks-event reasons every
10 ms: sm_clock_* summarise the samples inside the window, power_capped is
the share of them with the software power cap holding the clocks down and
throttled the share with any power or thermal slowdown, and gpu_temp_c and
gpu_temp_max_c the GPU's mean and highest temperature (C) over them (each
left out where NVML does not say).
"""
import contextlib
import ctypes
import gc
import gzip
import json
import math
import os
import platform
import shutil
import statistics
import sys
import threading
import time

PROTOCOL = 1

_out = sys.stdout  # the protocol's stream; serve() moves it off fd 1


def _reply(**kw):
    _out.write(json.dumps(kw) + "\n")
    _out.flush()


def fail_start(message):
    """Reports that the program cannot start (the protocol's first line)
    and exits with status 2."""
    _reply(ok=False, error=message, kind="unavailable")
    sys.exit(2)


try:
    import torch
    import pynvml
except Exception as e:  # noqa: BLE001 - report any import failure plainly
    fail_start(f"{sys.executable} cannot import torch and pynvml: {e!r}")


class ScheduleError(RuntimeError):
    """The host schedule could not be recorded: replied with kind
    "schedule"."""


class Unavailable(RuntimeError):
    """No usable GPU: replied with kind "unavailable"."""


_state = {}


def nvml_handle(dev):
    """The NVML handle of CUDA device dev, found by its UUID: NVML numbers
    every GPU of the machine in its own order, whatever CUDA_VISIBLE_DEVICES
    hides or reorders, so CUDA's index can name another GPU. Without a UUID
    NVML knows (an old torch, a MIG slice) the index, only where nothing
    reorders the devices."""
    why = "torch gives no UUID"
    try:
        uuid = torch.cuda.get_device_properties(dev).uuid
    except AttributeError:
        uuid = None
    if uuid is not None:
        try:
            return pynvml.nvmlDeviceGetHandleByUUID(f"GPU-{uuid}".encode())
        except pynvml.NVMLError as e:  # a MIG slice's, say
            why = f"NVML knows no GPU-{uuid} ({e})"
    if os.environ.get("CUDA_VISIBLE_DEVICES") is not None:
        raise Unavailable(f"device {dev}: {why} to find its NVML meter by, and "
                          "CUDA_VISIBLE_DEVICES may have renumbered the GPUs")
    return pynvml.nvmlDeviceGetHandleByIndex(dev)


def _counter():
    return pynvml.nvmlDeviceGetTotalEnergyConsumption(_state["nvml"])  # mJ


def _reasons():
    h = _state["nvml"]
    try:
        return pynvml.nvmlDeviceGetCurrentClocksEventReasons(h)
    except AttributeError:  # a pynvml from before the rename
        return pynvml.nvmlDeviceGetCurrentClocksThrottleReasons(h)


_POWER_CAP = 0x4  # NVML clocks-event reason: the software power cap
_THROTTLE = 0x4 | 0x8 | 0x20 | 0x40 | 0x80  # power cap, thermal and hardware slowdowns


class _Poller(threading.Thread):
    """Records (time, counter) at each counter change and, with states,
    (time, SM clock MHz, clocks-event reasons, GPU temperature C or None)
    every 10 ms."""

    def __init__(self, states=False):
        super().__init__(daemon=True)
        self.changes, self.states, self.stop = [], [], False
        self._want_states = states

    def run(self):
        last, k = _counter(), 0
        while not self.stop:
            v = _counter()
            if v != last:
                self.changes.append((time.perf_counter(), v))
                last = v
            if self._want_states and k % 10 == 0:
                try:
                    clk = pynvml.nvmlDeviceGetClockInfo(_state["nvml"], pynvml.NVML_CLOCK_SM)
                    self.states.append((time.perf_counter(), clk, _reasons(), _temperature()))
                except Exception:  # noqa: BLE001 - NVMLError, or a pynvml without the call
                    self._want_states = False  # not supported: leave the fields out
            k += 1
            time.sleep(0.001)


def _temperature():
    """The GPU's temperature (C), None where NVML does not give it."""
    try:
        return pynvml.nvmlDeviceGetTemperature(_state["nvml"], pynvml.NVML_TEMPERATURE_GPU)
    except Exception:  # noqa: BLE001 - NVMLError, or a pynvml without the call
        return None


def _clock_summary(states, ta, tb):
    """The SM clock, the throttled shares and the GPU temperature (mean and
    highest, where sampled) of the states in [ta, tb]."""
    st = [s for s in states if ta <= s[0] <= tb]
    if not st:
        return {}
    d = dict(sm_clock_mhz=sum(s[1] for s in st) / len(st), sm_clock_min_mhz=min(s[1] for s in st),
             sm_clock_max_mhz=max(s[1] for s in st),
             power_capped=sum(1 for s in st if s[2] & _POWER_CAP) / len(st),
             throttled=sum(1 for s in st if s[2] & _THROTTLE) / len(st), clock_samples=len(st))
    temps = [s[3] for s in st if s[3] is not None]
    if temps:
        d.update(gpu_temp_c=sum(temps) / len(temps), gpu_temp_max_c=max(temps))
    return d


def _percentiles(xs, ps):
    """The ps-th percentiles of xs (nearest rank); [] for no xs."""
    xs = sorted(xs)
    if not xs:
        return []
    return [xs[min(len(xs) - 1, max(0, math.ceil(p / 100.0 * len(xs)) - 1))] for p in ps]


@contextlib.contextmanager
def _polling():
    """The conditions of a measured run: the NVML poller (energy, and the
    clocks every 10 ms) running and a short switch interval; yields the
    poller."""
    old = sys.getswitchinterval()
    # A short switch interval keeps the poller's timestamps within ~1 ms;
    # KREPLAY_SWITCH_INTERVAL (seconds) sets another, to probe what the
    # poller's GIL handoffs cost a launch-bound inference.
    sys.setswitchinterval(float(os.environ.get("KREPLAY_SWITCH_INTERVAL") or 0.0005))
    p = _Poller(states=True)
    p.start()
    try:
        time.sleep(0.002)
        yield p
        time.sleep(0.002)
    finally:
        p.stop = True
        p.join()
        sys.setswitchinterval(old)


def _measure(min_ticks, max_s, fn, min_n=1, marks=None):
    """Runs fn back to back with no host synchronization between
    inferences, so the CPU launches the next inference while the GPU runs
    the last, until the energy counter changed min_ticks + 2 times and at
    least min_n inferences ran (or max_s passed). A CUDA event after each inference places it on the GPU's
    timeline, mapped to host time through an event recorded on an idle
    GPU. The energy window spans the counter changes inside the span of
    the inferences that follow another back to back: it opens after the
    block's first inference (which starts on a GPU idle since the
    synchronize), whose energy and share of the window are left out; the
    figures with it are kept as energy_j_with_first and
    inside_with_first. With marks, the schedule recorder (armed, hook
    mode), the block is recorded: kr_sched_mark(4) after the synchronize
    that starts it, each inference marked kr_sched_mark(1) before it and
    kr_sched_mark(3) after its event is recorded (mark_token() marks 2 in
    between). It returns the block's raw figures, for _summary."""
    global _token_log, _marking
    _barrier()
    with _polling() as p:
        evs = [torch.cuda.Event(enable_timing=True)]
        evs[0].record()
        evs[0].synchronize()
        if marks is not None:
            marks.kr_sched_mark(4)  # the block's first inference follows a synchronize
            _marking = True
        t_base = time.perf_counter()
        t_end = t_base + max_s
        t_first = None  # the host's time when it saw the first inference done
        _token_log, firsts = [], []
        try:
            while True:
                firsts.append(len(_token_log))
                if marks is not None:
                    marks.kr_sched_mark(1)
                fn()
                ev = torch.cuda.Event(enable_timing=True)
                ev.record()
                if marks is not None:
                    marks.kr_sched_mark(3)
                evs.append(ev)
                if t_first is None and evs[1].query():
                    t_first = time.perf_counter()
                # A group's ranks decide together, at the same inferences.
                if world_size() == 1 or len(evs) > min_n:
                    enough = (len(evs) > min_n and t_first is not None
                              and sum(1 for t, _ in p.changes if t > t_first) >= min_ticks + 2)
                    if _agree((enough, time.perf_counter() > t_end)):
                        break
        finally:
            tokens, _token_log, _marking = _token_log, None, False
        evs[-1].synchronize()
        host_s = time.perf_counter() - t_base
    ends = [t_base + evs[0].elapsed_time(e) / 1000.0 for e in evs]
    spans = list(zip(ends[:-1], ends[1:]))
    if len(spans) < 2:
        raise RuntimeError(f"{len(spans)} inference in {ends[-1] - ends[0]:.2f}s; the energy window needs one "
                           f"after the first (raise max_s)")
    steady = _window(p.changes, spans[1:], min_ticks)
    first = _window(p.changes, spans, min_ticks)
    return dict(spans=spans, inside=steady["inside"], window_s=steady["window_s"], ticks=steady["ticks"],
                energy_j=steady["energy_j"], energy_j_with_first=first["energy_j"],
                inside_with_first=first["inside"], host_s=host_s, gpu_s=ends[-1] - ends[0],
                states=[s for s in p.states if steady["ta"] <= s[0] <= steady["tb"]], tokens=tokens, firsts=firsts)


def _window(changes, spans, min_ticks):
    """The energy window over spans (consecutive inferences' (start, end)
    on the host's clock): every whole counter tick inside them, the
    energy in it and the inferences inside it (with fractions at its
    ends)."""
    t0, t1 = spans[0][0], spans[-1][1]
    inside_changes = [c for c in changes if t0 < c[0] <= t1]
    if len(inside_changes) < min_ticks + 1:
        raise RuntimeError(f"energy counter changed {len(inside_changes)} times in {t1 - t0:.2f}s of "
                           f"inferences; need {min_ticks + 1} (raise max_s)")
    (ta, ea), (tb, eb) = inside_changes[0], inside_changes[-1]
    inside = sum(max(0.0, min(b, tb) - max(a, ta)) / (b - a) for a, b in spans if b > a)
    return dict(inside=inside, window_s=tb - ta, ticks=len(inside_changes) - 1, energy_j=(eb - ea) / 1000.0,
                ta=ta, tb=tb)


def _summary(blocks):
    """The run's reply from the raw figures of its measured blocks
    (_measure): counts, energy and windows summed, walls over all the
    inferences, percentiles over all their spans and tokens; with more than
    one block, block_wall_ms gives each block's wall per inference."""
    spans = [sp for b in blocks for sp in b["spans"]]
    k = len(spans)
    r = dict(inferences=k, inside=sum(b["inside"] for b in blocks), window_s=sum(b["window_s"] for b in blocks),
             ticks=sum(b["ticks"] for b in blocks), energy_j=sum(b["energy_j"] for b in blocks),
             energy_j_with_firsts=sum(b["energy_j_with_first"] for b in blocks),
             inside_with_firsts=sum(b["inside_with_first"] for b in blocks),
             wall_s_per_inference=sum(b["host_s"] for b in blocks) / k,
             event_ms_per_inference=sum(b["gpu_s"] for b in blocks) * 1000.0 / k,
             span_ms=_percentiles([(b - a) * 1000.0 for a, b in spans], (10, 50, 90)))
    states = [s for b in blocks for s in b["states"]]
    if states:
        r.update(_clock_summary(states, states[0][0], states[-1][0]))
    tokens, firsts = [], []
    for b in blocks:
        firsts += [len(tokens) + f for f in b["firsts"]]
        tokens += b["tokens"]
    r.update(_token_summary(tokens, firsts))
    if len(blocks) > 1:
        r["block_wall_ms"] = [b["host_s"] * 1000.0 / len(b["spans"]) for b in blocks]
    return r


def _token_summary(tokens, firsts):
    """The time per output token of a generate measured by _measure: the
    10th, 50th and 90th percentiles (ms) of the intervals between the host
    reaching consecutive tokens' logits processing (mark_token) within an
    inference, and the tokens per inference; {} without token marks."""
    bounds = list(firsts) + [len(tokens)]
    per = [(tokens[k] - tokens[k - 1]) * 1000.0 for a, b in zip(bounds[:-1], bounds[1:]) for k in range(a + 1, b)]
    if not per:
        return {}
    return dict(tpot_ms=_percentiles(per, (10, 50, 90)), tokens_per_inference=len(tokens) / max(1, len(firsts)))


def _idle_power(ticks):
    p = _Poller()
    p.start()
    t_end = time.perf_counter() + ticks * 0.2 + 2
    while len(p.changes) < ticks + 1 and time.perf_counter() < t_end:
        time.sleep(0.01)
    p.stop = True
    p.join()
    if len(p.changes) < ticks + 1:
        return None
    (ta, ea), (tb, eb) = p.changes[0], p.changes[ticks]
    return (eb - ea) / 1000.0 / (tb - ta)


_dist = {}  # "world", "rank", "ctl" (the gloo group) once a group's rank initialized


def world_size():
    """The number of ranks this process is one of (1 outside a group)."""
    return _dist.get("world", 1)


def rank():
    """This process's rank (0 outside a group)."""
    return _dist.get("rank", 0)


def _init_distributed(d, dev):
    """Joins the ranks' process group (NCCL, env:// rendezvous) as
    d["rank"] of d["world_size"], once per process, and a gloo group for
    the host-side decisions (_agree)."""
    world, rk = int(d["world_size"]), int(d["rank"])
    if _dist:
        if (_dist["world"], _dist["rank"]) != (world, rk):
            raise RuntimeError(f"load: rank {rk} of {world}, but this process is rank {_dist['rank']} of {_dist['world']}")
        return
    os.environ["NCCL_NVLS_ENABLE"] = "0"  # NVLink multicast stays off
    os.environ.setdefault("MASTER_ADDR", str(d.get("master_addr") or "127.0.0.1"))
    os.environ.setdefault("MASTER_PORT", str(d["master_port"]))
    import torch.distributed as tdist
    kw = {}
    try:  # binds the NCCL communicator to this rank's device (torch 2.3 on)
        kw["device_id"] = torch.device("cuda", dev)
        tdist.init_process_group(d.get("backend") or "nccl", rank=rk, world_size=world, **kw)
    except TypeError:
        tdist.init_process_group(d.get("backend") or "nccl", rank=rk, world_size=world)
    _dist.update(world=world, rank=rk, dev=dev, ctl=tdist.new_group(backend="gloo"))


def _barrier():
    """Waits for every rank (nothing outside a group), then for this
    rank's GPU: timed regions start together."""
    if world_size() > 1:
        import torch.distributed as tdist
        tdist.barrier(device_ids=[_dist["dev"]])
    torch.cuda.synchronize()


def _agree(stop):
    """Whether every rank stops: True when any rank's stop is True (the
    deadline) or, for a pair (enough, late), when all have enough or one
    is late. Outside a group, this rank's own. A gloo all-reduce on the
    host: it does not wait for the GPU."""
    enough, late = stop
    if world_size() == 1:
        return enough or late
    import torch.distributed as tdist
    t = torch.tensor([0 if enough else 1, 1 if late else 0], dtype=torch.int64)
    tdist.all_reduce(t, op=tdist.ReduceOp.MAX, group=_dist["ctl"])
    return int(t[0]) == 0 or int(t[1]) == 1


def _load(build, req):
    spec = req.get("spec")
    if not isinstance(spec, dict):
        raise ValueError('load: want "spec", the workload spec (an object)')
    if not torch.cuda.is_available():
        raise Unavailable(f"torch {torch.__version__} sees no CUDA device "
                          f"(CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES', 'unset')})")
    d = spec.get("distributed")
    devices = spec.get("devices") or [0]
    dev = int(d["device"]) if d else int(devices[0])
    if dev >= torch.cuda.device_count():
        raise Unavailable(f"device {dev}: torch sees {torch.cuda.device_count()} CUDA device(s)")
    _state.clear()
    gc.collect()
    torch.cuda.empty_cache()
    torch.cuda.set_device(dev)
    if d and int(d.get("world_size", 1)) > 1:
        _init_distributed(d, dev)
    out = build(spec)
    fn, info = out if isinstance(out, tuple) else (out, {})
    if not callable(fn):
        raise TypeError(f"build(spec) returned {type(fn).__name__}, want a callable that runs one inference")
    pynvml.nvmlInit()
    _state.update(run=fn, dev=dev, nvml=nvml_handle(dev))
    reply = dict(gpu=torch.cuda.get_device_name(dev), torch=torch.__version__, cuda=torch.version.cuda,
                 driver=_str(pynvml.nvmlSystemGetDriverVersion()))
    if world_size() > 1:
        reply.update(rank=rank(), world_size=world_size(), device=dev)
    reply.update({k: v for k, v in (info or {}).items() if k != "ok"})
    return reply


def _warmup(req):
    # At least n inferences and min_s seconds: a launch-bound model's host
    # side takes seconds to reach its steady pace.
    # The ranks of a group stop together (_agree).
    n, min_s, k = int(req.get("n", 3)), float(req.get("min_s", 0)), 0
    _barrier()
    t0 = time.perf_counter()
    while k < n or not _agree((time.perf_counter() - t0 >= min_s, False)):
        _state["run"]()
        k += 1
    torch.cuda.synchronize()
    return dict(inferences=k, s=time.perf_counter() - t0)


def _run(req):
    ticks, max_s, min_n = int(req.get("min_ticks", 20)), float(req.get("max_s", 120)), int(req.get("min_inferences", 1))
    fn = _state["run"]
    sched = req.get("schedule")
    if sched is None:
        r = _summary([_measure(ticks, max_s, fn, min_n)])
    elif _hooked(_sched_lib()):
        r = _recorded(ticks, max_s, fn, min_n, sched)
    else:
        r = _interleaved(ticks, max_s, fn, min_n, sched)
    r["energy_j_per_inference"] = r["energy_j"] / r["inside"] if r["inside"] > 0 else None
    w = r.pop("inside_with_firsts")
    r["energy_j_per_inference_with_firsts"] = r.pop("energy_j_with_firsts") / w if w > 0 else None
    # Idle power over whole ticks, for the idle-gap energy term.
    time.sleep(0.5)
    r["idle_w"] = _idle_power(10)
    return r


def _capture(req):
    from torch.profiler import profile, schedule, ProfilerActivity
    path = req["path"]
    warm = int(req.get("warmup_steps", 1))
    if warm < 0:
        raise ValueError(f"capture: warmup_steps {warm}, want 0 or more")
    tmp = path + ".tmp.json"
    # The first inference after the profiler's start is disturbed: its one
    # 1-byte copy to the host took 1728-2144 ns in six traced prefills on
    # H100s, 1408-1473 ns after a profiled warm-up inference in nine, and
    # 1377-1440 ns replayed. Why is not settled (a guess: the GPU's mappings
    # change as the profiler starts; in a probe a fresh cudaMalloc before
    # such a copy slowed it to 1696 ns, in one process of two). Warm-up
    # inferences, profiled and discarded, leave the traced one in the
    # steady state the measured runs are in.
    sched = schedule(wait=0, warmup=warm, active=1) if warm > 0 else None
    _barrier()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True, schedule=sched,
                 on_trace_ready=(lambda p: p.export_chrome_trace(tmp)) if sched else None) as prof:
        for _ in range(warm + 1):
            _state["run"]()
            torch.cuda.synchronize()
            prof.step()
    try:
        if sched is None:
            prof.export_chrome_trace(tmp)
        if not os.path.exists(tmp):
            raise RuntimeError("capture: the profiler wrote no trace")
        with open(tmp, "rb") as f, gzip.open(path, "wb", compresslevel=6) as g:
            shutil.copyfileobj(f, g, 1 << 20)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    return dict(path=path, bytes=os.path.getsize(path))


def _record(req):
    lib_path = os.environ.get("KREPLAY_INJECT_LIB")
    if not lib_path:
        raise RuntimeError("record: KREPLAY_INJECT_LIB is not set: the runner must be started with kreplay's "
                           "kernel recorder (CUDA_INJECTION64_PATH and KREPLAY_INJECT_LIB)")
    torch.cuda.synchronize()
    lib = ctypes.CDLL(lib_path)
    lib.kr_inject_arm.argtypes = [ctypes.c_int]
    _barrier()
    if lib.kr_inject_arm(1) != 0:
        raise RuntimeError("record: the kernel recorder was not initialized by CUDA (is CUDA_INJECTION64_PATH "
                           "the same library as KREPLAY_INJECT_LIB, and did CUDA start?)")
    try:
        _state["run"]()
        torch.cuda.synchronize()
    finally:
        lib.kr_inject_arm(0)
    if lib.kr_inject_flush() != 0:
        raise RuntimeError("record: the kernel recorder could not write its files (see its stderr)")
    if req.get("detach") and lib.kr_inject_detach() != 0:
        raise RuntimeError("record: the kernel recorder could not let go of CUPTI (cuptiUnsubscribe or cuptiFinalize failed), "
                           "so the profiler cannot trace this process")
    return {}


_sched = {}  # "lib": the schedule recorder as ctypes loaded it, None without one
_marking = False  # a recorded block is recording: mark_token marks


def _sched_lib():
    """The schedule recorder named by $KREPLAY_SCHED_LIB, loaded (the
    library CUDA loaded through CUDA_INJECTION64_PATH, when it is the same
    file); None when the variable is not set."""
    if "lib" not in _sched:
        path = os.environ.get("KREPLAY_SCHED_LIB")
        lib = None
        if path:
            lib = ctypes.CDLL(path, use_errno=True)
            lib.kr_sched_arm.argtypes = [ctypes.c_int]
            lib.kr_sched_pause.restype = ctypes.c_int
            lib.kr_sched_mark.argtypes = [ctypes.c_int]
            lib.kr_sched_mark.restype = None
            lib.kr_sched_flush.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_longlong,
                                           ctypes.c_longlong, ctypes.c_longlong]
            lib.kr_sched_flush.restype = ctypes.c_longlong
            lib.kr_sched_stats.argtypes = [ctypes.POINTER(ctypes.c_longlong), ctypes.c_int]
            try:
                lib.kr_sched_hooked.restype = ctypes.c_int
            except AttributeError:  # a recorder of CUPTI alone
                pass
        _sched["lib"] = lib
    return _sched["lib"]


_token_log = None  # a list while a measured run times its tokens (_measure)


def mark_token():
    """Marks a generated token in the host's schedule (kr_sched_mark(2))
    while a recorded block records one, and notes the host's time of it
    while a run measures; it adds no GPU work."""
    if _token_log is not None:
        _token_log.append(time.perf_counter())
    if _marking:
        _sched["lib"].kr_sched_mark(2)


_ARM_ERRORS = {-1: "CUDA did not initialize it and it interposed no driver entry point: is LD_PRELOAD (hook mode) "
                   "or CUDA_INJECTION64_PATH (CUPTI mode) the library KREPLAY_SCHED_LIB names, and did CUDA start?",
               -2: "its record buffer could not be allocated (lower KREPLAY_SCHED_RECORDS)",
               -3: "CUPTI refused it (another CUPTI client in this process?)"}


def _schedule_args(req):
    """The schedule request of a run: the recorder, inferences to record,
    the file, the process's index and the measured blocks."""
    lib = _sched_lib()
    if lib is None:
        raise ScheduleError("schedule: KREPLAY_SCHED_LIB is not set: the runner must be started with kreplay's "
                           "schedule recorder (LD_PRELOAD and KREPLAY_SCHED_LIB)")
    if not isinstance(req, dict):
        raise ValueError("run: want \"schedule\" an object")
    n, path, process, blocks = (int(req.get("n", 10)), req.get("path"), int(req.get("process", 0)),
                                int(req.get("blocks", 3)))
    if n < 1:
        raise ValueError(f"schedule: n {n}, want 1 or more inferences")
    if blocks < 2 or blocks > n + 1:
        raise ValueError(f"schedule: blocks {blocks}, want 2 to n+1 ({n + 1}) measured blocks")
    if not isinstance(path, str) or not os.path.isabs(path):
        raise ValueError('schedule: want "path", an absolute file name')
    return lib, n, path, process, blocks


def _hooked(lib):
    """Whether the schedule recorder lib interposed driver entry points
    (hook mode: kr_sched_hooked() > 0) rather than waiting for CUPTI."""
    if lib is None:
        return False
    try:
        return lib.kr_sched_hooked() > 0
    except AttributeError:
        return False


DEFAULT_COST_PAIRS = 5


def _recorded(ticks, max_s, fn, min_n, req):
    """A run in hook mode, whose measured inferences are the recorded ones:
    blocks measured blocks (each as _measure runs one, with its share of
    the ticks and inferences, at least n in all), every one with the
    recorder armed and its inferences marked, after the recorder's
    per-call probe (_call_cost, which arms it); then the recorder's cost
    per inference in the same process (_cost_pairs), and the schedule
    flushed."""
    lib, n, path, process, blocks = _schedule_args(req)
    pairs = int(req.get("pairs") or DEFAULT_COST_PAIRS)
    if pairs < 1:
        raise ValueError(f"schedule: pairs {pairs}, want 1 or more")
    per_ticks, per_n = max(2, math.ceil(ticks / blocks)), max(1, math.ceil(max(min_n, n) / blocks))
    measured, done = [], False
    try:
        call_ns = _call_cost(lib)  # leaves it armed, its buffer empty
        for _ in range(blocks):
            measured.append(_measure(per_ticks, max_s / blocks, fn, per_n, marks=lib))
        lib.kr_sched_arm(0)
        armed, bare = _cost_pairs(lib, fn, pairs)
        done = True
    finally:
        if not done:
            lib.kr_sched_detach()
    r = _summary(measured)
    try:
        r["schedule"] = _flush(lib, path, process, _median_ns(armed), _median_ns(bare), call_ns, blocks)
        r["schedule"]["cost_pairs"] = pairs
    except ScheduleError as e:  # the measured run stands
        r["schedule_error"] = str(e)
    return r


def _median_ns(xs):
    return round(statistics.median(xs) * 1e9)


def _cost_pairs(lib, fn, k):
    """The recorder's cost per inference: k pairs of single inferences,
    each pair one armed (recording as a measured inference does, its
    marks of kind 0, outside any inference: its records are not written)
    and one disarmed, in alternating order, each timed on the host from a
    synchronize to a synchronize after it. It returns the armed walls and
    the disarmed ones, in seconds."""
    armed, bare = [], []
    for i in range(k):
        for on in ((True, False) if i % 2 == 0 else (False, True)):
            (armed if on else bare).append(_single(lib, fn, on))
    return armed, bare


def _single(lib, fn, on):
    """One inference's host wall from a synchronize to a synchronize
    after it, the recorder armed (appending to its buffer) or not."""
    global _marking
    torch.cuda.synchronize()
    if on:
        _arm(lib, 2)
    _marking = on
    try:
        t = time.perf_counter()
        if on:
            lib.kr_sched_mark(0)
        fn()
        if on:
            lib.kr_sched_mark(0)
        torch.cuda.synchronize()
        return time.perf_counter() - t
    finally:
        _marking = False
        lib.kr_sched_arm(0)


def _interleaved(ticks, max_s, fn, min_n, req):
    """A run whose measured inferences are interleaved with the recorded
    ones of the host's schedule, so that the host's speed, which moves
    within a process, is the same in both: blocks measured blocks (each
    as _measure runs one, with its share of the ticks and inferences),
    and between each two a block of recorded inferences (n in all) with
    the recorder armed, which lets go of CUPTI after it (kr_sched_pause)."""
    lib, n, path, process, blocks = _schedule_args(req)
    per_ticks, per_n = max(2, math.ceil(ticks / blocks)), max(1, math.ceil(min_n / blocks))
    counts = [n // (blocks - 1) + (1 if i < n % (blocks - 1) else 0) for i in range(blocks - 1)]
    measured, armed_s, call_ns, done = [], 0.0, None, False
    try:
        for b in range(blocks):
            if b > 0:
                fn()  # one inference after the recorder let go of CUPTI
                torch.cuda.synchronize()
            measured.append(_measure(per_ticks, max_s / blocks, fn, per_n))
            if b == blocks - 1:
                break
            if call_ns is None:
                call_ns = _call_cost(lib)  # leaves it armed, its buffer empty
            else:
                _arm(lib, 2)
            armed_s += _record_block(lib, fn, counts[b])
            if lib.kr_sched_pause() != 0:
                raise ScheduleError("schedule: the schedule recorder could not let go of CUPTI "
                                   "(cuptiUnsubscribe or cuptiFinalize failed)")
        done = True
    finally:
        if not done:
            lib.kr_sched_detach()  # the process as it was before arming
    r = _summary(measured)
    try:
        r["schedule"] = _flush(lib, path, process, round(armed_s / n * 1e9), round(r["wall_s_per_inference"] * 1e9),
                               call_ns, blocks)
    except ScheduleError as e:  # the measured run stands
        r["schedule_error"] = str(e)
    return r


def _record_block(lib, fn, n):
    """Records n inferences run back to back as _measure runs them (the
    NVML poller running), each marked kr_sched_mark(1) before it and
    kr_sched_mark(3) after its event is recorded (mark_token() marks 2 in
    between), after one armed inference left unmarked (the first after
    arming), a synchronize and a block mark, kr_sched_mark(4) (the file's
    "fresh": the block's first inference does not follow another back to
    back); returns their wall, host time to the last one's end."""
    global _marking
    _barrier()
    with _polling():
        fn()
        ev = torch.cuda.Event(enable_timing=True)
        ev.record()
        ev.synchronize()
        lib.kr_sched_mark(4)  # the block's first inference follows a synchronize
        _marking = True
        try:
            t_base = time.perf_counter()
            for _ in range(n):
                lib.kr_sched_mark(1)
                fn()
                ev = torch.cuda.Event(enable_timing=True)
                ev.record()
                lib.kr_sched_mark(3)
            ev.synchronize()
            return time.perf_counter() - t_base
        finally:
            _marking = False


def _flush(lib, path, process, armed_ns, measured_ns, call_ns, blocks):
    """Writes the recorded schedule to path and lets the recorder go
    (kr_sched_detach); the run reply's "schedule", whose recorder is the
    mode the file's header names."""
    got = lib.kr_sched_flush(path.encode(), (cpu_model() or "").encode(), process, armed_ns, measured_ns, call_ns or 0)
    errno = ctypes.get_errno()
    stats = (ctypes.c_longlong * 7)()
    k = lib.kr_sched_stats(stats, 7)
    detached = lib.kr_sched_detach() == 0
    if got < 0:
        raise ScheduleError(f"schedule: the schedule recorder could not write {path}: {os.strerror(errno)}")
    if not detached:
        raise ScheduleError("schedule: the schedule recorder could not let go of CUPTI (cuptiUnsubscribe or cuptiFinalize failed)")
    return dict(path=path, inferences=got, armed_wall_ns=armed_ns, measured_wall_ns=measured_ns,
                overhead_ns_per_inference=armed_ns - measured_ns, overhead_ns_per_call=call_ns or 0,
                records=stats[0], lost=stats[1], outside=stats[2], incomplete=stats[3], other_threads=stats[4],
                blocks=blocks, recorder="hook" if _hooked(lib) else "cupti", **({} if k < 7 else dict(hook_old=stats[5], hook_second=stats[6])))


_PROBE_CALLS = 2000  # launches per burst of the recorder's cost probe
_PROBE_BURSTS = 5


def _call_cost(lib):
    """The recorder's own cost per recorded call: the median burst of
    _PROBE_CALLS launches of one tiny kernel (an in-place add on one
    element) before the recorder subscribes, against the median burst
    after it is armed, over the calls (the probe's records fall outside
    any inference and are not written). It leaves the recorder armed, with
    an emptied buffer; the difference is clamped at 0 (noise)."""
    x = torch.zeros(1, device=torch.device("cuda", _state.get("dev", 0)))

    def burst():
        torch.cuda.synchronize()
        t = time.perf_counter()
        for _ in range(_PROBE_CALLS):
            x.add_(1)
        t = time.perf_counter() - t
        torch.cuda.synchronize()
        return t

    def median_burst():
        burst()
        return sorted(burst() for _ in range(_PROBE_BURSTS))[_PROBE_BURSTS // 2]

    off = median_burst()
    _arm(lib)
    on = median_burst()
    _arm(lib)  # empties the buffer: the probe's records are not kept
    return max(0, round((on - off) / _PROBE_CALLS * 1e9))


def _arm(lib, mode=1):
    rc = lib.kr_sched_arm(mode)
    if rc != 0:
        raise ScheduleError(f"schedule: the schedule recorder could not arm: {_ARM_ERRORS.get(rc, rc)}")


def cpu_model():
    """The host CPU's model: /proc/cpuinfo's first "model name", else
    platform.processor(); None when neither says."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name") and ":" in line:
                    return line.split(":", 1)[1].strip() or None
    except OSError:
        pass
    return platform.processor() or None


def _str(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def _lib_property(names, fn):
    """major.minor.patch from a CUDA library's GetProperty function, from
    the first of names that loads (torch has loaded it by then)."""
    for name in names:
        try:
            lib = ctypes.CDLL(name)
        except OSError:
            continue
        parts = []
        for prop in (0, 1, 2):  # MAJOR_VERSION, MINOR_VERSION, PATCH_LEVEL
            v = ctypes.c_int()
            if getattr(lib, fn)(prop, ctypes.byref(v)) != 0:
                return None
            parts.append(str(v.value))
        return ".".join(parts)
    return None


def _cudnn_version(v):
    """cuDNN's version number as major.minor.patch: 91002 is 9.10.2 (cuDNN
    9 on), 8907 is 8.9.7 (before)."""
    if not v:
        return None
    if v >= 10000:
        return f"{v // 10000}.{v // 100 % 100}.{v % 100}"
    return f"{v // 1000}.{v // 100 % 10}.{v % 100}"


def _module_version(name):
    try:
        return __import__(name).__version__
    except Exception:  # noqa: BLE001 - a missing module has no version
        return None


def env_info():
    """The GPU and the software stack, as env.json records them."""
    dev = _state.get("dev", torch.cuda.current_device())
    p = torch.cuda.get_device_properties(dev)
    torch.cuda.current_blas_handle()  # loads cuBLAS and cuBLASLt
    d = dict(gpu=p.name, sm_count=p.multi_processor_count, memory_bytes=p.total_memory,
             compute_capability=f"{p.major}.{p.minor}", device=dev,
             cuda_runtime=torch.version.cuda, torch=torch.__version__, python=platform.python_version())
    try:
        pynvml.nvmlInit()
        h = nvml_handle(dev)
        d["driver"] = _str(pynvml.nvmlSystemGetDriverVersion())
        d["gpu_uuid"] = _str(pynvml.nvmlDeviceGetUUID(h))
        d["power_limit_w"] = pynvml.nvmlDeviceGetPowerManagementLimit(h) / 1000.0
    except pynvml.NVMLError as e:
        d["nvml_error"] = str(e)
    d["cublas"] = _lib_property(["libcublas.so.13", "libcublas.so.12", "libcublas.so"], "cublasGetProperty")
    d["cublaslt"] = _lib_property(["libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"], "cublasLtGetProperty")
    d["cudnn"] = _cudnn_version(torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None)
    try:
        d["nccl"] = ".".join(str(x) for x in torch.cuda.nccl.version())
    except Exception:  # noqa: BLE001 - a build without NCCL
        d["nccl"] = None
    d["triton"] = _module_version("triton")
    d["transformers"] = _module_version("transformers")
    d["cpu"] = cpu_model()
    if world_size() > 1:
        d.update(rank=rank(), world_size=world_size())
    return {k: v for k, v in d.items() if v is not None}


def _handle(build, req):
    cmd = req.get("cmd")
    if cmd == "load":
        return _load(build, req)
    if cmd == "env":
        return env_info()
    if cmd not in ("warmup", "run", "capture", "record"):
        raise ValueError(f"unknown command {cmd!r}")
    if "run" not in _state:
        raise RuntimeError(f"{cmd}: no workload loaded")
    return {"warmup": _warmup, "run": _run, "capture": _capture, "record": _record}[cmd](req)


def serve(build):
    """Serves kreplay's requests until it says quit or closes stdin.
    build(spec) is called on "load" with the workload spec (a dict) and
    returns a callable that runs one inference (on the GPU, without
    synchronizing at its end), or (callable, dict) to add to load's reply."""
    global _out
    sys.stdout.flush()
    # The protocol keeps the real stdout; everything else written to fd 1
    # (print, C libraries) goes to stderr from here on.
    _out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    _reply(ok=True, ready=True, protocol=PROTOCOL)
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            req = json.loads(line)
            if not isinstance(req, dict):
                raise ValueError("a request is a JSON object")
            if req.get("cmd") == "quit":
                _reply(ok=True)
                return
            _reply(ok=True, **_handle(build, req))
        except torch.cuda.OutOfMemoryError as e:
            _state.pop("run", None)
            gc.collect()
            torch.cuda.empty_cache()
            msg = str(e).strip().splitlines()[0] if str(e).strip() else "CUDA out of memory"
            _reply(ok=False, kind="oom", error=f"out of GPU memory on device {_state.get('dev', '?')}: {msg}")
        except Unavailable as e:
            _reply(ok=False, kind="unavailable", error=str(e))
        except ScheduleError as e:
            _reply(ok=False, kind="schedule", error=str(e))
        except Exception as e:  # noqa: BLE001 - every failure goes back as a reply
            _reply(ok=False, kind="error", error=f"{type(e).__name__}: {e}")
