#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Guard= as the administrator sees it, on a private dbus-daemon enforcing the
project's bus policy (cgroup v1 here: usage thresholds):

- unit G (fake unit, memcg limit 64 MiB) with Guard=16M: the Guards property
  has (G, usage-threshold, 16 MiB, 64 MiB, 48 MiB, detail), as user nobody
  too; vmpressurectl status shows a GUARDED UNIT row with the band and the
  limit, status --json a "guards" entry with the same numbers;
- unit P with Guard=25%: the share is taken of P's own limit (32 MiB: 8 MiB,
  mark 24 MiB);
- unit N without a memory limit: state no-limit, said in the log;
- a Guard= without Kill=yes is refused by `vmpressurectl check` with its
  file:line;
- Reload() with G's Guard= removed: G leaves Guards, the log says the guard
  was taken off, and P's stays."""

import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vmptest as vt    # noqa: E402
import vmpbus as vb     # noqa: E402
import vmpunit as vu    # noqa: E402

CTL = os.environ.get("VMPRESSURECTL")
PREFIX = f"vmp-gs-{os.getpid()}"
MIB = 1 << 20
GUARDED = "[Policy]\nScope=unit\n[OOM]\nKill=yes\nGuard={}\n"


def ctl(*args):
    r = subprocess.run([CTL] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=15,
                       stdin=subprocess.DEVNULL)
    vt.log(f"$ vmpressurectl {' '.join(args)} → {r.returncode}")
    return r


def guards(user=None):
    return {row[0]: row[1:] for row in vb.get_property("Guards", user=user)}


def main():
    vt.check(CTL and os.access(CTL, os.X_OK), "$VMPRESSURECTL must name the built vmpressurectl")
    vt.need_root_and_cgroups(cgroup2=True)
    vb.need_bus()
    vb.SystemBus().start()
    with vu.Slice(PREFIX), vu.Unit(PREFIX, "g", limit_mib=64) as g, vu.Unit(PREFIX, "p", limit_mib=32) as p, \
            vu.Unit(PREFIX, "n", limit_mib=64) as n:
        # N: no limit (the v1 "unlimited" value).
        with open(os.path.join(n.path, "memory.limit_in_bytes"), "w") as f:
            f.write("-1")
        pdir = vu.write_policies({g.unit: GUARDED.format("16M"), p.unit: GUARDED.format("25%"),
                                  n.unit: GUARDED.format("16M")})
        bad = vu.write_policies({"x.service": "[Policy]\nScope=unit\n[OOM]\nGuard=16M\n"})
        r = ctl("check", os.path.join(bad, "x.service.policy"))
        vt.check(r.returncode == 1 and "x.service.policy:4: Guard= needs Scope=unit in [Policy] and Kill=yes" in r.stderr,
                 f"check of a Guard= without Kill=yes: rc {r.returncode}, stderr {r.stderr!r}")

        d = vt.Daemon(f"--policy-dir={pdir}").start()
        vb.wait_name(vb.NAME)
        for u in (g, p, n):
            d.wait_for(lambda e, u=u: e["type"] == "source" and e.get("scope") == u.name, 5,
                       f"a 'source' line for {u.name}", from_start=True)
        gd = vt.poll_until(lambda: (lambda x: x if len(x) == 3 else None)(guards()), 5) or guards()
        vt.log(f"Guards: {gd}")
        vt.check(gd.get(g.unit, [None])[:4] == ["usage-threshold", 16 * MIB, 64 * MIB, 48 * MIB],
                 f"{g.unit}: {gd.get(g.unit)}")
        vt.check(gd.get(p.unit, [None])[:4] == ["usage-threshold", 8 * MIB, 32 * MIB, 24 * MIB],
                 f"{p.unit} (Guard=25% of 32 MiB): {gd.get(p.unit)}")
        vt.check(gd.get(n.unit, [None])[0] == "no-limit", f"{n.unit} (no limit): {gd.get(n.unit)}")
        vt.check(d.stderr_lines(lambda l: f"{n.unit}: Guard=16.0M needs a memory limit" in l),
                 "the log does not say the unit without a limit is not guarded")
        vt.check(guards(user="nobody") == gd, "Guards differs for user nobody")

        r = ctl("status")
        vt.check(r.returncode == 0, f"status: {r.returncode} {r.stderr}")
        row = [l for l in r.stdout.splitlines() if l.startswith(g.unit)]
        vt.check("GUARDED UNIT" in r.stdout and row and row[-1].split()[1:4] == ["usage-threshold", "16.0M", "64.0M"],
                 f"status: the guard row of {g.unit}: {row}\n{r.stdout}")
        r = ctl("--json", "status")
        s = json.loads(r.stdout)
        js = {x["unit"]: x for x in s["guards"]}
        vt.check(js.get(g.unit, {}).get("mark_bytes") == 48 * MIB and js[g.unit]["state"] == "usage-threshold"
                 and js[g.unit]["limit_bytes"] == 64 * MIB, f"status --json guards: {s['guards']}")

        # G loses its Guard=: taken off at the reload, P keeps its own.
        with open(os.path.join(pdir, f"{g.unit}.policy"), "w") as f:
            f.write("[Policy]\nScope=unit\n[OOM]\nKill=yes\n")
        vb.busctl("call", vb.NAME, vb.PATH, vb.IFACE, "Reload")
        gd = guards()
        vt.check(g.unit not in gd and gd.get(p.unit, [None])[0] == "usage-threshold",
                 f"after the reload without {g.unit}'s Guard=: {gd}")
        vt.check(d.stderr_lines(lambda l: f"{g.name}: guard taken off." in l),
                 "the log does not say the guard was taken off")
        d.stop()


vt.run(main)
