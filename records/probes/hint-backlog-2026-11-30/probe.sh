source /work/main/tests/lib.sh
CG=$(make_cgroup hint)
# the build before the change and the change, in turns
for b in /tmp/scx_tick_prehints /tmp/scx_tick_hints /tmp/scx_tick_prehints /tmp/scx_tick_hints; do
  rm -f "$WORK/ready"
  SCX=$b start_scx --tick-cgroup hint
  python3 - "$WORK/ready" >"$WORK/attack.out" 2>&1 <<'PY' &
import socket, sys, time, resource
resource.setrlimit(resource.RLIMIT_NOFILE, (4096, 4096))
P = "/run/scx_tick/hints.sock"
def conn():
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(0.5)
    try:
        s.connect(P); return s
    except OSError:
        return None
t0 = time.time()
idle = [c for c in (conn() for _ in range(800)) if c]
open(sys.argv[1], "w").write(f"{len(idle)} in {time.time()-t0:.2f} s\n")
time.sleep(12)
PY
  a=$!
  while [[ ! -e "$WORK/ready" ]]; do sleep 0.05; done
  s=$(date +%s%N)
  rc=0; "$TICKLOAD" -n 1 --work-ms 1 --period-ms 50 --duration-s 0.2 --hint --cgroup "$CG" >/dev/null 2>"$WORK/err" || rc=$?
  e=$(date +%s%N)
  echo "# $(basename $b): idle $(cat "$WORK/ready" | tr -d '\n'); registration run rc=$rc in $(((e - s) / 1000000)) ms $(head -c 150 "$WORK/err")"
  kill $a 2>/dev/null; wait $a 2>/dev/null || true
  stop_scx INT
done
