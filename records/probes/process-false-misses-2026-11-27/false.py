import json, re, sys
log, misses, own = sys.argv[1:4]
due = {}
for line in open(log):
    _, d, _, end = line.rsplit("\t", 3)
    due[int(d)] = max(due.get(int(d), 0), int(end))
period = deadline = 50_000_000
t0 = min(due)
print("steps", json.load(open(own))["steps"], "last step at", (max(due) - t0) / 1e6, "ms")
for line in open(misses):
    dl = int(re.search(r" deadline (\d+) ", line).group(1))
    step = min(due, key=lambda d: abs(d + deadline - dl))
    bad = abs(step + deadline - dl) > period // 2 or due[step] <= step + deadline
    print("FALSE" if bad else "late ", f"{(dl - t0) / 1e6:8.1f} ms", line.strip().split("miss: ")[1])
