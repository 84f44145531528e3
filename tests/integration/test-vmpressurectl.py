#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""vmpressurectl against the real daemon on a private dbus-daemon:

- usage errors exit 2, --help/--version 0, no daemon 3;
- check: the shipped example policies pass (exit 0, nothing on stderr); a bad
  file gives exactly its file:line messages and exit 1; a FIFO and a directory
  are refused at once (exit 1, no hang), a symlink to /dev/null is a mask;
- status, status --json, policies, policies --json, metrics: output and exit 0;
- simulate (root): the level is announced, marked simulated=1 in the daemon's
  --print-events line, seen by monitor --json with "simulated": true (the
  Simulated signal before it), by status (Level line, SIMULATED column,
  --json) while it lasts; monitor --threshold medium stays silent on LOW and
  prints MEDIUM marked simulated=yes; --scope reaches a watched memcg, an
  unknown scope is an error (1);
- metrics parses as strict Prometheus text (promtext.py): HELP and TYPE for
  every family, the latency histogram's buckets never decrease and end at
  +Inf == _count; the simulated announcements are counted apart;
- simulate as nobody is refused by the bus policy (exit 1), nothing happens;
- where -.slice's source is memcg (v1, as on these hybrid hosts), its
  SOURCE DETAIL line shows the stall band's own PSI trigger on
  /proc/pressure/memory, and still does after a Reload()."""

import json
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vmptest as vt    # noqa: E402
import vmpbus as vb     # noqa: E402
import vmpfault as vf   # noqa: E402
import promtext         # noqa: E402

CTL = os.environ.get("VMPRESSURECTL")
SRC = os.environ.get("VMP_SOURCE_ROOT", "")
EXAMPLES = ["cache.service.policy", "batch@.service.policy", "kiosk-browser.service.policy"]


def ctl(*args, user=None, timeout=15):
    cmd = (vb.NOBODY if user == "nobody" else []) + [CTL] + [str(a) for a in args]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout,
                       stdin=subprocess.DEVNULL)
    vt.log(f"$ vmpressurectl {' '.join(map(str, args))} → {r.returncode}")
    return r


def expect(r, status, what):
    vt.check(r.returncode == status, f"{what}: exit {r.returncode}, expected {status}; "
                                     f"stdout {r.stdout[-800:]!r} stderr {r.stderr[-800:]!r}")


def check_usage():
    expect(ctl(), 2, "no command")
    expect(ctl("frobnicate"), 2, "unknown command")
    expect(ctl("--bogus", "status"), 2, "unknown option")
    expect(ctl("simulate"), 2, "simulate without a level")
    expect(ctl("simulate", "purple"), 2, "simulate with a bad level")
    expect(ctl("monitor", "--threshold", "purple"), 2, "monitor with a bad threshold")
    expect(ctl("check"), 2, "check without files")
    expect(ctl("metrics", "--json"), 2, "--json where it is not supported")
    r = ctl("--help")
    expect(r, 0, "--help")
    vt.check("simulate LEVEL" in r.stdout and "Exit status" in r.stdout, "help text")
    r = ctl("--version")
    expect(r, 0, "--version")
    vt.check(re.fullmatch(r"vmpressurectl \S+\n", r.stdout), f"--version printed {r.stdout!r}")


def check_check(tmp):
    good = [os.path.join(SRC, "policies", f) for f in EXAMPLES]
    r = ctl("check", *good)
    expect(r, 0, "check of the example policies")
    vt.check(r.stderr == "", f"example policies have problems: {r.stderr}")

    bad = os.path.join(tmp, "bad.service.policy")
    with open(bad, "w") as f:
        f.write("[Policy]\nScope=bogus\n\n[Low]\nKill=yes\nSignal=SIGKILL\n[Nope]\nX=1\n[OOM]\nKill=maybe\n")
    wrongname = os.path.join(tmp, "not-a-unit.policy")
    with open(wrongname, "w") as f:
        f.write("[OOM]\nKill=yes\n")
    r = ctl("check", good[0], bad, wrongname, os.path.join(tmp, "missing.service.policy"))
    expect(r, 1, "check of bad files")
    want = [
        f"{bad}:2: Invalid value 'bogus' for Scope=: must be system or unit",
        f"{bad}:5: Kill= is only allowed in [OOM], ignoring",
        f"{bad}:6: Signal=SIGKILL is not allowed: use Kill=yes in [OOM] to kill",
        f"{bad}:7: Unknown section [Nope]: must be [Policy], [Low], [Medium] or [OOM]",
        f"{bad}:10: Invalid value 'maybe' for Kill=: must be a boolean (yes/no, true/false, on/off, 1/0)",
        f"{wrongname}: File name is not '<unit>.policy' with a valid unit name "
        "(service, scope, slice, socket, mount, swap), ignoring file",
        f"{tmp}/missing.service.policy: cannot open: No such file or directory",
    ]
    got = r.stderr.splitlines()
    vt.check(got == want, "check messages:\n" + "\n".join(got) + "\nexpected:\n" + "\n".join(want))


def check_check_special(tmp):
    """check FILE on what is not a regular file: a FIFO without a writer used
    to block open(2) for ever; now it, a directory and a socket are refused
    at once (exit 1), and a symlink to /dev/null is a mask, as in the
    policy directories (exit 0)."""
    fifo = os.path.join(tmp, "fifo.service.policy")
    os.mkfifo(fifo)
    t0 = time.monotonic()
    try:
        r = ctl("check", fifo, timeout=5)
    except subprocess.TimeoutExpired:
        vt.fail(f"check {fifo} (a FIFO nobody writes to) did not return within 5 s")
    took = time.monotonic() - t0
    vt.log(f"check of a FIFO returned after {took * 1000:.0f} ms")
    expect(r, 1, "check of a FIFO")
    vt.check(r.stderr == f"{fifo}: not a regular file (a FIFO), not a policy\n", f"FIFO: {r.stderr!r}")
    vt.check(took < 2, f"check of a FIFO took {took:.1f} s")

    r = ctl("check", tmp, timeout=5)
    expect(r, 1, "check of a directory")
    vt.check(r.stderr == f"{tmp}: not a regular file (a directory), not a policy\n", f"directory: {r.stderr!r}")

    null = os.path.join(tmp, "masked.service.policy")
    os.symlink("/dev/null", null)
    r = ctl("check", null, timeout=5)
    expect(r, 0, "check of a symlink to /dev/null")
    vt.check(r.stdout == f"{null}: /dev/null: masks masked.service\n" and r.stderr == "",
             f"/dev/null: {r.stdout!r} {r.stderr!r}")


def check_status(d, mc):
    r = ctl("status")
    expect(r, 0, "status")
    for pat in (r"Level: (none|low|medium|oom) \(index \d+\)", r"Source: \S+", r"Policies: 3 loaded", r"DryRun: no",
                r"Version: \S+", r"Counts: normal \d+, low \d+, medium \d+, oom \d+",
                r"\n-\.slice\s+\w+\s+\S+", re.escape(mc.name)):
        vt.check(re.search(pat, r.stdout), f"status lacks {pat!r}:\n{r.stdout}")
    for unit in ("cache.service", "batch@.service", "kiosk-browser.service"):
        vt.check(unit in r.stdout, f"status does not list policy {unit}")

    r = ctl("--json", "status")
    expect(r, 0, "status --json")
    s = json.loads(r.stdout)
    vt.check(s["level"] in ("none", "low", "medium", "oom") and s["dry_run"] is False and len(s["policies"]) == 3, f"status --json: {s}")
    vt.check([c["name"] for c in s["scopes"]] == ["-.slice", mc.name], f"scopes: {s['scopes']}")
    vt.check(s["version"] == vb.get_property("Version"), "version")

    r = ctl("policies", "--no-pager")
    expect(r, 0, "policies")
    lines = r.stdout.splitlines()
    vt.check(re.match(r"UNIT\s+SCOPE\s+FILE$", lines[0]), f"policies header: {lines[0]!r}")
    rows = [l.split() for l in lines[1:4]]
    vt.check(sorted(x[0] for x in rows) == sorted(["cache.service", "batch@.service", "kiosk-browser.service"])
             and all(x[1] == "system" for x in rows), f"policies rows: {rows}")
    vt.check("3 policies listed." in r.stdout, "policies footer")
    r = ctl("policies", "--json")
    expect(r, 0, "policies --json")
    p = json.loads(r.stdout)
    vt.check(len(p) == 3 and all(set(x) == {"unit", "scope", "file"} for x in p), f"policies --json: {p}")


def system_detail():
    r = ctl("status")
    expect(r, 0, "status")
    m = re.search(r"Source: (\S+)", r.stdout)
    vt.check(m, f"status has no Source line:\n{r.stdout}")
    return m.group(1), [l for l in r.stdout.splitlines() if l.startswith("-.slice ") and "own PSI trigger" in l]


def check_stall_trigger():
    src, lines = system_detail()
    if src != "memcg":
        # Only memcg gets it: reclaim's own trigger serves the band (its detail
        # says "woken by PSI"), and the syscall source passes the seed's levels on.
        vt.log(f"-.slice uses the {src} source: no trigger of the band's own to see")
        return
    vt.check(len(lines) == 1 and re.search(r"own PSI trigger: some 1ms per \d+ms on /proc/pressure/memory", lines[0]),
             f"-.slice ({src}): status shows no stall-band PSI trigger: {lines}")
    vt.log(f"-.slice ({src}): {lines[0]}")
    mgr = vf.Manager()
    vt.check(mgr.reload() is None, "Reload() of an unchanged configuration failed")
    mgr.close()
    src2, lines2 = system_detail()
    vt.check(src2 == src and lines2 == lines, f"after Reload(): {src2} {lines2}, before: {src} {lines}")


def metrics():
    """vmpressurectl metrics, parsed strictly (promtext.py): {family: Family}."""
    r = ctl("metrics")
    expect(r, 0, "metrics")
    vt.check(all(line.startswith(("# HELP vmpressured_", "# TYPE vmpressured_", "vmpressured_"))
                 for line in r.stdout.splitlines()), f"a metric outside vmpressured_*:\n{r.stdout}")
    try:
        return promtext.parse(r.stdout)
    except ValueError as e:
        vt.fail(f"metrics is not valid Prometheus text: {e}")


def check_metrics(mc, system_level):
    promtext.self_test()
    fams = metrics()
    vt.log(f"metrics: {len(fams)} families, {sum(len(f.samples) for f in fams.values())} samples")
    ev = fams["vmpressured_level_events_total"]
    sim = fams["vmpressured_simulated_level_events_total"]
    vt.check(ev.value(scope="-.slice", level=system_level) >= 1, f"{system_level} events of -.slice")
    vt.check(ev.value(scope=mc.name, level="medium") >= 1, "medium events of the memcg scope")
    # What was simulated: LOW (or OOM) on -.slice, MEDIUM on the memcg (which may fall
    # through LOW after HoldSec=), each back to normal.
    vt.check(sim.value(scope="-.slice", level=system_level) >= 1,
             f"the simulated {system_level} of -.slice is not counted as simulated")
    vt.check(sim.value(scope=mc.name, level="medium") == 1 and sim.value(scope=mc.name, level="normal") == 1
             and sim.value(scope=mc.name, level="low") <= 1 and sim.value(scope=mc.name, level="oom") == 0,
             f"simulated events of {mc.name}: {[s for s in sim.samples if s[1]['scope'] == mc.name]}")
    for s in sim.samples:
        vt.check(s[2] <= ev.value(**s[1]), f"more simulated than announced: {s}")
    vt.check(fams["vmpressured_simulated"].value(scope=mc.name) == 0, "the memcg scope still simulated")
    vt.check(fams["vmpressured_simulations_total"].value() == 2, "simulations_total")
    vt.check(fams["vmpressured_policies_loaded"].value() == 3, "policies_loaded")
    for name in ("vmpressured_kills_total", "vmpressured_subscribers", "vmpressured_subscriber_drops_total",
                 "vmpressured_signal_drops_total"):
        vt.check(name in fams, f"{name} missing")

    # The latency histogram: one series per stage and simulated; the simulated
    # announcements (LOW and MEDIUM) are in simulated="1", and count == +Inf bucket
    # (promtext checked) == the sum of the per-bucket increments.
    lat = fams["vmpressured_latency_seconds"]
    vt.check(lat.type == "histogram", f"latency type {lat.type}")
    hs = {dict(k)["stage"] + "/" + dict(k)["simulated"]: h for k, h in lat.histograms().items()}
    vt.check(sorted(hs) == sorted(f"{st}/{x}" for st in ("announce", "signal", "kill", "deliver")
                                         for x in "01"),
             f"latency series: {sorted(hs)}")
    a = hs["announce/1"]
    vt.check(a["count"] >= 2, f"simulated announcements measured (LOW, MEDIUM): {a}")
    counts = [c for _, c in a["buckets"]]
    vt.check(sum(b - p for p, b in zip([0] + counts, counts)) == a["count"], f"buckets do not add up: {a}")
    vt.check(0 < a["sum"] < a["count"] * 1.0, f"simulated announce latency sum {a['sum']} s for {a['count']}")


def check_simulate(d, mc):
    mon = vb._LineReader([CTL, "monitor", "--json"], "monitor --json",
                         lambda l: json.loads(l) if l.startswith("{") else None)
    mon_med = vb._LineReader([CTL, "monitor", "--threshold=medium"], "monitor --threshold=medium",
                             lambda l: l.split() if l.strip() else None)
    time.sleep(0.5)

    # Refused for nobody, before anything was simulated.
    r = ctl("simulate", "oom", user="nobody")
    expect(r, 1, "simulate as nobody")
    vt.check("AccessDenied" in r.stderr or "denied" in r.stderr.lower(), f"nobody's refusal: {r.stderr!r}")
    time.sleep(0.5)
    vt.check(not [e for e in d.events if e["type"] == "level" and "simulated" in e], "nobody's simulate did something")

    # Other loads on this machine may cause real pressure: start from normal.
    # A development machine may stay under it (a benchmark in its own memcgs,
    # which the root memcg's listener hears): then OOM is simulated, which is
    # a rise from any real level, and the return to normal is not waited for.
    quiet = True
    if d.find(vt.is_level("-.slice")):
        quiet = vt.poll_until(lambda: vb.daemon_levels(d, "-.slice")[-1]["level"] == "none", 60, 0.1)
    level, member, index = ("low", "Low", 0) if quiet else ("oom", "OOM", 100)
    if not quiet:
        vt.log("-.slice stayed under real pressure for 60 s: simulating OOM instead of LOW")

    r = ctl("simulate", level)
    expect(r, 0, f"simulate {level}")
    vt.check(r.stdout == f"Simulated {level} on -.slice.\n", f"simulate printed {r.stdout!r}")
    e = d.wait_for(lambda e: vt.is_level("-.slice")(e) and "simulated" in e, 5, f"the simulated {level}")
    vt.check(str(e.get("simulated")) == "1", f"not marked simulated: {e['line']}")
    # Marked in status while it lasts (QuietSec=2s: it is not over yet).
    r = ctl("status")
    expect(r, 0, "status during a simulation")
    vt.check(re.search(r"Level: \w+ \(index \d+\), simulated\n", r.stdout), f"Level line not simulated:\n{r.stdout}")
    vt.check(re.search(r"\n-\.slice\s+\w+\s+\S+(\s+\d+){4}\s+yes\s", r.stdout), f"scope not simulated:\n{r.stdout}")
    s = json.loads(ctl("--json", "status").stdout)
    vt.check(s["simulated"] is True and s["scopes"][0]["simulated"] is True, f"status --json: {s}")
    # Real pressure on the machine (other tests) may announce -.slice too: the
    # simulated one is the one marked.
    got = mon.wait_for(lambda m: m.get("signal") == member and m["scope"] == "-.slice" and m["simulated"], 5,
                       f"a simulated {member} in monitor --json")
    vt.check(got == {"signal": member, "level": level, "scope": "-.slice", "index": index, "simulated": True},
             f"monitor --json: {got}")
    if quiet:
        got = mon.wait_for(lambda m: m.get("signal") == "Normal" and m["scope"] == "-.slice", 10, "Normal after LOW")
        vt.check(got["simulated"] is True, f"the end of the simulation is not marked: {got}")

    r = ctl("simulate", "medium", "--scope", mc.name)
    expect(r, 0, "simulate medium --scope")
    e = d.wait_for(vt.is_level(mc.name, "medium"), 5, "the simulated MEDIUM in the memcg scope")
    vt.check(str(e.get("simulated")) == "1", f"not marked simulated: {e['line']}")
    got = mon_med.wait_for(lambda w: w[0] == "Medium" and w[1] == f"scope={mc.name}", 5,
                           "Medium in monitor --threshold=medium")
    vt.check(got == ["Medium", f"scope={mc.name}", "index=60", "simulated=yes"], f"monitor line {got}")
    d.wait_for(vt.is_level(mc.name, "none"), 10, "the memcg scope back to normal")
    vt.check(not [w for w in mon_med.snapshot() if w[0] in ("Low", "Normal")],
             f"monitor --threshold=medium printed {mon_med.snapshot()}")
    # The return to normal ends the simulation: it is the last line marked.
    back = [e for e in vb.daemon_levels(d, mc.name) if e["level"] == "none"]
    vt.check(back and str(back[-1].get("simulated")) == "1", "the end of the simulation is not marked")

    r = ctl("simulate", "oom", "--scope=no-such.service")
    expect(r, 1, "simulate on an unknown scope")
    vt.check("No watched scope 'no-such.service'" in r.stderr, f"unknown scope: {r.stderr!r}")
    mon.stop()
    mon_med.stop()
    return level


def main():
    vt.check(CTL and os.access(CTL, os.X_OK), "$VMPRESSURECTL must name the built vmpressurectl")
    vt.need_root_and_cgroups()
    vb.need_bus()
    tmp = vt.make_tempdir()
    check_usage()
    check_check(tmp)
    check_check_special(tmp)

    vb.SystemBus().start()
    r = ctl("status")
    expect(r, 3, "status without a daemon")
    vt.check("not reachable" in r.stderr, f"no daemon: {r.stderr!r}")

    pdir = os.path.join(tmp, "policies")
    os.mkdir(pdir)
    for f in EXAMPLES:
        shutil.copy(os.path.join(SRC, "policies", f), pdir)
    with vt.Memcg("ctl", limit_mib=64) as mc:
        d = vt.Daemon(f"--watch={mc.rel}", f"--policy-dir={pdir}", config=vb.FAST_LEVELS).start()
        vb.wait_name(vb.NAME)
        check_status(d, mc)
        check_stall_trigger()
        system_level = check_simulate(d, mc)
        check_metrics(mc, system_level)
        d.stop()


vt.run(main)
