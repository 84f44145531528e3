#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""vmpressurectl against the real daemon on a private dbus-daemon:

- usage errors exit 2, --help/--version 0, no daemon 3;
- check: the shipped example policies pass (exit 0, nothing on stderr); a bad
  file gives exactly its file:line messages and exit 1;
- status, status --json, policies, policies --json, metrics: output and exit 0;
- simulate (root): the level is announced, marked simulated=1 in the daemon's
  --print-events line, seen by monitor --json; monitor --threshold medium
  stays silent on LOW and prints MEDIUM; --scope reaches a watched memcg,
  an unknown scope is an error (1);
- simulate as nobody is refused by the bus policy (exit 1), nothing happens."""

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


def check_metrics(mc):
    r = ctl("metrics")
    expect(r, 0, "metrics")
    samples = {}
    for line in r.stdout.splitlines():
        if line.startswith("# "):
            vt.check(re.match(r"# (HELP|TYPE) vmpressured_\w+ .+", line), f"bad comment {line!r}")
            continue
        m = re.fullmatch(r'(vmpressured_\w+)(\{[^}]*\})? (-?\d+)', line)
        vt.check(m, f"not Prometheus text format: {line!r}")
        samples[m.group(1) + (m.group(2) or "")] = int(m.group(3))
    vt.log(f"metrics: {len(samples)} samples")
    vt.check(samples.get('vmpressured_level_events_total{scope="-.slice",level="low"}', 0) >= 1, "low events")
    vt.check(samples.get(f'vmpressured_level_events_total{{scope="{mc.name}",level="medium"}}', 0) >= 1,
             "medium events of the memcg scope")
    vt.check(samples.get("vmpressured_simulations_total") == 2, "simulations_total")
    vt.check(samples.get("vmpressured_policies_loaded") == 3, "policies_loaded")
    for name in ("vmpressured_kills_total", "vmpressured_subscribers", "vmpressured_subscriber_drops_total",
                 "vmpressured_signal_drops_total"):
        vt.check(name in samples, f"{name} missing")


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

    # Other tests on this machine may cause real pressure: start from normal.
    if d.find(vt.is_level("-.slice")):
        d.wait_for(vt.is_level("-.slice", "none"), 60, "-.slice back to normal before simulating")

    r = ctl("simulate", "low")
    expect(r, 0, "simulate low")
    vt.check(r.stdout == "Simulated low on -.slice.\n", f"simulate printed {r.stdout!r}")
    e = d.wait_for(lambda e: vt.is_level("-.slice")(e) and "simulated" in e, 5, "the simulated LOW")
    vt.check(str(e.get("simulated")) == "1", f"not marked simulated: {e['line']}")
    got = mon.wait_for(lambda m: m.get("signal") == "Low" and m["scope"] == "-.slice", 5, "Low in monitor --json")
    vt.check(got == {"signal": "Low", "level": "low", "scope": "-.slice", "index": 0}, f"monitor --json: {got}")
    mon.wait_for(lambda m: m.get("signal") == "Normal" and m["scope"] == "-.slice", 10, "Normal after LOW")

    r = ctl("simulate", "medium", "--scope", mc.name)
    expect(r, 0, "simulate medium --scope")
    e = d.wait_for(vt.is_level(mc.name, "medium"), 5, "the simulated MEDIUM in the memcg scope")
    vt.check(str(e.get("simulated")) == "1", f"not marked simulated: {e['line']}")
    got = mon_med.wait_for(lambda w: w[0] == "Medium" and w[1] == f"scope={mc.name}", 5,
                           "Medium in monitor --threshold=medium")
    vt.check(got == ["Medium", f"scope={mc.name}", "index=60"], f"monitor line {got}")
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


def main():
    vt.check(CTL and os.access(CTL, os.X_OK), "$VMPRESSURECTL must name the built vmpressurectl")
    vt.need_root_and_cgroups()
    vb.need_bus()
    tmp = vt.make_tempdir()
    check_usage()
    check_check(tmp)

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
        check_simulate(d, mc)
        check_metrics(mc)
        d.stop()


vt.run(main)
