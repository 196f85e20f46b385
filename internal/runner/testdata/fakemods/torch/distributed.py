"""A stand-in for torch.distributed: see ../README.md. Not PyTorch.

The ranks of a group meet through files in $FAKE_DIST_DIR (default the
temporary directory), under the group's MASTER_PORT: every collective call
of a rank writes its sequence number, its kind and its value, and waits
(at most $FAKE_DIST_TIMEOUT seconds, default 60) for every rank's file of
the same number; a different kind at the same number is an error, as a
real collective would hang or fail."""
import json
import os
import tempfile
import time

import torch

_g = {}


class ReduceOp:
    MAX = "max"
    SUM = "sum"


def is_available():
    return True


def is_initialized():
    return bool(_g)


def init_process_group(backend, rank=None, world_size=None, device_id=None):
    if _g:
        raise RuntimeError("init_process_group: already initialized")
    for k in ("MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE", "LOCAL_RANK"):
        if k not in os.environ:
            raise ValueError(f"init_process_group: {k} is not set")
    if int(os.environ["RANK"]) != rank or int(os.environ["WORLD_SIZE"]) != world_size:
        raise ValueError(f"init_process_group: rank {rank} of {world_size}, but RANK={os.environ['RANK']} "
                         f"WORLD_SIZE={os.environ['WORLD_SIZE']}")
    if os.environ.get("NCCL_NVLS_ENABLE") != "0":
        raise RuntimeError("init_process_group: NCCL_NVLS_ENABLE is not 0")
    d = os.path.join(os.environ.get("FAKE_DIST_DIR") or tempfile.gettempdir(), "fakedist-" + os.environ["MASTER_PORT"])
    os.makedirs(d, exist_ok=True)
    _g.update(rank=rank, world=world_size, backend=backend, dir=d, seq=0)
    _collective("init", 0)


def get_rank():
    return _g["rank"]


def get_world_size():
    return _g["world"]


def new_group(backend=None):
    return backend


def _collective(kind, value):
    seq = _g["seq"]
    _g["seq"] += 1
    path = os.path.join(_g["dir"], f"{seq}.{_g['rank']}")
    with open(path + ".tmp", "w") as f:
        json.dump({"kind": kind, "value": value}, f)
    os.replace(path + ".tmp", path)
    deadline = time.perf_counter() + float(os.environ.get("FAKE_DIST_TIMEOUT") or 60)
    values = []
    for r in range(_g["world"]):
        p = os.path.join(_g["dir"], f"{seq}.{r}")
        while not os.path.exists(p):
            if time.perf_counter() > deadline:
                raise RuntimeError(f"fake collective {kind} #{seq}: rank {r} never came")
            time.sleep(0.0002)
        with open(p) as f:
            got = json.load(f)
        if got["kind"] != kind:
            raise RuntimeError(f"fake collective #{seq}: rank {_g['rank']} called {kind}, rank {r} {got['kind']}")
        values.append(got["value"])
    return values


def barrier(group=None, device_ids=None):
    _collective("barrier", 0)


def all_reduce(t, op=ReduceOp.SUM, group=None):
    values = _collective("all_reduce:" + str(group), t.values)
    cols = list(zip(*values))
    t.values = [max(c) if op == ReduceOp.MAX else sum(c) for c in cols]
