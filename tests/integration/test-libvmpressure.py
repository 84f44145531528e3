#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""libvmpressure as an application sees it: `meson install --destdir` into a
temporary directory, then lib-client.c compiled with nothing but
`pkg-config --cflags --libs libvmpressure` of that tree:

- the argument checks: EINVAL for a threshold that is no level, EFAULT for
  NULL, size filled in, the fd close-on-exec;
- without the daemon on the bus: ENOENT;
- threshold semantics as in the seed's man page, with `vmpressurectl
  simulate` as a deterministic source: a LOW fd gets LOW and MEDIUM, a
  MEDIUM fd stays silent on LOW;
- real memcg pressure (an anonymous hog in a 128 MiB memcg with the OOM
  killer off): the OOM record arrives through vmpressure_fd();
- vmpressure-test (the seed's utility, built from the library) prints the
  seed's line format."""

import glob
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vmptest as vt    # noqa: E402
import vmpbus as vb     # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
CTL = os.environ.get("VMPRESSURECTL")
VMPRESSURE_TEST = os.environ.get("VMPRESSURE_TEST")
LINE = re.compile(r"VM pressure: 0x([0-9a-f]{8}) \(threshold 0x([0-9a-f]{8})\)$")


def build_client(tmp):
    """Installs into tmp/destdir and compiles lib-client against it alone."""
    dest = os.path.join(tmp, "destdir")
    r = subprocess.run(["meson", "install", "-C", os.environ["VMP_BUILD_ROOT"], "--destdir", dest,
                        "--no-rebuild", "--quiet"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, timeout=120)
    vt.check(r.returncode == 0, f"meson install failed: {r.stdout[-2000:]}")
    pcs = glob.glob(os.path.join(dest, "**", "pkgconfig", "libvmpressure.pc"), recursive=True)
    vt.check(len(pcs) == 1, f"libvmpressure.pc installed {len(pcs)} times: {pcs}")
    vt.check(glob.glob(os.path.join(dest, "**", "include", "vmpressure.h"), recursive=True),
             "vmpressure.h not installed")
    env = dict(os.environ, PKG_CONFIG_PATH=os.path.dirname(pcs[0]), PKG_CONFIG_SYSROOT_DIR=dest)
    r = subprocess.run(["pkg-config", "--cflags", "--libs", "libvmpressure"], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    vt.check(r.returncode == 0, f"pkg-config: {r.stderr}")
    flags = r.stdout.split()
    vt.log(f"pkg-config: {' '.join(flags)}")
    vt.check(all(not f.startswith(("-I", "-L")) or f[2:].startswith(dest) for f in flags),
             f"flags point outside the installed tree: {flags}")
    libdirs = [f[2:] for f in flags if f.startswith("-L")]
    exe = os.path.join(tmp, "lib-client")
    cmd = ["cc", "-std=gnu11", "-Wall", "-Werror", "-o", exe, os.path.join(HERE, "lib-client.c")] + flags + \
        [f"-Wl,-rpath,{d}" for d in libdirs]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    vt.check(r.returncode == 0, f"{' '.join(cmd)}:\n{r.stdout}")
    r = subprocess.run(["ldd", exe], stdout=subprocess.PIPE, text=True)
    vt.check(any(l.strip().startswith("libvmpressure.so.0 => " + dest) for l in r.stdout.splitlines()),
             f"lib-client does not use the installed libvmpressure.so.0:\n{r.stdout}")
    return exe


def parse(line):
    m = LINE.match(line)
    if m:
        return {"type": "record", "pressure": int(m.group(1), 16), "threshold": int(m.group(2), 16)}
    return {"type": line.split()[0] if line.split() else "", "line": line}


def client(exe, *thresholds):
    c = vb._LineReader([exe] + list(thresholds), f"lib-client {' '.join(thresholds)}", parse)
    c.wait_for(lambda e: e["type"] == "ready", 10, "ready")
    return c


def records(c):
    return [(e["pressure"], e["threshold"]) for e in c.snapshot() if e["type"] == "record"]


def simulate(d, level):
    # Other tests on this machine may cause real pressure: start from normal.
    last = [e for e in vb.daemon_levels(d, "-.slice")]
    if last and last[-1]["level"] != "none":
        d.wait_for(vt.is_level("-.slice", "none"), 60, "-.slice back to normal before simulating")
    r = subprocess.run([CTL, "simulate", level], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    vt.check(r.returncode == 0, f"vmpressurectl simulate {level}: {r.stderr}")
    d.wait_for(lambda e: vt.is_level("-.slice", level)(e) and "simulated" in e, 5, f"simulated {level}")
    d.wait_for(vt.is_level("-.slice", "none"), 15, f"normal after the simulated {level}")


def main():
    for var, path in (("VMPRESSURECTL", CTL), ("VMPRESSURE_TEST", VMPRESSURE_TEST)):
        vt.check(path and os.access(path, os.X_OK), f"${var} must name the built binary")
    vt.need_root_and_cgroups()
    vb.need_bus()
    # meson test points LD_LIBRARY_PATH at the build tree: the client must
    # find the installed library through its own rpath alone.
    os.environ.pop("LD_LIBRARY_PATH", None)
    tmp = vt.make_tempdir()
    exe = build_client(tmp)

    vb.SystemBus().start()
    r = subprocess.run([exe, "absent"], stdout=subprocess.PIPE, text=True, timeout=30)
    vt.check(r.returncode == 0 and r.stdout.strip() == "errno ENOENT", f"without the daemon: {r.stdout!r}")

    L, M, O = vb.VMPRESSURE["low"], vb.VMPRESSURE["medium"], vb.VMPRESSURE["oom"]
    with vt.Memcg("lib-o", limit_mib=128, oom_kill_disable=True) as mo:
        # The load is a small memcg at its own limit; -.slice hears it only with any-cgroup.
        d = vt.Daemon(config=vb.FAST_LEVELS, system_pressure="any-cgroup").start()
        vb.wait_name(vb.NAME)

        r = subprocess.run([exe, "errors"], stdout=subprocess.PIPE, text=True, timeout=30)
        vt.check(r.returncode == 0 and r.stdout == "ok\n", f"argument checks: {r.stdout}")

        low = client(exe, "low")
        med = client(exe, "medium")
        seed = vb._LineReader([VMPRESSURE_TEST], "vmpressure-test", parse)
        time.sleep(0.5)

        # LOW: the LOW fd hears it, the MEDIUM fd stays silent.
        simulate(d, "low")
        low.wait_for(lambda e: e["type"] == "record", 5, "the LOW record")
        time.sleep(0.5)
        vt.check((L, L) in records(low), f"LOW fd after LOW: {records(low)}")
        vt.check(all(p >= M for p, _ in records(med)), f"the MEDIUM fd got {records(med)} on LOW")

        # MEDIUM: both hear it.
        simulate(d, "medium")
        med.wait_for(lambda e: e["type"] == "record", 5, "the MEDIUM record")
        time.sleep(0.5)
        vt.check((M, L) in records(low), f"LOW fd after MEDIUM: {records(low)}")
        vt.check((M, M) in records(med), f"MEDIUM fd after MEDIUM: {records(med)}")

        # Real pressure: an anonymous hog past its memcg's limit, OOM killer off.
        oom = client(exe, "oom")
        hog = vt.Load(mo, "anon", 200).start()
        d.wait_for(vt.is_level("-.slice", "oom"), 30, "OOM on the system scope from real pressure")
        got = oom.wait_for(lambda e: e["type"] == "record", 10, "the OOM record under real pressure")
        vt.check(got["pressure"] == O and got["threshold"] == O, f"OOM fd read {got}")
        hog.kill()
        mo.kill_all()
        d.wait_for(vt.is_level("-.slice", "none"), 20, "normal after the hog")
        vt.check(all(p >= M for p, _ in records(med)), f"MEDIUM fd got a lower level: {records(med)}")

        # The seed's utility: its three fds, its line format.
        seed_recs = records(seed)
        vt.log(f"vmpressure-test printed {len(seed_recs)} lines")
        vt.check((L, L) in seed_recs and (M, M) in seed_recs and (O, O) in seed_recs,
                 f"vmpressure-test lines: {seed_recs}")
        vt.check(all(p >= t for p, t in seed_recs), f"vmpressure-test: a record below its threshold {seed_recs}")
        others = [e for e in seed.snapshot() if e["type"] != "record"]
        vt.check(not others, f"vmpressure-test printed other lines: {others}")
        for c in (low, med, oom, seed):
            c.stop()
        d.stop()


vt.run(main)
