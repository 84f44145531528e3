#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The daemon under a small RLIMIT_NOFILE (prlimit --nofile=SOFT:HARD, as
`ulimit -n` or a unit's LimitNOFILE= would set it).

- 8 (and 100, still below what the daemon and its descriptor reserve
  need): it exits non-zero before printing "ready", with a message that
  names RLIMIT_NOFILE, the limit and how many it needs. Before, at 8 it
  printed "ready" with its memcg source and its policy directory lost to
  EMFILE, and exited afterwards.
- 300 with MaxSubscribers= unset: it starts, loads its policy, and says
  MaxSubscribers= is lowered to what fits beside the reserve.
- 300 with MaxSubscribers=1000 set: it refuses to start, naming
  MaxSubscribers= and the limit it would need.
- soft 8, hard 4096: it raises the soft limit itself and starts with all
  4,096 subscribers' worth.

No bus is needed: the descriptor accounting is done before the bus."""

import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vmptest as vt    # noqa: E402


def run(nofile, config="", policy_dir=None, until_ready=False):
    """(exit status or None if it reached ready and was stopped, stdout, stderr, soft limit seen)."""
    tmp = vt.make_tempdir()
    conf = os.path.join(tmp, "vmpressured.conf")
    with open(conf, "w") as f:
        f.write(config + "\n[Daemon]\nSystemPressure=any-cgroup\n")
    cmd = ["prlimit", f"--nofile={nofile}", os.environ["VMPRESSURED"], f"--config={conf}", "--print-events"]
    if policy_dir:
        cmd.append(f"--policy-dir={policy_dir}")
    # No system bus here: a private address that does not exist.
    env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=f"unix:path={tmp}/no-bus")
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                         text=True, env=env)
    entry = vt.on_cleanup(f"daemon pid {p.pid}", lambda: p.kill())
    soft = None
    if until_ready:
        line = ""
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            line = p.stdout.readline()
            if not line or line.strip() == "ready":
                break
        if line.strip() == "ready":
            time.sleep(0.3)
            with open(f"/proc/{p.pid}/limits") as f:
                soft = int(next(l for l in f if l.startswith("Max open files")).split()[3])
            p.terminate()
    try:
        out, err = p.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
    vt.cancel_cleanup(entry)
    status = None if soft is not None else p.returncode
    return status, out, err, soft


def main():
    vt.need_root_and_cgroups()
    tmp = vt.make_tempdir()
    pol = os.path.join(tmp, "policies")
    os.mkdir(pol)
    with open(os.path.join(pol, "vmp-nofile.service.policy"), "w") as f:
        f.write("[OOM]\nKill=yes\n")

    for n in (8, 100):
        status, out, err, _ = run(f"{n}:{n}", policy_dir=pol)
        vt.log(f"nofile {n}: exit status {status}; stderr: {err.strip()[-400:]!r}")
        vt.check("ready" not in out.split("\n"), f"nofile {n}: the daemon printed 'ready':\n{out}\n{err}")
        vt.check(status not in (None, 0), f"nofile {n}: exit status {status}")
        m = re.search(rf"RLIMIT_NOFILE is {n} \(hard limit {n}\): vmpressured needs at least (\d+) descriptors",
                      err)
        vt.check(m, f"nofile {n}: no message naming RLIMIT_NOFILE and what it needs:\n{err}")
        vt.check(int(m.group(1)) > n, f"nofile {n}: says it needs {m.group(1)}")
        vt.check("Loaded" not in err, f"nofile {n}: policies were loaded (or dropped) before it gave up:\n{err}")

    status, out, err, soft = run("300:300", policy_dir=pol, until_ready=True)
    vt.check(soft is not None, f"nofile 300: did not start (status {status}):\n{err}")
    m = re.search(r"hard limit is 300: MaxSubscribers= is (\d+) instead of 4096", err)
    vt.check(m, f"nofile 300: no notice of the lowered MaxSubscribers=:\n{err}")
    vt.check("Loaded 1 policies" in err, f"nofile 300: the policy was not loaded:\n{err}")
    vt.log(f"nofile 300: started, MaxSubscribers= lowered to {m.group(1)}, policy loaded")

    status, out, err, _ = run("300:300", config="[Daemon]\nMaxSubscribers=1000\n", policy_dir=pol)
    vt.check("ready" not in out.split("\n") and status not in (None, 0),
             f"MaxSubscribers=1000 under nofile 300: status {status}, stdout {out!r}")
    vt.check(re.search(r"MaxSubscribers=1000 needs RLIMIT_NOFILE of \d+ .*hard limit is 300", err),
             f"MaxSubscribers=1000 under nofile 300: no clear message:\n{err}")
    vt.log("nofile 300 with MaxSubscribers=1000: refused before ready, naming MaxSubscribers=")

    status, out, err, soft = run("8:8192", policy_dir=pol, until_ready=True)
    vt.check(soft is not None and soft >= 4096 + 64, f"soft 8, hard 8192: soft limit now {soft}:\n{err}")
    vt.check("Loaded 1 policies" in err and "instead of 4096" not in err, f"soft 8, hard 8192:\n{err}")
    vt.log(f"soft 8, hard 8192: raised the soft limit to {soft} itself and started")


vt.run(main)
