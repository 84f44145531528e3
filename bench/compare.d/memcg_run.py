# SPDX-License-Identifier: LGPL-2.1-or-later
"""Setting (a) of bench/compare: every responder against the same loads inside
a 256 MiB memory cgroup on this host, as a container would see them.

Safety (the host is shared): the peers are not installed here; their Debian
packages are fetched with apt-get download and unpacked into
bench/out/compare/peers/. Each trial runs in a PID namespace of its own
(unshare --pid --fork --mount-proc): the responder, the decoy and the load
are the only processes it can see or signal, and they all die with the
namespace. Pressure exists only inside the v1 memcg made here (256 MiB);
nothing is dropped or changed system-wide. Cgroups and files are removed
after each trial.

Layout per trial: v1 memory:/vmpbench-<pid> (limit 256 MiB) holds the decoy
and the load; in the cgroup2 hierarchy they are system.slice/vmpbench-decoy.service
and system.slice/vmpbench-hog.service, so vmpressured's policy can name the
load's unit (it finds a unit's processes below system.slice when systemd is
not PID 1). Onset of pressure: the memcg's failcnt starts to rise (the limit
is hit). Stall: the load cgroup's memory.pressure totals."""

import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time

LIMIT_MIB = 256
DECOY_MIB = 48
FILE_MIB = 512
IDLE_S = 20
LOADS = {   # argv after the binary, deadline seconds (anon never ends by itself)
    "fast-hog": (["anon", "1024", "8", "20"], 30),
    "slow-leak": (["anon", "1024", "4", "250"], 40),
    "stream": (["stream", "@FILE@", "15"], 15),
    "thrash": (["hotcold", "@FILE@", "180", "20"], 20),
}
PATTERNS = {     # first notification, action: on the responder's own output
    "vmpressured": (r"^level .*level=(low|medium|oom)", r"^killed "),
    "vmpressured-unit": (r"^level scope=vmpbench-hog.service level=(low|medium|oom)", r"^killed "),
    "earlyoom": (r"low memory!|at or below", r"sending SIG|escalating to SIGKILL"),
    "nohang": (r"(?i)threshold|warning|below|exceed|TRIGGER|implement|send(ing)? SIG",
               r"(?i)send(ing)? SIG|SIG(TERM|KILL) to|implement|killed|terminat"),
    "low-memory-monitor": (r"(?i)low.?memory|pressure callback|would trigger", r"(?i)sysrq|Triggering"),
}
RANK = {"none": 0, "low": 1, "medium": 2, "oom": 3}
NOT_RUN = {
    "systemd-oomd": "needs systemd as PID 1 (it asks the manager for the ManagedOOM* units it watches) on the "
                    "unified cgroup hierarchy; this host's PID 1 is not systemd and its layout is hybrid",
}
NOT_RUN["systemd-oomd-fair"] = NOT_RUN["systemd-oomd"]


def log(*a):
    print(*a, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- host side

def fetch_peers(out, log):
    peers = os.path.join(out, "peers")
    debs = os.path.join(out, "debs")
    os.makedirs(debs, exist_ok=True)
    versions = {}
    for name in ("earlyoom", "nohang", "low-memory-monitor"):
        if not any(f.startswith(name + "_") for f in os.listdir(debs)):
            subprocess.run(["apt-get", "download", name], cwd=debs, check=True, capture_output=True)
        deb = sorted(f for f in os.listdir(debs) if f.startswith(name + "_"))[-1]
        versions[name] = deb.split("_")[1]
        d = os.path.join(peers, name)
        if not os.path.isdir(d):
            subprocess.run(["dpkg-deb", "-x", os.path.join(debs, deb), d], check=True)
    return peers, versions


class Cgroups:
    """unit_memcg=False: decoy and load share one 256 MiB memcg (a container).
    unit_memcg=True (vmpressured with Scope=unit): the load's unit has the
    memcg with the limit, less the decoy's share, as systemd lays out a unit
    with MemoryMax= (memory:/system.slice/<unit>); the decoy holds its memory
    in a memcg of its own."""

    def __init__(self, tag, unit_memcg=False):
        self.made = []
        self.mem = self._mk("/sys/fs/cgroup/memory/vmpbench-" + tag)
        self.decoy_mem = self.mem
        with open(self.mem + "/memory.limit_in_bytes", "w") as f:
            f.write(str(LIMIT_MIB << 20))
        if unit_memcg:
            sl = "/sys/fs/cgroup/memory/system.slice"
            if not os.path.isdir(sl):
                self._mk(sl)
            self.mem = self._mk(sl + "/vmpbench-hog.service")
            with open(self.mem + "/memory.limit_in_bytes", "w") as f:
                f.write(str((LIMIT_MIB - DECOY_MIB) << 20))
        uni = "/sys/fs/cgroup/unified"
        sl = uni + "/system.slice"
        if not os.path.isdir(sl):
            self._mk(sl)
        self.hog = self._mk(sl + "/vmpbench-hog.service")
        self.decoy = self._mk(sl + "/vmpbench-decoy.service")

    def _mk(self, d):
        os.mkdir(d)
        self.made.append(d)
        return d

    def remove(self):
        for d in reversed(self.made):
            for _ in range(100):
                try:
                    os.rmdir(d)
                    break
                except OSError:
                    time.sleep(0.05)


def run_all(build, out, responders, loads, log):
    if not os.path.isdir("/sys/fs/cgroup/memory") or not os.path.isdir("/sys/fs/cgroup/unified"):
        return [{"responder": r, "error": "no v1 memory + cgroup2 hierarchies here"} for r in responders]
    peers, versions = fetch_peers(out, log)
    work = os.path.join(out, "memcg")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    for name in ("vmp-hog", "vmp-decoy"):          # distinct comm for the victim check
        shutil.copy(os.path.join(build, "tests", "vmp-load"), os.path.join(work, name))
    pol = os.path.join(work, "policies")
    os.makedirs(pol)
    with open(os.path.join(pol, "vmpbench-hog.service.policy"), "w") as f:
        f.write("[OOM]\nKill=yes\n")
    pol_unit = os.path.join(work, "policies-unit")
    os.makedirs(pol_unit)
    with open(os.path.join(pol_unit, "vmpbench-hog.service.policy"), "w") as f:
        # Guard=: the daemon kills the unit in the last 32 MiB of its limit, before
        # the kernel's memcg OOM killer (a usage threshold on this v1 host).
        f.write("[Policy]\nScope=unit\n[OOM]\nKill=yes\nGuard=32M\n")
    bigfile = f"/var/tmp/vmpbench-file-{os.getpid()}"     # on disk, not tmpfs
    subprocess.run([os.path.join(work, "vmp-hog"), "mkfile", bigfile, str(FILE_MIB)], check=True)
    results = []
    try:
        for r in responders:
            if r in NOT_RUN:
                results.append({"responder": r, "not_run": NOT_RUN[r]})
                continue
            cg = Cgroups(f"{os.getpid()}-{r}", unit_memcg=r == "vmpressured-unit")
            cfg = {"responder": r, "build": build, "peers": peers, "work": work,
                   "policies": pol_unit if r == "vmpressured-unit" else pol, "file": bigfile, "mem": cg.mem,
                   "decoy_mem": cg.decoy_mem, "hog_cg": cg.hog, "decoy_cg": cg.decoy, "loads": loads,
                   "version": versions.get(r, "tree")}
            log(f"memcg: {r}")
            try:
                p = subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", sys.executable,
                                    os.path.abspath(__file__), "trial", json.dumps(cfg)],
                                   capture_output=True, text=True, timeout=600)
                lines = [l for l in p.stdout.splitlines() if l.startswith("{")]
                res = json.loads(lines[-1]) if lines else {"responder": r, "error": p.stderr[-1500:]}
            except subprocess.TimeoutExpired:
                res = {"responder": r, "error": "trial timed out"}
            finally:
                cg.remove()
            results.append(res)
    finally:
        os.unlink(bigfile)
    return results


# ------------------------------------------------- inside the PID namespace

def read_kv(path, key):
    for line in open(path):
        if line.startswith(key + " "):
            return int(line.split()[1])
    return 0


def psi_totals(cg):
    r = {}
    for line in open(cg + "/memory.pressure"):
        kind, *f = line.split()
        r[kind] = int(dict(x.split("=") for x in f)["total"])
    return r


def proc_status(pid):
    """VmRSS KiB and {tid: voluntary + nonvoluntary context switches}."""
    rss, sw = None, {}
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
        for t in os.listdir(f"/proc/{pid}/task"):
            n = 0
            for line in open(f"/proc/{pid}/task/{t}/status"):
                if "ctxt_switches" in line:
                    n += int(line.split()[1])
            sw[t] = n
    except OSError:
        return None, None
    return rss, sw


class Responder:
    def __init__(self, cfg):
        self.lines = []
        self.lock = threading.Lock()
        self.procs = []
        r, peers = cfg["responder"], cfg["peers"]
        env = dict(os.environ)
        if r == "kernel":
            return
        if r in ("vmpressured", "vmpressured-unit"):
            argv = [os.path.join(cfg["build"], "vmpressured"), "--policy-dir=" + cfg["policies"], "-p"]
        elif r == "earlyoom":
            argv = [peers + "/earlyoom/usr/bin/earlyoom", "-r", "3600"]     # Debian's EARLYOOM_ARGS
        elif r == "nohang":
            argv = ["/usr/bin/python3", peers + "/nohang/usr/sbin/nohang", "--monitor", "--config",
                    peers + "/nohang/etc/nohang/nohang.conf"]
        elif r == "low-memory-monitor":
            # A private system bus (the host has none) enforcing the package's own bus policy.
            busdir = os.path.join(cfg["work"], "bus-" + str(os.getpid()))
            os.makedirs(busdir, exist_ok=True)
            with open(busdir + "/bus.conf", "w") as f:
                f.write(f"""<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig><include>/usr/share/dbus-1/system.conf</include>
<includedir>{peers}/low-memory-monitor/usr/share/dbus-1/system.d</includedir>
<listen>unix:path={busdir}/bus</listen><pidfile>{busdir}/pid</pidfile></busconfig>
""")
            bus = subprocess.Popen(["dbus-daemon", "--config-file=" + busdir + "/bus.conf", "--nofork",
                                    "--nopidfile", "--address=unix:path=" + busdir + "/bus"],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            self.procs.append(bus)
            for _ in range(100):
                if os.path.exists(busdir + "/bus"):
                    break
                time.sleep(0.02)
            env["DBUS_SYSTEM_BUS_ADDRESS"] = "unix:path=" + busdir + "/bus"
            env["G_MESSAGES_DEBUG"] = "all"
            argv = [peers + "/low-memory-monitor/usr/libexec/low-memory-monitor"]
            mon = subprocess.Popen(["busctl", "--json=short", "monitor",
                                    "--match=type='signal',interface='org.freedesktop.LowMemoryMonitor'"],
                                   env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            self.procs.append(mon)
            threading.Thread(target=self._read, args=(mon.stdout, "bus"), daemon=True).start()
        self.main = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.procs.append(self.main)
        threading.Thread(target=self._read, args=(self.main.stdout, "out"), daemon=True).start()

    def _read(self, f, kind):
        for line in f:
            with self.lock:
                self.lines.append((time.monotonic(), kind, line.rstrip()))

    def since(self, t0):
        with self.lock:
            return [x for x in self.lines if x[0] >= t0]

    def stop(self):
        for p in self.procs:
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(5)
                except subprocess.TimeoutExpired:
                    p.kill()


def one_load(cfg, resp, name):
    argv, deadline = LOADS[name]
    argv = [a.replace("@FILE@", cfg["file"]) for a in argv]
    mem = cfg["mem"]
    with open(mem + "/memory.force_empty", "w") as f:      # empty memcg: drop what the last load cached
        f.write("0")
    decoy = subprocess.Popen([cfg["work"] + "/vmp-decoy", "--cgroup=" + cfg["decoy_mem"], "--cgroup=" + cfg["decoy_cg"], "anon",
                              str(DECOY_MIB)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    decoy.stdout.readline()
    for _ in range(200):
        rss, _ = proc_status(decoy.pid)
        if rss and rss >= (DECOY_MIB - 1) * 1024:
            break
        time.sleep(0.02)
    time.sleep(0.5)
    fail0 = int(open(mem + "/memory.failcnt").read())
    oom0 = read_kv(mem + "/memory.oom_control", "oom_kill")
    p0 = psi_totals(cfg["hog_cg"])
    t0 = time.monotonic()
    hog = subprocess.Popen([cfg["work"] + "/vmp-hog", "--cgroup=" + mem, "--cgroup=" + cfg["hog_cg"], *argv],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    onset = oom_t = hog_end = None
    while time.monotonic() < t0 + deadline + 5:
        now = time.monotonic()
        if onset is None and int(open(mem + "/memory.failcnt").read()) > fail0:
            onset = now
        if oom_t is None and read_kv(mem + "/memory.oom_control", "oom_kill") > oom0:
            oom_t = now
        if hog.poll() is not None:
            hog_end = now
            break
        time.sleep(0.01)
    p1 = psi_totals(cfg["hog_cg"])
    t_end = time.monotonic()
    time.sleep(1)
    decoy_alive = decoy.poll() is None
    hog_status = hog.poll()
    for p in (hog, decoy):
        if p.poll() is None:
            p.kill()
        p.wait()
    oom_kills = read_kv(mem + "/memory.oom_control", "oom_kill") - oom0
    notif_re, act_re = (re.compile(p) for p in PATTERNS.get(cfg["responder"], ("$^", "$^")))
    notif = act = None
    lines = []
    for t, kind, line in resp.since(t0 - 0.2):
        lines.append(f"{t - t0:8.3f} {kind}: {line[:200]}")
        m = re.search(r" level=(\w+) previous=(\w+) ", line)
        if m and RANK.get(m.group(1), 0) <= RANK.get(m.group(2), 0):
            continue                            # a fall (oom → low) or a repeat is no new notification
        if notif is None and (notif_re.search(line) or (kind == "bus" and "LowMemoryWarning" in line)):
            notif = t
        if act is None and kind == "out" and act_re.search(line):
            act = t
    if act is not None and (notif is None or notif > act):
        notif = act
    base = onset or t0
    rel = lambda t: None if t is None else round(t - base, 3)
    return {
        "load": name, "argv": argv, "deadline_s": deadline,
        "onset_after_start_s": None if onset is None else round(onset - t0, 3),
        "notify_s": rel(notif), "action_s": rel(act), "kernel_oom_s": rel(oom_t), "kernel_oom_kills": oom_kills,
        "kernel_first": oom_t is not None and (act is None or oom_t < act),
        "hog_gone_s": rel(hog_end), "hog_killed": hog_end is not None and hog_end - t0 < deadline - 0.5,
        "hog_status": hog_status, "decoy_survived": decoy_alive,
        "kernel_victims": ["vmp-hog"] * (oom_kills if hog_status == -9 and oom_t else 0),
        "psi_some_ms": round((p1["some"] - p0["some"]) / 1000), "psi_full_ms": round((p1["full"] - p0["full"]) / 1000),
        "duration_s": round(t_end - t0, 3), "responder_lines": lines[:60],
    }


def trial(cfg):
    res = {"responder": cfg["responder"], "version": cfg["version"], "setting": "memcg", "limit_mib": LIMIT_MIB,
           "decoy_mib": DECOY_MIB}
    resp = Responder(cfg)
    try:
        time.sleep(3)
        if cfg["responder"] != "kernel":
            pid = resp.main.pid
            res["alive_after_start"] = resp.main.poll() is None
            rss0, sw0 = proc_status(pid)
            t_idle = time.monotonic()
            time.sleep(IDLE_S)
            rss1, sw1 = proc_status(pid)
            if sw1 is not None and sw0 is not None:
                # Threads present at both ends only (as in the guest): a thread that exits in
                # between would take its whole count out of a sum over all threads.
                sw = sum(sw1[t] - sw0[t] for t in sw1 if t in sw0)
                # What the responder announced while nothing of ours ran: pressure from
                # elsewhere on the host (wake-ups that are not its idle cost).
                notif_re = re.compile(PATTERNS.get(cfg["responder"], ("$^", "$^"))[0])
                seen = [l for _, kind, l in resp.since(t_idle) if kind == "out" and notif_re.search(l)]
                res["idle"] = {"rss_kib": rss1, "wakeups_per_min": round(sw * 60 / IDLE_S, 1),
                               "idle_s": IDLE_S, "threads": len(sw1), "notifications": len(seen),
                               "notification_lines": seen[:5]}
            res["startup_lines"] = [l for _, _, l in resp.lines[:15]]
        res["loads"] = [one_load(cfg, resp, n) for n in cfg["loads"] if n in LOADS]
        if cfg["responder"] != "kernel":
            res["alive_at_end"] = resp.main.poll() is None
    finally:
        resp.stop()
    print(json.dumps(res), flush=True)


if __name__ == "__main__" and sys.argv[1:2] == ["trial"]:
    trial(json.loads(sys.argv[2]))
