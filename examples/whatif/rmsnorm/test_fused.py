"""CPU tests of the pure-Python parts of issue 46's check: fused_model.py's
spec handling and check verdicts, nvrtc_kernel.py's library search,
options and argument packing, whatif_compare.py's comparison. Nothing here
needs torch, NVRTC or a GPU.

    python3 -m unittest discover -s examples/whatif/rmsnorm -p 'test_*.py'
"""
import ctypes
import glob
import io
import json
import os
import re
import struct
import sys
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import fused_model  # noqa: E402
import nvrtc_kernel  # noqa: E402
import whatif_compare  # noqa: E402

SPECS = os.path.join(HERE, "..", "..", "..", "scripts", "gpu", "specs", "whatif")


def spec_of(mode="fused", **kw):
    s = {"version": 1, "name": "x_prefill", "dtype": "bf16", "attention": "sdpa",
         "workload": {"kind": "prefill", "batch": 2, "seq": 16}, "devices": [0], "seed": 0,
         "command": {"argv": ["python3", "fused_model.py"], "dir": HERE,
                     "args": {"mode": mode, "model": {"config": {"model_type": "llama", "hidden_size": 64}}}}}
    s.update(kw)
    return s


class WorkloadSpec(unittest.TestCase):
    def test_modes(self):
        for mode in fused_model.MODES:
            got, s = fused_model.workload_spec(spec_of(mode))
            self.assertEqual(got, mode)
            self.assertNotIn("command", s)
            self.assertEqual(s["model"], {"config": {"model_type": "llama", "hidden_size": 64}})
            self.assertEqual((s["dtype"], s["attention"], s["workload"]["seq"]), ("bf16", "sdpa", 16))

    def test_bad(self):
        cases = {
            "no command": {k: v for k, v in spec_of().items() if k != "command"},
            "bad mode": spec_of("fuzed"),
            "no model": spec_of(command={"argv": ["python3"], "args": {"mode": "fused"}}),
            "no model_type": spec_of(command={"argv": ["python3"], "args": {"mode": "fused", "model": {"config": {}}}}),
            "unknown arg": spec_of(command={"argv": ["python3"], "args": {"mode": "fused", "extra": 1,
                                                                          "model": {"config": {"model_type": "llama"}}}}),
            "compile": spec_of(compile={"mode": "default"}),
            "parallel": spec_of(parallel={"tensor": 2}, devices=[0, 1]),
            "ranks": spec_of(distributed={"world_size": 2, "rank": 0}),
            "f32 fused": spec_of(dtype="f32"),
        }
        for name, s in cases.items():
            with self.assertRaises(ValueError, msg=name):
                fused_model.workload_spec(s)
        # f32 is fine unfused: nothing is launched from the .cu file.
        self.assertEqual(fused_model.workload_spec(spec_of("unfused", dtype="f32"))[0], "unfused")

    def test_shipped_specs(self):
        paths = sorted(glob.glob(os.path.join(SPECS, "*-prefill.json")))
        self.assertGreaterEqual(len(paths), 4)
        for p in paths:
            with open(p) as f:
                s = json.load(f)
            mode, ms = fused_model.workload_spec(s)
            self.assertTrue(os.path.basename(p).endswith(f"-{mode}-prefill.json"), p)
            self.assertEqual(ms["dtype"], s["dtype"])
            self.assertIn(s["dtype"], fused_model.KERNELS)


class Kernels(unittest.TestCase):
    def test_abi_in_source(self):
        with open(fused_model.KERNEL_FILE) as f:
            src = f.read()
        for name in fused_model.KERNELS.values():
            abi = (r'extern\s+"C"\s+__global__\s+void\s+(?:__launch_bounds__\(\d+\)\s*)?' + name + r'\s*\(\s*const u16 \*__restrict__ x,\s*'
                   r'const u16 \*__restrict__ w,\s*u16 \*__restrict__ y,\s*int rows,\s*int cols,\s*float eps\)')
            self.assertRegex(src, abi)

    def test_compile_options(self):
        self.assertEqual(nvrtc_kernel.compile_options(9, 0), ["--gpu-architecture=sm_90", "--std=c++17", "-default-device"])
        self.assertEqual(nvrtc_kernel.compile_options(10, 0)[0], "--gpu-architecture=sm_100")
        with self.assertRaises(ValueError):
            nvrtc_kernel.compile_options(0, 0)

    def test_candidates(self):
        with tempfile.TemporaryDirectory() as d:
            files = ["nvidia/cuda_nvrtc/lib/libnvrtc.so.12", "nvidia/cuda_nvrtc/lib/libnvrtc-builtins.so.12.8",
                     "nvidia/cu13/lib/libnvrtc.so.13", "torch/lib/libnvrtc-abc123.so.12"]
            for rel in files:
                os.makedirs(os.path.dirname(os.path.join(d, rel)), exist_ok=True)
                open(os.path.join(d, rel), "w").close()
            env = {nvrtc_kernel.NVRTC_LIB_ENV: "/pinned/libnvrtc.so"}
            got = nvrtc_kernel.nvrtc_candidates(env, [d, d], cuda_major=13)
            self.assertEqual(got[0], "/pinned/libnvrtc.so")
            self.assertEqual(got[1], os.path.join(d, "nvidia/cu13/lib/libnvrtc.so.13"))  # torch's CUDA major first
            self.assertFalse(any("builtins" in p for p in got))
            self.assertEqual(len(got), len(set(got)))
            self.assertEqual(got[-len(nvrtc_kernel.NVRTC_SONAMES):], list(nvrtc_kernel.NVRTC_SONAMES))
            self.assertEqual(len(got), 1 + 3 + len(nvrtc_kernel.NVRTC_SONAMES))
            got12 = nvrtc_kernel.nvrtc_candidates({}, [d], cuda_major=12)
            self.assertEqual(sorted(got12[:2]), sorted([os.path.join(d, "nvidia/cuda_nvrtc/lib/libnvrtc.so.12"),
                                                        os.path.join(d, "torch/lib/libnvrtc-abc123.so.12")]))

    def test_builtins_beside(self):
        with tempfile.TemporaryDirectory() as d:
            for n in ("libnvrtc.so.13", "libnvrtc-builtins.so.13.0", "libnvrtc-builtins.so.13.0.88", "libother.so"):
                open(os.path.join(d, n), "w").close()
            self.assertEqual(nvrtc_kernel.builtins_beside(os.path.join(d, "libnvrtc.so.13")),
                             [os.path.join(d, "libnvrtc-builtins.so.13.0"), os.path.join(d, "libnvrtc-builtins.so.13.0.88")])
        self.assertEqual(nvrtc_kernel.builtins_beside("libnvrtc.so.13"), [])

    def test_load_names_every_failure(self):
        with self.assertRaises(nvrtc_kernel.Error) as e:
            nvrtc_kernel.NVRTC.load(["/nonexistent/libnvrtc.so.13", "/nonexistent/libnvrtc.so.12"])
        self.assertIn("/nonexistent/libnvrtc.so.13", str(e.exception))
        self.assertIn("/nonexistent/libnvrtc.so.12", str(e.exception))
        self.assertIn(nvrtc_kernel.NVRTC_LIB_ENV, str(e.exception))

    def test_args_packing(self):
        a = nvrtc_kernel.RowNormArgs()
        p = a.set(0x7f0000001000, 0x7f0000002000, 0x7f0000003000, 4096, 2048, 1e-5)
        self.assertEqual(len(p), 6)
        ptr = lambda i, t: ctypes.cast(p[i], ctypes.POINTER(t)).contents.value  # noqa: E731
        self.assertEqual([ptr(i, ctypes.c_void_p) for i in range(3)], [0x7f0000001000, 0x7f0000002000, 0x7f0000003000])
        self.assertEqual((ptr(3, ctypes.c_int), ptr(4, ctypes.c_int)), (4096, 2048))
        self.assertEqual(ptr(5, ctypes.c_float), struct.unpack("f", struct.pack("f", 1e-5))[0])  # a float, not a double
        p2 = a.set(16, 32, 48, 7, 9, 0.5)  # refilled in place
        self.assertEqual(ctypes.addressof(p2), ctypes.addressof(p))
        self.assertEqual((ptr(0, ctypes.c_void_p), ptr(3, ctypes.c_int), ptr(5, ctypes.c_float)), (16, 7, 0.5))
        for bad in [(0, 32, 48, 7, 9, 0.5), (16, 32, 48, 0, 9, 0.5), (16, 32, 48, 7, 2**31, 0.5)]:
            with self.assertRaises(ValueError):
                a.set(*bad)


class Check(unittest.TestCase):
    def test_verdict(self):
        self.assertTrue(fused_model.compare_stats(0.0, 3.0, 0))
        self.assertTrue(fused_model.compare_stats(0.029, 3.0, 0))
        self.assertFalse(fused_model.compare_stats(0.031, 3.0, 0))
        self.assertFalse(fused_model.compare_stats(0.0, 3.0, 1))
        self.assertFalse(fused_model.compare_stats(float("nan"), 3.0, 0))
        self.assertFalse(fused_model.compare_stats(float("inf"), 3.0, 0))
        self.assertTrue(fused_model.compare_stats(0.0, 0.0, 0))
        self.assertFalse(fused_model.compare_stats(1e-9, 0.0, 0))

    def test_summary_and_report(self):
        c = lambda rel, ok: dict(shape=[2, 8, 64], dtype="bfloat16", max_abs_err=rel * 4, scale=4.0, rel_err=rel,  # noqa: E731
                                 differing=3, elements=1024, nan_mismatches=0, ok=ok)
        checks = {"model.norm": c(0.002, True), "model.layers.0.input_layernorm": c(0.5, False)}
        s = fused_model.summary(checks)
        self.assertEqual((s["modules"], s["failed"], s["worst"]), (2, 1, "model.layers.0.input_layernorm"))
        self.assertEqual((s["max_rel_err"], s["differing"], s["elements"]), (0.5, 6, 2048))
        ls = fused_model.check_lines(checks)
        self.assertTrue(ls[0].endswith("FAILED") and "input_layernorm" in ls[0] and ls[1].endswith("ok"))
        self.assertEqual(fused_model.summary({}), {"modules": 0})
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "r.jsonl")
            fused_model.write_report({"mode": "fused", "n": 1}, env={fused_model.REPORT_ENV: path})
            fused_model.write_report({"mode": "unfused", "n": 2}, env={fused_model.REPORT_ENV: path})
            fused_model.write_report({"mode": "x"}, env={})
            self.assertEqual(whatif_compare.read_report(path), [{"mode": "fused", "n": 1}, {"mode": "unfused", "n": 2}])


# The timeline design as kreplay whatif writes it: here the same saving
# as the default design's kernels' own, so that either is accepted.
TIMELINE = dict(saving_ns=2.6e6, energy=True, saving_j=1.6, energy_rule="timeline energy", power_limited=False,
                mean_power_w=600.0, power_limit_w=700.0, power_limit_from="the device (NVML)")


def whatif_json(**pred):
    p = dict(runs=33, replaced_ns=3.0e6, fused_ns=0.4e6, saving_ns=2.6e6, energy=True, saving_j=1.6, timeline_design=TIMELINE)
    p.update(pred)
    agree = dict(max_abs_err=0.001, scale=4.0, rel_err=2.5e-4, beyond=0, elements=100, tolerance=0.01)
    return dict(workload="l1b", gpu="NVIDIA H200", prediction=p, match=dict(runs=[{}] * 33),
                variants=[dict(index=0, check=dict(chain=agree, host=agree))])


def run_of(wall_ms, energy_j, procs=None):
    r = dict(workload="w_prefill", gpu="NVIDIA H200", wall_s_per_iter=wall_ms / 1e3, event_ms_per_iter=wall_ms,
             energy_j_per_iter=energy_j)
    if procs:
        r["median_ms_per_process"] = procs
    return r


class Compare(unittest.TestCase):
    def test_predicted_follows_the_compared_one(self):
        ctx = dict(replaced_ns=1, fused_ns=1, saving_ns=2.4e6, energy=True, saving_j=1.5)
        cases = [
            (dict(), 2.6e6, 1.6),
            (dict(in_context=ctx), 2.4e6, 1.5),
            (dict(in_context=dict(ctx, energy=False)), 2.4e6, 1.6),
            (dict(in_context=ctx, at_limit=True, limit_saving_ns=2.0e6), 2.0e6, 1.6),
            (dict(in_context=ctx, at_limit=True, limit_saving_ns=2.0e6, cap=dict(saving_ns=1.9e6, saving_j=1.2)), 1.9e6, 1.2),
            (dict(cap=dict(saving_ns=1.9e6, saving_j=1.2), again=dict(saving_ns=1.8e6, saving_j=1.1)), 1.8e6, 1.1),
            (dict(again=dict(saving_ns=1.8e6, saving_j=1.1), removed=dict(saving_ns=1.7e6, saving_j=1.0)), 1.7e6, 1.0),
            (dict(energy=False, no_energy="the kernel has no energy"), 2.6e6, None),
        ]
        for pred, ns, j in cases:
            (t, _), (e, why) = whatif_compare.predicted(whatif_json(**pred)["prediction"])
            self.assertEqual((t, e), (ns, j), pred)
        self.assertIn("the kernel has no energy", whatif_compare.predicted(cases[-1][0] | dict(
            energy=False, no_energy="the kernel has no energy", saving_ns=1))[1][1])

    def test_predicted_timeline(self):
        td = dict(TIMELINE, saving_ns=3.04e6, saving_j=2.098, energy_rule="power-limited: mean power W x time saving",
                  power_limited=True, mean_power_w=690.3)
        (t, t_from), (e, e_from) = whatif_compare.predicted_timeline(whatif_json(timeline_design=td)["prediction"])
        self.assertEqual((t, e), (3.04e6, 2.098))
        self.assertIn("timeline check", t_from)
        self.assertIn("power-limited", e_from)
        self.assertIn("690 W at or above 95% of the 700 W limit", e_from)
        (t, _), (e, e_from) = whatif_compare.predicted_timeline(whatif_json(timeline_design=dict(
            saving_ns=3e6, energy=False, no_energy="cannot tell whether the measured run is at the power limit: x"))["prediction"])
        self.assertEqual((t, e), (3e6, None))
        self.assertIn("cannot tell", e_from)
        (t, t_from), (e, _) = whatif_compare.predicted_timeline(whatif_json(
            timeline_design=None, timeline_design_error="the timeline check did not run: skipped (-no-timeline)")["prediction"])
        self.assertEqual((t, e), (None, None))
        self.assertIn("-no-timeline", t_from)
        (t, t_from), _ = whatif_compare.predicted_timeline(whatif_json(timeline_design=None)["prediction"])
        self.assertIsNone(t)
        self.assertIn("not in whatif.json", t_from)

    def test_designs(self):
        # measured 2.5 ms and 1.5 J. The timeline design 2.45 ms (-2%),
        # 1.45 J (-3.3%); the default design 2.9 ms (+16%), 1.6 J.
        w = whatif_json(saving_ns=2.9e6, timeline_design=dict(TIMELINE, saving_ns=2.45e6, saving_j=1.45))
        u, f = run_of(20.0, 12.0), run_of(17.5, 10.5)
        r = whatif_compare.compare(w, u, f)
        self.assertEqual(r["design"], "timeline")
        self.assertAlmostEqual(r["time_err"], -0.02, places=6)
        self.assertAlmostEqual(r["energy_err"], -0.05 / 1.5, places=6)
        self.assertTrue(r["accepted"])
        self.assertEqual(set(r["designs"]), {"timeline", "default"})
        self.assertAlmostEqual(r["designs"]["default"]["time_err"], 0.16, places=6)
        self.assertFalse(r["designs"]["default"]["accepted"])
        self.assertTrue(r["designs"]["timeline"]["accepted"])
        d = whatif_compare.compare(w, u, f, design="default")
        self.assertFalse(d["accepted"])
        self.assertEqual(d["designs"], r["designs"])
        text = "\n".join(whatif_compare.lines(r))
        self.assertRegex(text, r"design timeline \(compared\): time 2450\.0 us, error -2\.0%; energy 1\.4500 J, error -3\.3%: accepted")
        self.assertRegex(text, r"design default: time 2900\.0 us, error \+16\.0%; energy 1\.6000 J, error \+6\.7%: not accepted")
        self.assertTrue(text.endswith("ACCEPTED (design timeline)"))
        # The design without an energy: not accepted, the reason printed.
        w = whatif_json(timeline_design=dict(saving_ns=2.45e6, energy=False, no_energy="cannot tell: no measured run"))
        r = whatif_compare.compare(w, u, f)
        self.assertFalse(r["accepted"])
        self.assertIsNone(r["energy_err"])
        self.assertIn("cannot tell: no measured run", "\n".join(whatif_compare.lines(r)))
        # No design in whatif.json: not accepted, said; the default still judged.
        r = whatif_compare.compare(whatif_json(timeline_design=None, timeline_design_error="the timeline check did not run: x"), u, f)
        self.assertFalse(r["accepted"])
        self.assertIsNone(r["time_err"])
        self.assertTrue(r["designs"]["default"]["accepted"])
        self.assertIn("time saving: predicted n/a (timeline design not given: the timeline check did not run: x)",
                      "\n".join(whatif_compare.lines(r)))
        with self.assertRaises(ValueError):
            whatif_compare.compare(w, u, f, design="other")

    def test_acceptance(self):
        # The default design's acceptance (the timeline design's is the same rule).
        w = whatif_json()
        # measured 2.5 ms and 1.5 J: predicted 2.6 ms (+4%), 1.6 J (+6.7%)
        r = whatif_compare.compare(w, run_of(20.0, 12.0, [20.1, 19.9]), run_of(17.5, 10.5, [17.4, 17.6]), design="default")
        self.assertAlmostEqual(r["measured"]["time_ns"], 2.5e6, delta=1)
        self.assertAlmostEqual(r["time_err"], 0.04, places=6)
        self.assertAlmostEqual(r["energy_err"], 0.1 / 1.5, places=6)
        self.assertTrue(r["accepted"])
        lo, hi = r["measured"]["process_range_ns"]
        self.assertAlmostEqual(lo, 2.3e6, delta=1)
        self.assertAlmostEqual(hi, 2.7e6, delta=1)
        # time off by more than 10%
        r = whatif_compare.compare(w, run_of(20.0, 12.0), run_of(17.7, 10.5), design="default")
        self.assertFalse(r["accepted"])
        # energy off by more than 15%
        r = whatif_compare.compare(w, run_of(20.0, 12.0), run_of(17.5, 10.7), design="default")
        self.assertAlmostEqual(r["energy_err"], (1.6 - 1.3) / 1.3, places=6)
        self.assertFalse(r["accepted"])
        # the fused run slower: never accepted
        r = whatif_compare.compare(whatif_json(saving_ns=-1e5, saving_j=-0.1), run_of(20.0, 12.0), run_of(20.1, 12.1), design="default")
        self.assertFalse(r["accepted"])
        # no energy predicted
        r = whatif_compare.compare(whatif_json(energy=False), run_of(20.0, 12.0), run_of(17.5, 10.5), design="default")
        self.assertIsNone(r["energy_err"])
        self.assertFalse(r["accepted"])

    def test_cross_checks(self):
        rec = dict(mode="fused", norms=33, ok=True, check=dict(max_rel_err=3e-3, max_abs_err=0.0078125))
        r = whatif_compare.compare(whatif_json(), run_of(20.0, 12.0), run_of(17.5, 10.5), [rec, rec, dict(mode="unfused")])
        self.assertEqual((r["fused_norms"], r["fused_processes"], r["notes"]), ([33], 2, []))
        self.assertEqual((r["fused_max_abs_err"], r["fused_max_rel_err"]), (0.0078125, 3e-3))
        self.assertTrue(r["accepted"])
        r = whatif_compare.compare(whatif_json(), run_of(20.0, 12.0), run_of(17.5, 10.5), [dict(rec, norms=49)])
        self.assertTrue(any("49" in n for n in r["notes"]))
        r = whatif_compare.compare(whatif_json(), run_of(20.0, 12.0), run_of(17.5, 10.5), [dict(rec, ok=False)])
        self.assertFalse(r["accepted"])
        r = whatif_compare.compare(whatif_json(), run_of(20.0, 12.0), run_of(17.5, 10.5), [])
        self.assertFalse(r["accepted"])  # a report asked for and empty: the fused check left no record
        w = whatif_json()
        w["variants"][0]["check"]["chain"]["beyond"] = 3
        self.assertFalse(whatif_compare.compare(w, run_of(20.0, 12.0), run_of(17.5, 10.5))["accepted"])

    def test_main(self):
        with tempfile.TemporaryDirectory() as d:
            def bundle(name, run):
                os.makedirs(os.path.join(d, name))
                run = dict(run)
                gpu = run.pop("gpu")
                wl = run.pop("workload")
                with open(os.path.join(d, name, "measured.json"), "w") as f:
                    json.dump({"h200": {"gpu": gpu, "runs": {wl: run}}}, f)
                return os.path.join(d, name)
            u, f = bundle("u", run_of(20.0, 12.0, [20.0, 20.2])), bundle("f", run_of(17.5, 10.5, [17.5, 17.6]))
            wpath, jpath = os.path.join(d, "w.json"), os.path.join(d, "out.json")
            with open(wpath, "w") as fh:
                json.dump(whatif_json(), fh)
            out, err = io.StringIO(), io.StringIO()
            with redirect_stdout(out), redirect_stderr(err):
                self.assertEqual(whatif_compare.main([wpath, u, f, "-json", jpath]), 0)
                self.assertEqual(whatif_compare.main([wpath, u]), 2)
                self.assertEqual(whatif_compare.main([wpath, u, os.path.join(d, "missing")]), 2)
                self.assertEqual(whatif_compare.main(["-design", "other", wpath, u, f]), 2)
                self.assertEqual(whatif_compare.main(["-design", "default", wpath, u, f]), 0)
            self.assertIn("ACCEPTED", out.getvalue())
            self.assertRegex(out.getvalue(), r"time saving: predicted 2600\.0 us .* measured 2500\.0 us .*error \+4\.0%")
            with open(jpath) as fh:
                cj = json.load(fh)
            self.assertTrue(cj["accepted"])
            self.assertEqual((cj["design"], sorted(cj["designs"])), ("timeline", ["default", "timeline"]))
            with open(os.path.join(u, "measured.json"), "w") as fh:
                json.dump({"a": {"runs": {"x": {}}}, "b": {}}, fh)
            with redirect_stdout(io.StringIO()), redirect_stderr(err):
                self.assertEqual(whatif_compare.main([wpath, u, f]), 2)
            self.assertIn("want one machine", err.getvalue())


# A stand-in for the kreplay CLI: capture writes a bundle's measured.json
# (and, for a fused spec, the fused program's report line), whatif a
# result; every call is logged with its arguments and KREPLAY_NVRTC_LIB.
FAKE_KREPLAY = r"""#!/usr/bin/env python3
import json, os, sys
a = sys.argv[1:]
with open(os.environ["FAKE_LOG"], "a") as f:
    f.write(json.dumps({"argv": a, "nvrtc": os.environ.get("KREPLAY_NVRTC_LIB"),
                        "ldpath": os.environ.get("LD_LIBRARY_PATH", "")}) + "\n")
off = float(os.environ.get("FAKE_OFF", "1"))
if a[0] == "capture":
    spec = json.load(open(a[1]))
    out = a[a.index("-o") + 1]
    fused = spec["command"]["args"]["mode"] == "fused"
    os.makedirs(out, exist_ok=True)
    run = {"iters": 100, "wall_s_per_iter": 0.0175 if fused else 0.020, "event_ms_per_iter": 17.5 if fused else 20.0,
           "energy_j_per_iter": 10.5 if fused else 12.0, "median_ms_per_process": [17.5, 17.6] if fused else [20.0, 20.1]}
    json.dump({"h200": {"gpu": "NVIDIA H200", "runs": {spec["name"]: run}}}, open(os.path.join(out, "measured.json"), "w"))
    if fused:
        with open(os.environ["KREPLAY_FUSED_REPORT"], "a") as f:
            f.write(json.dumps({"mode": "fused", "norms": 33, "ok": True, "nvrtc_lib": "/x/libnvrtc.so.13",
                                "check": {"max_rel_err": 0.003}}) + "\n")
elif a[0] == "whatif":
    if os.environ.get("FAKE_NO_NVRTC") and not os.environ.get("KREPLAY_NVRTC_LIB"):
        print("kreplay whatif: nvrtc: library not available: tried libnvrtc.so.13", file=sys.stderr)
        sys.exit(1)
    agree = {"max_abs_err": 0.001, "scale": 4.0, "rel_err": 2.5e-4, "beyond": 0, "elements": 100, "tolerance": 0.01}
    r = {"workload": "w", "gpu": "NVIDIA H200", "match": {"runs": [{}] * 33},
         "variants": [{"index": 0, "check": {"chain": agree, "host": agree}}],
         "prediction": {"runs": 33, "replaced_ns": 3e6, "fused_ns": 4e5, "saving_ns": 2.6e6 * off, "energy": True, "saving_j": 1.6,
                        "timeline_design": {"saving_ns": 2.6e6 * off, "energy": True, "saving_j": 1.6, "energy_rule": "timeline energy",
                                            "mean_power_w": 600, "power_limit_w": 700}}}
    json.dump(r, open(a[a.index("-o") + 1], "w"))
    print("whatif report")
"""


class Script(unittest.TestCase):
    """scripts/gpu/whatif-fused-check.sh with a stand-in kreplay."""

    def run_script(self, d, **env):
        root = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
        fake = os.path.join(d, "kreplay")
        with open(fake, "w") as f:
            f.write(FAKE_KREPLAY)
        os.chmod(fake, 0o755)
        import subprocess
        e = dict(os.environ, KREPLAY=fake, OUT=os.path.join(d, "out"), FAKE_LOG=os.path.join(d, "calls.jsonl"),
                 PATH="/usr/bin:/bin:" + os.environ.get("PATH", ""))
        e.pop("KREPLAY_NVRTC_LIB", None)
        e.update(env)
        p = subprocess.run(["bash", "scripts/gpu/whatif-fused-check.sh"], cwd=root, env=e, capture_output=True, text=True)
        calls = []
        if os.path.exists(e["FAKE_LOG"]):
            with open(e["FAKE_LOG"]) as f:
                calls = [json.loads(ln) for ln in f]
        return p, calls

    def test_accepted(self):
        with tempfile.TemporaryDirectory() as d:
            p, calls = self.run_script(d)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            self.assertEqual([c["argv"][0] for c in calls], ["capture", "capture", "whatif"] * 2)
            caps = [c["argv"] for c in calls if c["argv"][0] == "capture"]
            self.assertTrue(all(a[-3:] == ["-processes", "2", "-no-schedule"] and "-force" in a for a in caps), caps)
            self.assertEqual([os.path.basename(a[1]) for a in caps], ["llama-unfused-prefill.json", "llama-fused-prefill.json",
                                                                      "qwen2-unfused-prefill.json", "qwen2-fused-prefill.json"])
            wi = [c for c in calls if c["argv"][0] == "whatif"]
            for c, kernel, fam in zip(wi, ["rmsnorm_fused_bf16", "rmsnorm_fused"], ["llama", "qwen2"]):
                a = c["argv"]
                self.assertEqual(a[a.index("-replace") + 1], "llama-rmsnorm")
                self.assertEqual(a[a.index("-name") + 1], kernel)
                self.assertEqual(a[a.index("-kernel") + 1], "examples/whatif/rmsnorm/rmsnorm_fused.cu")
                self.assertIn("-energy", a)
                self.assertNotIn("-no-timeline", a)  # the timeline design needs the timeline check
                self.assertTrue(a[-1].endswith(os.path.join(fam, "unfused")))
                self.assertIsNone(c["nvrtc"])  # kreplay's own search
            with open(os.path.join(d, "out", "whatif-fused", "summary.txt")) as f:
                summary = f.read()
            self.assertEqual(summary.count("\nACCEPTED (design timeline)"), 2, summary)
            self.assertIn("error +4.0%", summary)
            self.assertEqual(summary.count("design timeline (compared): time 2600.0 us, error +4.0%"), 2, summary)
            self.assertEqual(summary.count("design default: time 2600.0 us, error +4.0%"), 2, summary)

    def test_gpus_archive(self):
        # The judging run's command: the families at once, one per GPU, archived.
        with tempfile.TemporaryDirectory() as d:
            p, calls = self.run_script(d, FAMILIES="mistral qwen3", GPUS="0 1", ARCHIVE="1", DESIGN="default")
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            self.assertEqual(sorted(os.path.basename(c["argv"][1]) for c in calls if c["argv"][0] == "capture"),
                             ["mistral-fused-prefill.json", "mistral-unfused-prefill.json",
                              "qwen3-fused-prefill.json", "qwen3-unfused-prefill.json"])
            out = os.path.join(d, "out")
            with open(os.path.join(out, "whatif-fused", "summary.txt")) as f:
                summary = f.read()
            self.assertEqual(summary.count("\nACCEPTED (design default)"), 2, summary)
            self.assertEqual(summary.count("design timeline: time"), 2, summary)
            self.assertIn("exit 0 (mistral qwen3 on GPUs 0 1)", summary)
            for fam, g in [("mistral", 0), ("qwen3", 1)]:
                with open(os.path.join(out, f"gpu{g}-{fam}", "whatif-fused", fam, "compare.json")) as f:
                    self.assertEqual(sorted(json.load(f)["designs"]), ["default", "timeline"])
            self.assertTrue(os.path.getsize(os.path.join(out, "whatif-fused.tar.xz.part00")) > 0)

    def test_nvrtc(self):
        for env, whatifs in [(dict(PIN_NVRTC="1"), 1), (dict(FAKE_NO_NVRTC="1"), 2)]:
            with tempfile.TemporaryDirectory() as d:
                p, calls = self.run_script(d, FAMILIES="llama", **env)
                self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
                wi = [c for c in calls if c["argv"][0] == "whatif"]
                self.assertEqual(len(wi), whatifs, env)
                self.assertEqual(wi[-1]["nvrtc"], "/x/libnvrtc.so.13")  # the fused program's compiler
                self.assertEqual(wi[-1]["ldpath"].split(":")[0], "/x")

    def test_not_accepted(self):
        with tempfile.TemporaryDirectory() as d:
            p, calls = self.run_script(d, FAKE_OFF="1.2", FAMILIES="qwen2", KREPLAY_NVRTC_LIB="/pinned.so")
            self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
            self.assertEqual(len(calls), 3)
            self.assertEqual(calls[-1]["nvrtc"], "/pinned.so")
            self.assertIn("NOT ACCEPTED", p.stdout)


try:
    import torch as _torch
except ImportError:
    _torch = None


def chain_forward(self, hidden_states):
    """LlamaRMSNorm.forward, op for op (reference.py)."""
    input_dtype = hidden_states.dtype
    h = hidden_states.to(_torch.float32)
    variance = h.pow(2).mean(-1, keepdim=True)
    h = h * _torch.rsqrt(variance + self.variance_epsilon)
    return self.weight * h.to(input_dtype)


def kernel_on_host(x, w, eps):
    """rmsnorm_fused.cu's arithmetic in PyTorch: the mean of squares in
    f32, x * rsqrt rounded to x's dtype, times w in f32, rounded."""
    xf = x.float()
    r = _torch.rsqrt(xf.pow(2).sum(-1, keepdim=True) * (1.0 / x.shape[-1]) + eps)
    return (w.float() * (xf * r).to(x.dtype).float()).to(x.dtype)


@unittest.skipIf(_torch is None, "no torch here")
class WithTorch(unittest.TestCase):
    """fused_model.py's replacement and first-call check, on the CPU, with
    the kernel's arithmetic in PyTorch in place of the custom op."""

    def setUp(self):
        fused_model.torch = _torch
        nn = _torch.nn

        class LlamaRMSNorm(nn.Module):
            def __init__(self, n, eps):
                super().__init__()
                self.weight = nn.Parameter(_torch.rand(n) * 2 - 1)
                self.variance_epsilon = eps

            forward = chain_forward

        class GemmaRMSNorm(LlamaRMSNorm):
            pass

        class Model(nn.Module):
            def __init__(self, other=False):
                super().__init__()
                self.layers = nn.ModuleList([LlamaRMSNorm(64, 1e-5) for _ in range(3)])
                self.norm = (GemmaRMSNorm if other else LlamaRMSNorm)(64, 1e-5)

            def forward(self, x):
                for n in self.layers:
                    x = n(x) * 1.5
                return self.norm(x)

        self.Model = Model

    def test_replace_and_check(self):
        _torch.manual_seed(0)
        for dtype in (_torch.bfloat16, _torch.float32):
            m = self.Model().to(dtype)
            x = (_torch.rand(2, 5, 64) * 4 - 2).to(dtype)
            with _torch.no_grad():
                ref = m(x)
            norms, other = fused_model.norms_of(m)
            self.assertEqual(([n for n, _ in norms], other), (["layers.0", "layers.1", "layers.2", "norm"], []))
            calls = []

            def op(h, w, eps):
                calls.append(eps)
                return kernel_on_host(h, w, eps)

            checks = {}
            settle = fused_model.replace(norms, op, checks)
            with _torch.no_grad():
                y = m(x)
            self.assertEqual(sorted(checks), ["layers.0", "layers.1", "layers.2", "norm"])
            for name, c in checks.items():
                self.assertTrue(c["ok"], (name, c))
                self.assertLess(c["rel_err"], 1e-2)
                self.assertEqual(c["nan_mismatches"], 0)
            self.assertLess(float((y.float() - ref.float()).abs().max()), 0.05 * float(ref.float().abs().max()))
            self.assertEqual(calls, [1e-5] * 4)
            settle()
            with _torch.no_grad():
                m(x)
            self.assertEqual(len(calls), 8)  # the op alone now, the chain no more
            self.assertEqual(len(checks), 4)

    def test_wrong_kernel_fails(self):
        m = self.Model().to(_torch.bfloat16)
        norms, _ = fused_model.norms_of(m)
        checks = {}
        fused_model.replace(norms, lambda h, w, eps: kernel_on_host(h, w + 1, eps), checks)  # Gemma's (1 + w)
        with _torch.no_grad():
            m((_torch.rand(2, 5, 64) * 4 - 2).to(_torch.bfloat16))
        self.assertTrue(checks and not any(c["ok"] for c in checks.values()))
        self.assertEqual(fused_model.summary(checks)["failed"], 4)

    def test_other_norm_classes(self):
        norms, other = fused_model.norms_of(self.Model(other=True))
        self.assertEqual((len(norms), other), (3, ["GemmaRMSNorm"]))

    def test_op_body(self):
        from unittest import mock

        class FakeKernel:
            def __init__(self):
                self.calls = []

            def launch(self, *a):
                self.calls.append(a)

        k = FakeKernel()
        fused_model._kernels[(None, _torch.bfloat16)] = k
        try:
            stream = mock.Mock(cuda_stream=1234)
            with mock.patch.object(_torch.cuda, "current_stream", return_value=stream) as cs:
                x = _torch.rand(2, 64, 5, dtype=_torch.bfloat16).transpose(1, 2)  # [2, 5, 64], not contiguous
                w = _torch.rand(64, dtype=_torch.bfloat16)
                y = fused_model.rmsnorm_fused(x, w, 1e-5)
                self.assertEqual((tuple(y.shape), y.dtype, y.is_contiguous()), ((2, 5, 64), _torch.bfloat16, True))
                (xp, wp, yp, rows, cols, eps, st), = k.calls
                self.assertEqual((rows, cols, eps, st, yp), (10, 64, 1e-5, 1234, y.data_ptr()))
                self.assertNotEqual(xp, x.data_ptr())  # a contiguous copy was launched on
                self.assertEqual(wp, w.data_ptr())
                cs.assert_called_with(x.device)
                for bad in (w[:32], w.float(), w.reshape(8, 8)):
                    with self.assertRaises(ValueError):
                        fused_model.rmsnorm_fused(x, bad, 1e-5)
                with self.assertRaises(RuntimeError):
                    fused_model.rmsnorm_fused(x.half(), w.half(), 1e-5)  # no f16 kernel loaded
                self.assertEqual(len(k.calls), 1)
        finally:
            fused_model._kernels.clear()

    def test_compare_nans(self):
        ref = _torch.tensor([1.0, float("nan"), 2.0, float("inf")], dtype=_torch.bfloat16)
        c = fused_model.compare(ref.clone(), ref)
        self.assertTrue(c["ok"])
        self.assertEqual((c["max_abs_err"], c["differing"], c["scale"]), (0.0, 0, float("inf")))
        y = ref.clone()
        y[1] = 3.0
        c = fused_model.compare(y, ref)
        self.assertFalse(c["ok"])
        self.assertEqual(c["nan_mismatches"], 1)
        ref2 = _torch.tensor([1.0, 2.0, 4.0], dtype=_torch.float16)
        c = fused_model.compare(_torch.tensor([1.0, 2.0, 4.00390625], dtype=_torch.float16), ref2)
        self.assertTrue(c["ok"])
        self.assertEqual((c["differing"], c["max_abs_err"]), (1, 0.00390625))
        with self.assertRaises(RuntimeError):
            fused_model.compare(ref2.float(), ref2)


if __name__ == "__main__":
    unittest.main()
