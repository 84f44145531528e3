#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""vmpressure-notify against a real notification server stand-in
(python3-dbusmock's notification_daemon template) on a private session bus,
with the real daemon on a private system bus enforcing dbus/ ($VMP_TEST_BUS).

  a) a real kill: unit A (a fake unit, 64 MiB memcg with oom_kill_disable=1,
     policy [OOM] Kill=yes) gets an anonymous hog of twice its limit; the
     daemon kills it and the server records a Notify whose body names the
     unit, the pid and the comm, what was freed and why, urgency critical;
     and one OOM notification for the unit.
  b) the rate limit: an agent with --burst=2 --interval=3s --no-oom; unit B
     (KillTarget=unit) holds 5 sleepers and a simulated OOM of the system
     kills them (N >= 3 Killed signals): exactly 2 notifications. After the
     interval, one more kill: its notification says that N - 2 were not
     shown.
  c) no notification server: the server is stopped; two rounds of kills;
     the agents stay alive and each says so once (one line), nothing more.
     The server is back: the next kill is notified again.
  d) the system bus restarts (SIGKILL, start): the agent reconnects and the
     next kill is notified.

Every process and cgroup is ours and removed at the end."""

import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vmptest as vt    # noqa: E402
import vmpbus as vb     # noqa: E402
import vmpunit as vu    # noqa: E402

NOTIFY = os.environ.get("VMPRESSURE_NOTIFY")
PREFIX = f"vmp-nt-{os.getpid()}"
NO_SERVER = "No notification server answers"
# After a kill the daemon kills nothing for 1 s (KILL_PAUSE_DEFAULT_USEC),
# so that the freed memory shows first: a round of kills waits longer.
KILL_PAUSE_SEC = 1.2


class Agent:
    """vmpressure-notify ARGS with both buses of the test; stderr to a file."""

    def __init__(self, *args):
        self.args = [str(a) for a in args]
        self.err_path = os.path.join(vt.make_tempdir(), "stderr")
        self.proc = None

    def start(self):
        self.err = open(self.err_path, "w")
        self.proc = subprocess.Popen([NOTIFY] + self.args, stdin=subprocess.DEVNULL, stdout=self.err,
                                     stderr=self.err)
        self._entry = vt.on_cleanup(f"vmpressure-notify pid {self.proc.pid}", self.stop)
        vt.check(vt.poll_until(lambda: "Listening for vmpressured" in self.stderr(), 10),
                 f"vmpressure-notify {' '.join(self.args)} did not start: {self.stderr()!r}")
        vt.log(f"vmpressure-notify {' '.join(self.args)} pid {self.proc.pid}")
        return self

    def stderr(self):
        with open(self.err_path) as f:
            return f.read()

    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        vt.cancel_cleanup(self._entry)
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


def wait_calls(server, n, timeout, what):
    calls = vt.poll_until(lambda: (lambda c: c if len(c) >= n else None)(server.notify_calls()), timeout, 0.1)
    vt.check(calls, f"{what}: the server got {len(server.notify_calls())} Notify calls, expected {n}: "
                    f"{server.notify_calls()}")
    return calls


def part_a(d, a, server):
    vt.log("=== a) a real kill of a marked hog in unit A")
    hog = vt.Load(a, "anon", 128, 8, 20).start()
    ev = d.wait_for(lambda e: e["type"] == "killed" and e.get("unit") == a.unit, 15, f"a kill in {a.unit}")
    vt.check(ev.get("pid") == str(hog.pid), f"the daemon killed pid {ev.get('pid')}, not the hog {hog.pid}")
    vt.poll_until(lambda: hog.proc.poll() is not None, 5)
    calls = vt.poll_until(lambda: [c for c in server.notify_calls() if c["summary"].startswith("Out of memory")],
                          10, 0.1)
    vt.check(calls, f"no Notify for the kill: {server.notify_calls()}")
    c = calls[0]
    vt.log(f"Notify: {c}")
    body = c["body"]
    vt.check(a.unit in body, f"the body does not name the unit {a.unit}: {body!r}")
    vt.check(f"pid {hog.pid}" in body and "vmp-load" in body, f"the body does not name pid {hog.pid} vmp-load: {body!r}")
    vt.check("vmp-load" in c["summary"], f"the summary does not name the comm: {c['summary']!r}")
    vt.check("MiB" in body or "KiB" in body, f"the body does not say what was freed: {body!r}")
    reason = ev.get("reason", "")
    vt.check(reason and reason.split()[0] in body, f"the body does not say why ({reason!r}): {body!r}")
    vt.check(c["app"] == "vmpressured" and c["hints"].get("urgency") == 2,
             f"app {c['app']!r}, hints {c['hints']}: expected vmpressured, urgency 2")
    oom = vt.poll_until(lambda: [x for x in server.notify_calls() if a.unit in x["body"]
                                 and x["summary"] == "Memory almost exhausted"], 5, 0.1)
    vt.check(oom and len(oom) == 1, f"expected one OOM notification for {a.unit}, got {oom}")
    a.kill_all()


def kill_round(d, u, n, comm, at_least=1):
    """n sleepers in unit u, killed at a simulated OOM of the system (u's
    policy: KillTarget=unit): one Killed signal per kill. Returns how many
    the daemon killed (at least at_least; a sleeper it does not find in
    its one batch survives until stop())."""
    time.sleep(KILL_PAUSE_SEC)
    sl = vu.Sleepers([u.path2], n, comm=comm, name=f"{comm}").start()
    killed = lambda: [e for e in d.find(lambda e: e["type"] == "killed" and e.get("comm") == comm)]
    vu.simulate_oom(d)
    vt.poll_until(lambda: len(killed()) >= n, 3)
    got = len(killed())
    vt.check(got >= at_least, f"the daemon killed {got} of {n} sleepers in {u.unit}, expected {at_least}")
    sl.stop()
    return got


def part_b(d, b, server):
    vt.log("=== b) the rate limit: 5 kills at once, --burst=2")
    ag = Agent("--burst=2", "--interval=3", "--no-oom").start()
    base = len(server.notify_calls())
    n = kill_round(d, b, 5, "vmpnt-b1", at_least=3)
    # The bucket was full until this burst: its next token comes 3 s after it.
    t0 = time.monotonic()
    time.sleep(1.0)
    got = server.notify_calls()[base:]
    vt.check(len(got) == 2 and all("vmpnt-b1" in c["summary"] for c in got),
             f"{n} kills with --burst=2: expected 2 notifications, got {len(got)}: {got}")
    time.sleep(max(0.0, 3.3 - KILL_PAUSE_SEC - (time.monotonic() - t0)))
    kill_round(d, b, 1, "vmpnt-b2")
    calls = wait_calls(server, base + 3, 5, "the kill after the interval")
    last = calls[base + 2]
    vt.check("vmpnt-b2" in last["summary"] and f"{n - 2} more not shown" in last["body"],
             f"the next notification does not say {n - 2} were held back: {last}")
    vt.log(f"rate limit: 2 of {n} shown, then {last['body']!r}")
    return ag


def part_c(d, b, server, agents):
    vt.log("=== c) no notification server")
    server.stop()
    for i in range(2):
        kill_round(d, b, 2, f"vmpnt-c{i}")
        time.sleep(0.5)
    time.sleep(1.0)
    for ag in agents:
        vt.check(ag.alive(), f"vmpressure-notify {ag.args} exited without a server: {ag.stderr()!r}")
        lines = [line for line in ag.stderr().splitlines() if "notification server" in line]
        vt.check(len(lines) == 1 and NO_SERVER in lines[0],
                 f"vmpressure-notify {ag.args}: expected one line saying there is no server, got {lines}")
        other = [line for line in ag.stderr().splitlines()
                 if line and "Listening" not in line and "notification server" not in line]
        vt.check(not other, f"vmpressure-notify {ag.args} said more without a server: {other}")
    vt.log("no server: both agents alive, one line each")
    server.start()
    kill_round(d, b, 1, "vmpnt-c9")
    wait_calls(server, 1, 10, "the kill once the server is back")


def part_d(bus, d, b, server, ag):
    vt.log("=== d) the system bus restarts")
    bus.kill()
    bus.start()
    vb.wait_name(vb.NAME, timeout=20)
    vt.check(vt.poll_until(lambda: "Connected to the system bus" in ag.stderr(), 15),
             f"vmpressure-notify did not reconnect: {ag.stderr()!r}")
    base = len(server.notify_calls())
    kill_round(d, b, 1, "vmpnt-d")
    calls = wait_calls(server, base + 1, 10, "the kill after the bus restart")
    vt.check(any("vmpnt-d" in c["summary"] for c in calls[base:]), f"no notification for the kill: {calls[base:]}")


def main():
    vt.need_root_and_cgroups(cgroup2=True)
    vb.need_bus()
    vb.need_gi_and_dbus()
    if not NOTIFY or not os.environ.get("VMPRESSURECTL"):
        print("FAIL: $VMPRESSURE_NOTIFY and $VMPRESSURECTL must be set (meson test sets them)", flush=True)
        os._exit(1)
    try:
        import dbusmock  # noqa: F401
    except ImportError as e:
        vt.skip_or_fail(f"python3-dbusmock is missing: {e}")
    bus = vb.SystemBus().start()
    session = vb.SessionBus().start()
    server = vb.NotificationServer(session).start()
    with vu.Slice(PREFIX), \
            vu.Unit(PREFIX, "a", limit_mib=64, oom_kill_disable=True) as a, \
            vu.Unit(PREFIX, "b", limit_mib=256) as b:
        pdir = vu.write_policies({
            a.unit: "[Policy]\nScope=unit\n\n[OOM]\nKill=yes\nKillTarget=largest\n",
            b.unit: "[OOM]\nKill=yes\nKillTarget=unit\n",
        })
        d = vt.Daemon(f"--policy-dir={pdir}", config=vb.FAST_LEVELS).start()
        vb.wait_name(vb.NAME)
        ag = Agent().start()
        part_a(d, a, server)
        # Alone in b, so that every Notify the server records is its own;
        # then one with room for every notification of c) and d).
        vt.check(ag.stop() == 0, "vmpressure-notify did not exit 0 on SIGTERM")
        limited = part_b(d, b, server)
        ag = Agent("--burst=100").start()
        part_c(d, b, server, [ag, limited])
        part_d(bus, d, b, server, ag)
        vt.check(ag.alive() and limited.alive(), "an agent exited")
        vt.check(ag.stop() == 0 and limited.stop() == 0, "an agent did not exit 0 on SIGTERM")
        d.stop()


vt.run(main)
