"""Compares the kernel medians of a prediction with -families against the
same bundle's without. Run in speed/logs after unpacking:
families-vs-exact.txt from raw3.tar.xz (python3 families-vs-exact.py >
families-vs-exact.txt: times.progress.jsonl against families.progress.jsonl);
families-vs-exact-energy.txt from raw4.tar.xz (python3 families-vs-exact.py
energy.progress.jsonl energy-families.progress.jsonl "call 4 ...");
families-vs-exact-5.txt from raw5.tar.xz (python3 families-vs-exact.py
energy.progress.jsonl energy-families.progress.jsonl "..." energy-one.progress.jsonl:
a fourth file, a second exact run, gives the same signatures' run-to-run
ratios beside the families' ones).
"""
import json
import statistics as st
import sys


def load(p):
    d = {}
    for line in open(p):
        if line.strip():
            e = json.loads(line)["entry"]
            d[e["id"]] = e
    return d


def kernel(e):
    r = e.get("result") or {}
    return r.get("kernel_median_ns") or r.get("median_ns"), r.get("kernel_lo_ns"), r.get("kernel_hi_ns")


def q(v, p):
    return v[int(p * (len(v) - 1))]


exact = sys.argv[1] if len(sys.argv) > 1 else "times.progress.jsonl"
fams = sys.argv[2] if len(sys.argv) > 2 else "families.progress.jsonl"
title = sys.argv[3] if len(sys.argv) > 3 else "call 1 of 2026-11-29): the times-only prediction"
a, b = load(exact), load(fams)
again = load(sys.argv[4]) if len(sys.argv) > 4 else None
interp, meas = [], []
for i, eb in b.items():
    ea = a.get(i)
    if not ea or not ea.get("result") or not eb.get("result"):
        continue
    ma, lo, hi = kernel(ea)
    mb, _, _ = kernel(eb)
    if not ma or not mb:
        continue
    (interp if eb.get("interpolated") else meas).append(
        (mb / ma, ea["count"] * ma, i, eb["label"][:60], lo <= mb <= hi, eb.get("interpolated", "")[:90]))
print(f"pythia14b-sdpa-decode-b8-t32 on one H200 ({title} with -families against the one without (exact), kernel medians")
for name, xs in (("interpolated", interp), ("measured in both runs", meas)):
    if not xs:
        print(f"{name}: none")
        continue
    rs = sorted(x[0] for x in xs)
    print(f"{name}: {len(xs)} signatures, ratio families/exact min {rs[0]:.3f} p5 {q(rs, .05):.3f} median {st.median(rs):.3f} "
          f"p95 {q(rs, .95):.3f} max {rs[-1]:.3f}; within ±5%: {sum(abs(r - 1) <= .05 for r in rs)}; "
          f"inside the exact run's own 95% interval: {sum(x[4] for x in xs)}")
ta = sum(x[1] for x in interp)
tb = sum(x[1] * x[0] for x in interp)
print(f"interpolated members' total (count x kernel median): exact {ta / 1e6:.4f} ms, families {tb / 1e6:.4f} ms ({100 * (tb / ta - 1):+.2f}%)")
ma_ = sum(x[1] for x in meas)
mb_ = sum(x[1] * x[0] for x in meas)
print(f"measured-in-both signatures' total: exact {ma_ / 1e6:.4f} ms, families {mb_ / 1e6:.4f} ms ({(mb_ - ma_) / 1e6:+.4f} ms)")
top = max(meas, key=lambda x: abs(x[1] * (x[0] - 1)))
print(f"  the largest of them: {top[2]} {top[3]}: x{top[0]:.3f}, {top[1] * (top[0] - 1) / 1e6:+.4f} ms")
print("largest misses among interpolated:")
for x in sorted(interp, key=lambda x: -abs(x[0] - 1))[:6]:
    print(f"  x{x[0]:.3f} {x[2]} {x[3]} ({x[5]})")
if again:
    print(f"the same signatures in a second exact run ({sys.argv[4]}), second/first, kernel medians:")
    for name, xs in (("interpolated members", interp), ("measured in both runs", meas)):
        rs = []
        for x in xs:
            e2 = again.get(x[2])
            m2 = kernel(e2)[0] if e2 and e2.get("result") else None
            if m2:
                rs.append(m2 / kernel(a[x[2]])[0])
        rs.sort()
        if rs:
            print(f"  {name}: {len(rs)}, min {rs[0]:.3f} p5 {q(rs, .05):.3f} median {st.median(rs):.3f} "
                  f"p95 {q(rs, .95):.3f} max {rs[-1]:.3f}; within ±5%: {sum(abs(r - 1) <= .05 for r in rs)}")
