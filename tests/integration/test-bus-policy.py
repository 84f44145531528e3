#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The shipped bus policy on a real dbus-daemon, the daemon's own check, and
what the daemon keeps of its privileges.

User nobody: Reload() refused, neither name can be owned; properties,
Introspect, ListPolicies and Subscribe work, and the signals arrive (real
memcg pressure). Then a test policy lets everyone send Reload(): the daemon
itself still refuses nobody (euid check), and root's Reload() applies a
changed DryRun= with PropertiesChanged."""

import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vmptest as vt    # noqa: E402
import vmpbus as vb     # noqa: E402

ACCESS_DENIED = "org.freedesktop.DBus.Error.AccessDenied"


def gdbus_as_nobody(dest, path, method, *args):
    """gdbus prints the D-Bus error name and message (busctl only strerror())."""
    cmd = vb.NOBODY + ["gdbus", "call", "--system", "--dest", dest, "--object-path", path,
                       "--method", method] + [str(a) for a in args]
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=10)


def check_refused(r, what, needle):
    vt.check(r.returncode != 0, f"{what} succeeded as nobody: {r.stdout.strip()}")
    vt.check(ACCESS_DENIED in r.stderr and needle in r.stderr,
             f"{what} as nobody failed for another reason: {r.stderr.strip()}")
    vt.log(f"{what} as nobody refused: {r.stderr.strip()[:200]}")


def nobody_is_refused():
    # Refused by the bus itself: the shipped policy.
    check_refused(gdbus_as_nobody(vb.NAME, vb.PATH, vb.IFACE + ".Reload"), "Reload()", vb.denied_send_message())
    for name in (vb.NAME, vb.LMM_NAME):
        r = gdbus_as_nobody("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus.RequestName",
                            name, 4)    # 4: DO_NOT_QUEUE
        check_refused(r, f"RequestName({name})", vb.denied_own_message())


def nobody_may_read():
    vt.check(vb.get_property("Level", user="nobody") in ("none", "low", "medium", "oom"), "Level as nobody")
    vt.check(vb.get_property("Source", user="nobody") == "memcg", "Source as nobody")
    vb.busctl("introspect", vb.NAME, vb.PATH, user="nobody")
    vb.busctl("introspect", vb.NAME, vb.LMM_PATH, user="nobody")
    r = vb.busctl("--json=short", "call", vb.NAME, vb.PATH, vb.IFACE, "ListPolicies", user="nobody")
    vt.check('"type":"a(sss)"' in r.stdout.replace(" ", ""), f"ListPolicies as nobody: {r.stdout.strip()}")
    r = vb.busctl("--json=short", "call", vb.NAME, vb.PATH, "org.freedesktop.DBus.Properties", "GetAll", "s",
                  vb.IFACE, user="nobody")
    vt.check('"Version"' in r.stdout, f"GetAll as nobody: {r.stdout.strip()[:200]}")


def nobody_receives_signals(d, memcg, data):
    cl = vb.Client("--subscribe=low", user="nobody")
    vt.check(not [e for e in cl.snapshot() if e["type"] == "error"],
             f"Subscribe() as nobody failed: {cl.snapshot()}")
    load = vt.Load(memcg, "stream", data.path).start()
    d.wait_for(vt.is_level(memcg.name, "low"), 20, f"LOW on {memcg.name}")
    e = cl.wait_for(lambda e: e["type"] == "signal" and e.get("scope") == memcg.name, 5,
                    "a signal for the watched memcg as nobody")
    vt.check(e["member"] == "Low", f"nobody got {e['member']} first, the daemon said Low")
    load.stop()
    cl.stop()


def daemon_checks_euid(bus, d):
    # Punch a hole for everyone: now only the daemon's own check stands.
    bus.set_extra_policy('<policy context="default">'
                         f'<allow send_destination="{vb.NAME}" send_interface="{vb.IFACE}" send_member="Reload"/>'
                         '</policy>')
    bus.reload()
    r = gdbus_as_nobody(vb.NAME, vb.PATH, vb.IFACE + ".Reload")
    check_refused(r, "Reload() with a permissive bus policy", "Only root may do this")
    vt.check("euid is 65534" in r.stderr, f"the refusal does not name the euid: {r.stderr.strip()}")

    mon = vb.Monitor()
    with open(d.config_path, "a") as f:
        f.write("[Daemon]\nDryRun=yes\n")
    vb.busctl("call", vb.NAME, vb.PATH, vb.IFACE, "Reload")
    vt.check(vb.get_property("DryRun") is True, "DryRun is not true after Reload()")
    ok = vt.poll_until(lambda: [m for m in mon.snapshot() if m.get("member") == "PropertiesChanged"
                                and "DryRun" in m["payload"]["data"][1]], 3)
    vt.check(ok, "no PropertiesChanged for DryRun after Reload()")
    mon.stop()

    # A broken file: refused with a clear error, the running configuration stays.
    with open(d.config_path, "a") as f:
        f.write("Bogus=1\n")
    r = vb.busctl("call", vb.NAME, vb.PATH, vb.IFACE, "Reload", check_ok=False)
    vt.check(r.returncode != 0 and "previous one stays" in r.stderr,
             f"Reload() of a broken file: {r.returncode} {r.stderr.strip()}")
    vt.check(vb.get_property("DryRun") is True, "a failed Reload() changed DryRun")


CAP_KILL, CAP_IPC_LOCK = 5, 14


def least_privilege(d):
    """After start-up: CAP_KILL and CAP_IPC_LOCK only, everywhere; no_new_privs;
    still uid 0; all memory locked."""
    st = vb.proc_status(d.pid)
    keep = (1 << CAP_KILL) | (1 << CAP_IPC_LOCK)
    vt.log(f"daemon: CapEff {st['CapEff']:#x} CapPrm {st['CapPrm']:#x} CapBnd {st['CapBnd']:#x} "
           f"NoNewPrivs {st['NoNewPrivs']} VmRSS {st['VmRSS']} KiB VmLck {st['VmLck']} KiB")
    for k in ("CapEff", "CapPrm", "CapBnd"):
        vt.check(st[k] == keep, f"{k} is {st[k]:#x}, expected CAP_KILL|CAP_IPC_LOCK ({keep:#x})")
    vt.check(st["CapInh"] == 0 and st["CapAmb"] == 0, "inheritable or ambient capabilities left")
    vt.check(st["NoNewPrivs"] == 1, "no_new_privs is not set")
    vt.check(os.stat(f"/proc/{d.pid}").st_uid == 0, "the daemon is not uid 0")
    if os.environ.get("VMP_SANITIZE", "none") == "none":
        vt.check(st["VmLck"] >= st["VmRSS"] - 64, f"memory not locked: VmLck {st['VmLck']} < VmRSS {st['VmRSS']}")
    else:
        vt.log(f"-Db_sanitize={os.environ['VMP_SANITIZE']}: not checking VmLck (ASan's shadow cannot be locked)")


def main():
    vt.need_root_and_cgroups()
    vb.need_bus()
    bus = vb.SystemBus().start()
    with vt.Memcg("bus-pol", limit_mib=128) as memcg, vt.DataFile("bus-pol", 256) as data:
        d = vt.Daemon(f"--watch={memcg.rel}", config=vb.FAST_LEVELS).start()
        vb.wait_name(vb.NAME)
        vb.wait_name(vb.LMM_NAME)
        least_privilege(d)
        nobody_is_refused()
        nobody_may_read()
        nobody_receives_signals(d, memcg, data)
        daemon_checks_euid(bus, d)
        time.sleep(0.2)
        vt.check(d.alive(), "the daemon died")
        d.stop()


vt.run(main)
