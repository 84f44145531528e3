#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The fleet's pieces against the real programs: the daemon on a private
system bus (vmpbus.py), the shipped vmpressured-metrics script (the command
of vmpressured-metrics.service) writing into a temporary textfile directory,
and Debian's node_exporter (prometheus-node-exporter, as user nobody, on a
private port) serving that directory with --collector.textfile.directory.

- the built vmpressured-metrics.service runs the built script on Debian's
  textfile directory, and the timer starts it;
- the script writes only vmpressured.prom, mode 0644, no temporary left;
- a node_exporter scrape serves every vmpressured_ series of the file with
  its value (the served families parse strictly: promtext.py), among them
  vmpressured_up 1, vmpressured_info and the -.slice level, and reports no
  textfile error; a simulated LOW shows up in the next write's series;
- atomic: 40 rewrites while another thread scrapes as fast as it can, every
  scrape has the whole file (vmpressured_up and vmpressured_info, no
  textfile error), and each write replaces the file (a new inode);
- the daemon stopped: the script still exits 0 and the file holds only
  vmpressured_up 0, which node_exporter serves;
- an unwritable target: exit status non-zero, nothing left behind;
- stopped as systemd stops its unit (SIGTERM to every process of it) while
  vmpressurectl waits for a daemon that does not answer (SIGSTOPped): the
  script dies of SIGTERM (a clean stop for systemd) and its temporary file
  is gone (it was left before 2026-12-06:
  the shell's EXIT trap does not run when a signal ends it);
- promtool accepts prometheus/vmpressured.rules.yml (check rules) and its
  unit tests pass (test rules: tests/prometheus/vmpressured.rules.test.yml)."""

import os
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vmptest as vt    # noqa: E402
import vmpbus as vb     # noqa: E402
import promtext         # noqa: E402

CTL = os.environ.get("VMPRESSURECTL", "")
SRC = os.environ.get("VMP_SOURCE_ROOT", "")
BUILD = os.environ.get("VMP_BUILD_ROOT", "")
SCRIPT = os.path.join(BUILD, "vmpressured-metrics")
NODE_EXPORTER = "/usr/bin/prometheus-node-exporter"
PROMTOOL = "/usr/bin/promtool"
DEBIAN_TEXTFILE_DIR = "/var/lib/prometheus/node-exporter"


def need_tools():
    for tool, pkg in ((NODE_EXPORTER, "prometheus-node-exporter"), (PROMTOOL, "prometheus")):
        if not os.access(tool, os.X_OK):
            vt.skip_or_fail(f"{tool} is missing (tools/dev deps installs {pkg})")
    vt.check(CTL and os.access(CTL, os.X_OK), "$VMPRESSURECTL must name the built vmpressurectl")
    vt.check(os.path.exists(SCRIPT), f"{SCRIPT} (the configured units/vmpressured-metrics.in) is missing")


def unit_key(path, key):
    vals = [l.split("=", 1)[1] for l in open(path).read().splitlines() if l.startswith(key + "=")]
    vt.check(len(vals) == 1, f"{path}: {key}= {vals}")
    return vals[0]


def check_units():
    """What systemd would run: the installed script on Debian's directory."""
    svc = os.path.join(BUILD, "vmpressured-metrics.service")
    argv = unit_key(svc, "ExecStart").split()
    vt.check(len(argv) == 2 and argv[0].endswith("/vmpressured/vmpressured-metrics")
             and argv[1] == DEBIAN_TEXTFILE_DIR + "/vmpressured.prom", f"ExecStart={argv}")
    vt.check(unit_key(svc, "ReadWritePaths") == DEBIAN_TEXTFILE_DIR, "ReadWritePaths=")
    vt.check(open(SCRIPT).read().splitlines()[0] == "#!/bin/sh", "the script is not a shell script")
    tmr = os.path.join(BUILD, "vmpressured-metrics.timer")
    vt.check(unit_key(tmr, "OnUnitActiveSec") == "30s", "the timer's period")
    vt.check(unit_key(tmr, "WantedBy") == "timers.target", "the timer's [Install]")


def check_rules():
    rules = os.path.join(SRC, "prometheus", "vmpressured.rules.yml")
    r = subprocess.run([PROMTOOL, "check", "rules", rules], capture_output=True, text=True, timeout=60)
    vt.log(r.stdout.strip())
    vt.check(r.returncode == 0 and "SUCCESS: 6 rules found" in r.stdout, f"promtool check rules: {r.stdout}{r.stderr}")
    t = os.path.join(SRC, "tests", "prometheus", "vmpressured.rules.test.yml")
    r = subprocess.run([PROMTOOL, "test", "rules", t], capture_output=True, text=True, timeout=60)
    vt.log(r.stdout.strip())
    vt.check(r.returncode == 0 and "SUCCESS" in r.stdout, f"promtool test rules: {r.stdout}{r.stderr}")


def write(env, target):
    # configure_file() leaves it 0644 in the build tree (installed 0755)
    r = subprocess.run(["/bin/sh", SCRIPT, target], env=env, capture_output=True, text=True, timeout=30)
    vt.log(f"$ vmpressured-metrics {target} → {r.returncode} {r.stderr.strip()}")
    return r


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class NodeExporter:
    def __init__(self, textdir):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/metrics"
        argv = vb.NOBODY + [NODE_EXPORTER, f"--web.listen-address=127.0.0.1:{self.port}",
                            "--collector.disable-defaults", "--collector.textfile",
                            f"--collector.textfile.directory={textdir}", "--web.disable-exporter-metrics"]
        vt.log("starting " + " ".join(argv))
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, text=True)
        vt.on_cleanup(f"node_exporter pid {self.proc.pid}", self.stop)
        if not vt.poll_until(lambda: self._try(), 15, 0.1):
            self.stop()
            vt.fail(f"node_exporter did not answer on {self.url}: {self.proc.stderr.read()[-2000:]}")

    def _try(self):
        try:
            return self.scrape()
        except OSError:
            return None

    def scrape(self):
        with urllib.request.urlopen(self.url, timeout=5) as r:
            return r.read().decode()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=10)


def ours(text):
    """The vmpressured_ families of a scrape, parsed strictly."""
    lines = [l for l in text.splitlines()
             if l.startswith(("# HELP vmpressured_", "# TYPE vmpressured_", "vmpressured_"))]
    try:
        return promtext.parse("\n".join(lines) + "\n")
    except ValueError as e:
        vt.fail(f"node_exporter served vmpressured_ series that do not parse: {e}\n{text[-3000:]}")


def textfile_error(text):
    vals = [l.split()[-1] for l in text.splitlines() if l.startswith("node_textfile_scrape_error")]
    return vals[0] if vals else "missing"


def samples(fams):
    """{(name, labels): value}; le as a number: node_exporter re-renders
    the bounds in Go's shortest form (0.00005 is served as 5e-05)."""
    def norm(labels):
        return tuple(sorted((k, float(v.replace("Inf", "inf")) if k == "le" else v) for k, v in labels.items()))
    return {(n, norm(l)): v for f in fams.values() for n, l, v in f.samples}


def check_served(ne, prom):
    text = ne.scrape()
    vt.check(textfile_error(text) == "0", f"node_textfile_scrape_error {textfile_error(text)}:\n{text[-3000:]}")
    vt.check(f'node_textfile_mtime_seconds{{file="{prom}"}}' in text
             or 'node_textfile_mtime_seconds{file="vmpressured.prom"}' in text, "no mtime for vmpressured.prom")
    served = samples(ours(text))
    written = samples(promtext.parse(open(prom).read()))
    vt.check(served == written, f"served != written: only served {set(served) - set(written)}, "
                                f"only written {set(written) - set(served)}")
    return served


def check_atomic(ne, env, prom):
    """40 rewrites under a scraping thread: never a partial file."""
    stop = threading.Event()
    bad, n = [], [0]

    def scraper():
        while not stop.is_set():
            t = ne.scrape()
            n[0] += 1
            if textfile_error(t) != "0" or "vmpressured_up 1" not in t or "vmpressured_info{" not in t:
                bad.append(t[-1500:])

    th = threading.Thread(target=scraper, daemon=True)
    th.start()
    replaced = 0
    for _ in range(40):
        with open(prom) as old:       # held open: its inode cannot be reused by the next file
            vt.check(write(env, prom).returncode == 0, "a rewrite failed")
            replaced += os.fstat(old.fileno()).st_ino != os.stat(prom).st_ino
    time.sleep(0.2)
    stop.set()
    th.join(timeout=10)
    vt.log(f"atomic: {n[0]} scrapes during 40 writes, {len(bad)} incomplete, {replaced} files replaced")
    vt.check(n[0] >= 10, f"only {n[0]} scrapes during the rewrites: the check saw nothing")
    vt.check(not bad, f"{len(bad)} of {n[0]} scrapes saw a partial file, the first:\n{bad[:1]}")
    vt.check(replaced == 40, f"only {replaced} of 40 writes replaced the file, the others wrote it in place")


def check_stopped_mid_write(d, env, textdir, prom):
    """SIGTERM to the script's process group while its temporary file is
    open: vmpressurectl waits for the stopped daemon's answer."""
    os.kill(d.proc.pid, signal.SIGSTOP)
    try:
        p = subprocess.Popen(["/bin/sh", SCRIPT, prom], env=env, start_new_session=True,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        temps = []
        deadline = time.monotonic() + 10
        while not temps and time.monotonic() < deadline and p.poll() is None:
            temps = [n for n in os.listdir(textdir) if n.startswith(".vmpressured.prom.")]
            time.sleep(0.01)
        vt.check(temps and p.poll() is None, f"no temporary file while vmpressurectl waits: {os.listdir(textdir)}, "
                                             f"script status {p.poll()}")
        time.sleep(0.2)    # the script is inside "vmpressurectl metrics", not before it
        os.killpg(p.pid, signal.SIGTERM)
        rc = p.wait(timeout=10)
    finally:
        os.kill(d.proc.pid, signal.SIGCONT)
    left = os.listdir(textdir)
    vt.log(f"stopped mid-write: temporary {temps[0]}, status {rc}, the directory holds {left}")
    vt.check(rc == -signal.SIGTERM, f"stopped mid-write: status {rc} (not SIGTERM) {p.stderr.read().strip()}")
    vt.check(left == ["vmpressured.prom"], f"stopped mid-write: the directory holds {left}")


def main():
    vt.need_root_and_cgroups()
    vb.need_bus()
    need_tools()
    check_units()
    check_rules()

    tmp = vt.make_tempdir()
    os.chmod(tmp, 0o755)
    textdir = os.path.join(tmp, "textfile")
    os.mkdir(textdir, 0o755)
    bindir = os.path.join(tmp, "bin")
    os.mkdir(bindir)
    os.symlink(CTL, os.path.join(bindir, "vmpressurectl"))
    prom = os.path.join(textdir, "vmpressured.prom")

    vb.SystemBus().start()     # exports DBUS_SYSTEM_BUS_ADDRESS
    env = dict(os.environ, PATH=bindir + ":" + os.environ.get("PATH", "/usr/bin:/bin"))
    d = vt.Daemon(config=vb.FAST_LEVELS).start()
    vb.wait_name(vb.NAME)
    r = write(env, prom)
    vt.check(r.returncode == 0 and r.stderr == "", f"first write: {r.returncode} {r.stderr}")
    vt.check(os.listdir(textdir) == ["vmpressured.prom"], f"the directory holds {os.listdir(textdir)}")
    mode = stat.S_IMODE(os.stat(prom).st_mode)
    vt.check(mode == 0o644, f"vmpressured.prom mode {mode:o}")

    ne = NodeExporter(textdir)
    served = check_served(ne, prom)
    names = {k[0] for k in served}
    vt.log(f"served: {len(served)} vmpressured_ samples, {len(names)} names")
    vt.check(served.get(("vmpressured_up", ())) == 1, "vmpressured_up is not 1")
    vt.check(any(k[0] == "vmpressured_info" for k in served), "no vmpressured_info")
    vt.check(any(k[0] == "vmpressured_level" and ("scope", "-.slice") in k[1] for k in served),
             "no vmpressured_level for -.slice")

    low = ("vmpressured_simulated_level_events_total", (("level", "low"), ("scope", "-.slice")))
    before = served.get(low)
    r = subprocess.run([CTL, "simulate", "low"], capture_output=True, text=True, timeout=30)
    vt.check(r.returncode == 0, f"vmpressurectl simulate low: {r.returncode} {r.stderr}")
    d.wait_for(lambda e: vt.is_level("-.slice", "low")(e) and "simulated" in e, 10, "the simulated LOW")
    vt.check(write(env, prom).returncode == 0, "write after the simulation")
    after = check_served(ne, prom).get(low)
    vt.check(before == 0 and after == 1, f"simulated LOW of -.slice served as {before} → {after}")

    check_atomic(ne, env, prom)
    vt.check(os.listdir(textdir) == ["vmpressured.prom"], f"after the rewrites: {os.listdir(textdir)}")

    check_stopped_mid_write(d, env, textdir, prom)

    d.stop()
    r = write(env, prom)
    vt.check(r.returncode == 0 and "writing vmpressured_up 0" in r.stderr, f"without the daemon: {r.returncode} "
                                                                           f"{r.stderr}")
    served = check_served(ne, prom)
    vt.check(served == {("vmpressured_up", ()): 0}, f"without the daemon node_exporter serves {served}")

    r = write(env, os.path.join(tmp, "missing", "vmpressured.prom"))
    vt.check(r.returncode != 0, "a write into a missing directory succeeded")
    vt.check(os.listdir(textdir) == ["vmpressured.prom"], f"after the failed write: {os.listdir(textdir)}")
    ne.stop()


vt.run(main)
