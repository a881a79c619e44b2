#!/usr/bin/env bash
# The deadline hint socket is open to every local user and served by
# scx_tick's main loop. A hostile local user tries to stall it for 6 s: 800
# connections that send nothing (opened first: the runner's comes after
# them), 4 clients that trickle bytes (one each 10 ms, never a newline),
# 4 that send 1 MiB, and malformed requests
# (not a number, not UTF-8, an unknown verb). Meanwhile a runner
# registers for hints and gets them (tickload --hint fails otherwise), the
# statistics keep their 1 s interval (no gap of more than 2.5 s between
# JSON lines), and SIGINT still stops scx_tick within 5 s, cleanly. (The
# build that read a request line with a 200 ms timeout per read served the
# tricklers for as long as they trickled; the one that read each accepted
# connection in turn for up to 20 ms kept a registration behind 150 idle
# ones past the client's 5 s once in the suite, 2026-11-30, and behind 800
# in both of 2 probe runs, 5.1-5.3 s; 0.3 s since.)
# guest: shared
source "$(dirname "$0")/../lib.sh"
CG=$(make_cgroup hint)
start_scx --tick-cgroup hint --stats 1 --stats-json "$WORK/stats.jsonl"
python3 - "$WORK/idle-held" >"$WORK/attack.out" 2>&1 <<'PY' &
import resource, socket, sys, threading, time
resource.setrlimit(resource.RLIMIT_NOFILE, (4096, 4096))
P = "/run/scx_tick/hints.sock"
end = time.time() + 6
def conn():
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(0.5)
    try:
        s.connect(P)
        return s
    except OSError:
        return None
idle = [c for c in (conn() for _ in range(800)) if c]
open(sys.argv[1], "w").write(f"{len(idle)}\n")
def trickle():
    while time.time() < end:
        c = conn()
        try:
            while c and time.time() < end:
                c.send(b"R")
                time.sleep(0.01)
        except OSError:
            pass
def flood():
    while time.time() < end:
        c = conn()
        try:
            if c:
                c.sendall(b"x" * (1 << 20))
        except OSError:
            pass
def malformed():
    while time.time() < end:
        for msg in (b"REGISTER abc\n", b"\xff\xfe\xfd\n", b"HELLO\n", b"REGISTER 1\n"):
            c = conn()
            try:
                if c:
                    c.sendall(msg)
                    c.recv(256)
            except OSError:
                pass
ts = [threading.Thread(target=f) for f in [trickle] * 4 + [flood] * 4 + [malformed]]
for t in ts:
    t.start()
for t in ts:
    t.join()
print(f"idle connections held: {len(idle)}")
PY
attack=$!
# the runner connects behind every idle connection
for _ in $(seq 100); do [[ -s "$WORK/idle-held" ]] && break; sleep 0.1; done
[[ -s "$WORK/idle-held" ]] || fail "the attack held no idle connections within 10 s: $(cat "$WORK/attack.out")"
"$TICKLOAD" -n 2 --work-ms 5 --period-ms 50 --duration-s 3 --hint --cgroup "$CG" --json >"$WORK/hinted.json" 2>"$WORK/hinted.err" \
  || fail "a runner could not register for hints during the attack: $(cat "$WORK/hinted.err")"
wait $attack
sed 's/^/# attack: /' "$WORK/attack.out"
t0=$(date +%s%N)
stop_scx INT
t1=$(date +%s%N)
[[ $SCX_RC -eq 0 ]] || fail "exit status $SCX_RC"
note "SIGINT to exit: $(((t1 - t0) / 1000000)) ms"
(((t1 - t0) < 5000000000)) || fail "stopping took $(((t1 - t0) / 1000000)) ms"
grep "scx_tick summary: hint" "$WORK/scx.out" | sed 's/^/# /'
(($(group_stat hint hints_used) > 0)) || fail "the hints were not used"
python3 - "$WORK/stats.jsonl" <<'PY' || fail "the statistics stalled during the attack"
import json, sys
t = [json.loads(l)["uptime_s"] for l in open(sys.argv[1]) if l.strip()]
gap = max(b - a for a, b in zip(t, t[1:]))
print(f"# {len(t)} statistics lines, the longest gap {gap:.2f} s")
sys.exit(0 if len(t) >= 6 and gap <= 2.5 else 1)
PY
check_dmesg_clean
