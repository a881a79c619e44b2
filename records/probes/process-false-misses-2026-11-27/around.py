# The process's wake-ups (tracereplay --wakes) and the server's steps from
# 150 ms before scx_tick's first miss after 4.5 s to 120 ms after it.
import re, sys
misses, wakes, log = sys.argv[1:4]
first = None
steps = []
for line in open(log):
    name, d, b, e = line.rstrip("\n").rsplit("\t", 3)
    steps.append((int(d), int(b), int(e), name))
t0 = min(s[0] for s in steps)
for line in open(misses):
    dl = int(re.search(r" deadline (\d+) ", line).group(1))
    if dl - t0 > 4_500_000_000:
        first = dl
        break
if first is None:
    sys.exit(0)
lo, hi = first - 150_000_000, first + 120_000_000
rel = lambda t: f"{(t - t0) / 1e6:9.2f}" if t else "        0"
print(f"== around the first miss after 4.5 s, deadline {rel(first)} ms (times in ms from the first step)")
for d, b, e, name in sorted(steps):
    if lo <= b <= hi:
        print(f"step {name} due {rel(d)} began {rel(b)} ended {rel(e)}")
for line in open(wakes):
    f = line.split()
    if f[0] not in ("wake", "roll") or not lo <= int(f[2]) <= hi:
        continue
    times = [rel(int(x)) if i in (2, 3, 4, 5) else x for i, x in enumerate(f[:7])]
    rest = f[7:]
    if f[0] == "wake" and rest:
        # helper H fresh F quiet Q own G D W
        rest = rest[:4] + [rel(int(rest[5])), rel(int(rest[7])), rel(int(rest[8])), rest[9]]
    print(" ".join(times + rest))
for line in open(misses):
    dl = int(re.search(r" deadline (\d+) ", line).group(1))
    at = int(re.search(r" at (\d+) ", line).group(1))
    if lo <= dl <= hi:
        print(f"miss {line.split('miss: ')[1].split(' group')[0]} deadline {rel(dl)} at {rel(at)}")
