"""How many of a capture's calls ran at the pointers of the recorded launch
their key names, from a bundle's kernels/index.json (calls and call_ptrs, the
pointers of every call of the inference in order). Run on
call4/logs/index.json of raw-s30.tar.xz: python3 callptrs.py index.json >
callptrs.txt."""
import bisect
import collections
import json
import sys

x = json.load(open(sys.argv[1]))
launches = {l["key"]: l for l in x["launches"]}
same = other = 0
by = collections.defaultdict(lambda: [0, 0, set()])
for key, ptrs in zip(x["calls"], x["call_ptrs"]):
    l = launches.get(key)
    if not l or not l.get("ptrs"):
        continue
    rec = [p["value"] for p in l["ptrs"]]
    row = by[l["name"]]
    if list(ptrs) == rec:
        same += 1
        row[0] += 1
    else:
        other += 1
        row[1] += 1
    row[2].add(tuple(ptrs))
print(f"{len(x['calls'])} calls, {len(launches)} unique launches (keys); of the {same + other} calls with pointers, "
      f"{same} ran at their key's recorded pointers and {other} ({100 * other / (same + other):.1f}%) at others")
print("kernels with the most calls at other pointers: calls at the recorded pointers, at others, distinct pointer sets")
for name, (s, o, u) in sorted(by.items(), key=lambda kv: -kv[1][1])[:10]:
    print(f"{s:6d} {o:6d} {len(u):6d}  {name[:110]}")
allocs = sorted({(p["base"], p["range"]) for l in launches.values() for p in l.get("ptrs") or []})
bases = [b for b, _ in allocs]
inside = outside = 0
for ptrs in x["call_ptrs"]:
    for v in ptrs:
        i = bisect.bisect_right(bases, v) - 1
        if i >= 0 and allocs[i][0] <= v < allocs[i][0] + allocs[i][1]:
            inside += 1
        else:
            outside += 1
print(f"{len(allocs)} allocations named by the unique launches' pointers ({sum(r for _, r in allocs) / 1e9:.2f} GB); "
      f"of the calls' {inside + outside} pointer values, {outside} ({100 * outside / (inside + outside):.1f}%) lie in none of them")
