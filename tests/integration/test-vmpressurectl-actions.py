#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""What vmpressurectl shows of the daemon's own measurements, against the real
daemon on a private dbus-daemon enforcing dbus/:

  a) real pressure is not marked simulated: a page-cache stream in a watched
     128 MiB memcg makes its scope LOW; monitor --json has its Low with
     "simulated": false, status --json shows the scope not simulated and its
     simulated counts unchanged, metrics' vmpressured_simulated_level_events_total
     of the scope stays 0 while vmpressured_level_events_total grows, and the
     real announce latency histogram (simulated="0") counts more.
  b) recent actions: a fake unit (system.slice/<unit> in cgroup2 and memcg v1,
     as systemd lays it out) runs a recorder (handles SIGUSR1); its policy
     (Scope=unit, so the daemon watches the unit's own memcg, which real
     pressure elsewhere on the machine does not reach) says [Medium]
     Signal=SIGUSR1 SignalTarget=all and [OOM] Kill=yes. Simulate MEDIUM on
     the unit's scope: the recorder gets SIGUSR1, status lists "signal
     SIGUSR1 … ok … yes" for the unit, --json the same fields. Simulate OOM:
     the recorder is killed (SIGKILL), status lists "kill SIGKILL <pid> ok …
     yes", monitor prints the Killed signal.
  c) metrics parses strictly (promtext.py); the signal and kill histograms
     (simulated="1") count what was done, each with +Inf == _count.

Every process and cgroup is ours and removed at the end; system.slice is
removed only when this test made it. Refuses to run under systemd PID 1 (the
daemon would signal through KillUnit, and systemd knows nothing of this unit)."""

import json
import os
import re
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vmptest as vt    # noqa: E402
import vmpbus as vb     # noqa: E402
import vmpunit as vu    # noqa: E402
import promtext         # noqa: E402

CTL = os.environ.get("VMPRESSURECTL")
PREFIX = f"vmp-ctl-{os.getpid()}"
UNIT = f"{PREFIX}.service"


def ctl(*args, timeout=15):
    r = subprocess.run([CTL] + [str(a) for a in args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=timeout, stdin=subprocess.DEVNULL)
    vt.log(f"$ vmpressurectl {' '.join(map(str, args))} → {r.returncode}")
    vt.check(r.returncode == 0, f"vmpressurectl {' '.join(map(str, args))}: exit {r.returncode}; "
                                f"stderr {r.stderr[-800:]!r}")
    return r.stdout


def status_json():
    return json.loads(ctl("--json", "status"))


def metrics():
    text = ctl("metrics")
    try:
        return promtext.parse(text)
    except ValueError as e:
        vt.fail(f"metrics is not valid Prometheus text: {e}")


def histogram(fams, stage, simulated):
    for key, h in fams["vmpressured_latency_seconds"].histograms().items():
        if dict(key) == {"stage": stage, "simulated": "1" if simulated else "0"}:
            return h
    vt.fail(f"no latency histogram stage={stage} simulated={simulated}")


def check_histogram(h, what):
    counts = [c for _, c in h["buckets"]]
    increments = [b - a for a, b in zip([0] + counts, counts)]
    vt.check(all(i >= 0 for i in increments) and sum(increments) == h["count"] == counts[-1],
             f"{what}: buckets {h['buckets']} do not add up to count {h['count']}")


def test_real_load(d, mon, mc):
    vt.log("=== a) a real memcg load is not marked simulated")
    before = status_json()
    fams0 = metrics()
    sc0 = next(s for s in before["scopes"] if s["name"] == mc.name)
    ann0 = histogram(fams0, "announce", False)["count"]

    with vt.DataFile("ctl-low", 256) as data:
        load = vt.Load(mc, "stream", data.path).start()
        got = mon.wait_for(lambda m: m.get("signal") == "Low" and m["scope"] == mc.name, 15,
                           f"a Low of {mc.name} from the page-cache load")
        vt.check(got["simulated"] is False, f"real pressure marked simulated in monitor --json: {got}")
        s = status_json()
        load.stop()
    sc = next(x for x in s["scopes"] if x["name"] == mc.name)
    vt.check(sc["counts"]["low"] > sc0["counts"]["low"], f"{mc.name}: no low counted: {sc}")
    vt.check(sc["simulated"] is False and sc["simulated_counts"] == sc0["simulated_counts"] ==
             {"normal": 0, "low": 0, "medium": 0, "oom": 0}, f"real pressure counted as simulated: {sc}")
    text = ctl("status")
    row = re.search(rf"\n{re.escape(mc.name)}\s+\w+\s+\S+(\s+\d+){{4}}\s+(\S+)\s", text)
    vt.check(row and row.group(2) == "no", f"status SIMULATED column for {mc.name}:\n{text}")

    fams = metrics()
    vt.check(fams["vmpressured_level_events_total"].value(scope=mc.name, level="low") >= 1, "low events")
    vt.check(fams["vmpressured_simulated_level_events_total"].value(scope=mc.name, level="low") == 0,
             "real LOW counted as simulated")
    ann = histogram(fams, "announce", False)
    vt.check(ann["count"] > ann0, f"the real announce latency histogram did not grow ({ann0} → {ann['count']})")
    check_histogram(ann, "announce (real)")
    vt.check(histogram(fams, "announce", True)["count"] == 0, "simulated announcements without any Simulate()")
    vt.log(f"announce latency: {ann['count']:.0f} real announcements, {ann['sum'] * 1e6 / ann['count']:.0f} µs mean")
    mon.wait_for(lambda m: m.get("signal") == "Normal" and m["scope"] == mc.name, 20, f"{mc.name} back to normal")


def find_action(s, **fields):
    return [a for a in s["recent_actions"] if all(a.get(k) == v for k, v in fields.items())]


def test_actions(d, mon, unit, rec):
    vt.log("=== b) Simulate MEDIUM and OOM with a policy: status lists the actions, marked simulated")
    d.wait_for(lambda e: e["type"] == "source" and e.get("scope") == UNIT, 2,
               f"the unit-scope policy's cgroup watched (a 'source' line for {UNIT})", from_start=True)
    vt.check(status_json()["recent_actions"] == [], "recent actions before any")
    vt.check("No recent actions." in ctl("status"), "status without actions")

    ctl("simulate", "medium", f"--scope={UNIT}")
    vt.check(vt.poll_until(lambda: rec.count() >= 1, 5), "the recorder got no SIGUSR1 from the simulated MEDIUM")
    s = status_json()
    sig = find_action(s, unit=UNIT, action="signal")
    vt.check(len(sig) == 1, f"recent actions after MEDIUM: {s['recent_actions']}")
    a = sig[0]
    vt.check(a["level"] == "medium" and a["signal"] == "SIGUSR1" and a["pid"] == 0 and a["result"] == "ok"
             and a["simulated"] is True, f"the signal entry: {a}")
    vt.check(abs(a["time_usec"] / 1e6 - time.time()) < 30, f"time_usec {a['time_usec']} is not now")
    got = mon.wait_for(lambda m: m.get("signal") == "Medium" and m["scope"] == UNIT, 5,
                       "the simulated Medium in monitor --json")
    vt.check(got["simulated"] is True, f"monitor --json: {got}")
    act = mon.wait_for(lambda m: m.get("signal") == "Action" and m["unit"] == UNIT, 5,
                       "the Action signal for the SIGUSR1 in monitor --json")
    vt.check(act["action"] == "signal" and act["sent"] == "SIGUSR1" and act["level"] == "medium"
             and act["result"] == "ok" and act["simulated"] is True and act["pid"] == 0
             and act["realtime_usec"] == a["time_usec"], f"monitor --json Action: {act} (status: {a})")
    sc = next(x for x in s["scopes"] if x["name"] == UNIT)
    vt.check(sc["simulated"] is True and sc["simulated_counts"]["medium"] == 1, f"status --json scope: {sc}")

    ctl("simulate", "oom", f"--scope={UNIT}")
    vt.check(vt.poll_until(lambda: rec.proc.poll() is not None, 5), "the recorder survived the simulated OOM")
    vt.check(rec.proc.returncode == -signal.SIGKILL, f"the recorder ended with {rec.proc.returncode}")
    s = status_json()
    kill = find_action(s, unit=UNIT, action="kill")
    vt.check(len(kill) == 1, f"recent actions after OOM: {s['recent_actions']}")
    k = kill[0]
    vt.check(k["level"] == "oom" and k["signal"] == "SIGKILL" and k["pid"] == rec.pid and k["result"] == "ok"
             and k["simulated"] is True, f"the kill entry: {k}")
    vt.check(s["recent_actions"].index(k) > s["recent_actions"].index(a), "not oldest first")
    killed = mon.wait_for(lambda m: m.get("signal") == "Killed", 5, "Killed in monitor --json")
    vt.check(killed["unit"] == UNIT and killed["pid"] == rec.pid, f"Killed: {killed}")
    # A kill is printed once, as Killed (its Action signal is not repeated).
    vt.check(not mon.find(lambda m: m.get("signal") == "Action" and m.get("action") == "kill"),
             "monitor printed the kill twice (Action and Killed)")

    text = ctl("status")
    vt.log("status:\n" + text)
    vt.check(re.search(r"\nTIME\s+UNIT\s+LEVEL\s+ACTION\s+SIGNAL\s+PID\s+RESULT\s+LATENCY\s+SIMULATED\n", text),
             f"no recent actions table header:\n{text}")
    vt.check(re.search(rf"\n\w{{3}} \d{{4}}-\d\d-\d\d \d\d:\d\d:\d\d \S+\s+{re.escape(UNIT)}\s+medium\s+signal\s+"
                       rf"SIGUSR1\s+-\s+ok\s+\S+\s+yes\n", text), f"no signal row:\n{text}")
    vt.check(re.search(rf"\n.*{re.escape(UNIT)}\s+oom\s+kill\s+SIGKILL\s+{rec.pid}\s+ok\s+\S+\s+yes\n", text),
             f"no kill row:\n{text}")
    d.wait_for(lambda e: e["type"] == "killed" and e.get("unit") == UNIT, 5, "the daemon's killed line")


def test_metrics():
    vt.log("=== c) metrics: the action histograms")
    fams = metrics()
    for stage in ("signal", "kill"):
        h = histogram(fams, stage, True)
        vt.check(h["count"] >= 1, f"{stage} (simulated) histogram: {h}")
        check_histogram(h, f"{stage} (simulated)")
        vt.check(h["sum"] < 5 * h["count"], f"{stage}: {h['sum']} s for {h['count']} actions")
        vt.check(histogram(fams, stage, False)["count"] == 0, f"real {stage} actions counted without any")
    vt.check(fams["vmpressured_kills_total"].value() == 1, "kills_total")
    vt.check(fams["vmpressured_signals_total"].value() >= 1, "signals_total")


def main():
    vt.check(CTL and os.access(CTL, os.X_OK), "$VMPRESSURECTL must name the built vmpressurectl")
    vt.need_root_and_cgroups(cgroup2=True)
    vb.need_bus()
    if os.path.isdir("/run/systemd/system"):
        vt.skip_or_fail("PID 1 is systemd; this test fakes a unit in a tree without it")
    tmp = vt.make_tempdir()
    pdir = os.path.join(tmp, "policies")
    os.mkdir(pdir)
    with open(os.path.join(pdir, f"{UNIT}.policy"), "w") as f:
        f.write("[Policy]\nScope=unit\n\n[Medium]\nSignal=SIGUSR1\nSignalTarget=all\n\n[OOM]\nKill=yes\n")

    vb.SystemBus().start()
    with vu.Slice(PREFIX), vu.Unit(PREFIX) as unit, vt.Memcg("ctl-real", limit_mib=128) as mc:
        rec = vu.Recorder(unit, tmp).start()
        d = vt.Daemon(f"--watch={mc.rel}", f"--policy-dir={pdir}", config=vb.FAST_LEVELS).start()
        vb.wait_name(vb.NAME)
        mon = vb._LineReader([CTL, "monitor", "--json"], "monitor --json",
                             lambda l: json.loads(l) if l.startswith("{") else None)
        time.sleep(0.5)
        test_real_load(d, mon, mc)
        test_actions(d, mon, unit, rec)
        test_metrics()
        mon.stop()
        rec.stop()
        d.stop()


vt.run(main)
