#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A policy directory that turns bad under the running daemon,
each case followed by Reload() on the bus and by SIGHUP:

  a) chmod 000 (the daemon runs as root but keeps only CAP_KILL and
     CAP_IPC_LOCK, so it gets EACCES like anyone);
  b) a regular file of random bytes where the directory was (ENOTDIR);
  c) the directory full of garbage: *.policy files of random bytes, one
     of 1 MiB (the limit is 64 KiB), a two-link symlink loop, a symlink to
     itself, a dangling symlink, a directory and a FIFO named *.policy.

Asserted after each: the daemon is alive; Reload() fails with
org.freedesktop.vmpressure1.Error.InvalidPolicy naming the problem (and, for
c, the files); the Policies property and ListPolicies still show the two
good policies from before; the SIGHUP reload logs that it keeps them; a
Simulate() is still signalled. Finally the directory is good again with a
third policy: Reload() succeeds and the third is in force."""

import os
import shutil
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vmptest as vt    # noqa: E402
import vmpbus as vb     # noqa: E402
import vmpfault as vf   # noqa: E402

PREFIX = f"vmp-fp-{os.getpid()}"
GOOD = "[Policy]\nDescription=fault test {u}\n\n[OOM]\nKill=no\n"
INVALID_POLICY = "org.freedesktop.vmpressure1.Error.InvalidPolicy"


def unit(u):
    return f"{PREFIX}-{u}.service"


def write_good(pdir, u):
    with open(os.path.join(pdir, f"{unit(u)}.policy"), "w") as f:
        f.write(GOOD.format(u=u))


class Checks:
    def __init__(self, d, mgr, cl, pdir, good):
        self.d, self.mgr, self.cl, self.pdir, self.good = d, mgr, cl, pdir, good
        self.hup = vf.SighupPacer(d)

    def policies(self):
        listed = sorted(str(p[0]) for p in self.mgr.iface.ListPolicies() if str(p[2]) != "broken")
        return sorted(str(x) for x in self.mgr.get("Policies")), listed

    def bad_reload(self, case, needles):
        err = self.mgr.reload()
        vt.check(err is not None, f"{case}: Reload() succeeded")
        name, msg = err
        vt.log(f"{case}: Reload() -> {name}: {msg[:600]!r}")
        vt.check(name == INVALID_POLICY, f"{case}: Reload() failed with {name}, expected {INVALID_POLICY}")
        for n in needles:
            vt.check(n in msg, f"{case}: Reload()'s error does not mention {n!r}: {msg!r}")
        self.after(case, "Reload()")

        mark = len(self.d.stderr_text())
        self.hup.hup()
        kept = vt.poll_until(lambda: "Policy reload had problems; keeping the 2 policies"
                             in self.d.stderr_text()[mark:], 3)
        vt.check(kept, f"{case}: SIGHUP did not log that the 2 policies are kept: "
                       f"{self.d.stderr_text()[mark:][-1000:]!r}")
        self.after(case, "SIGHUP")
        vf.still_signals(self.mgr, self.cl, what=f"after {case}")

    def after(self, case, how):
        time.sleep(0.05)
        vt.check(self.d.alive(), f"{case}: the daemon died after {how}")
        prop, listed = self.policies()
        vt.check(prop == self.good and listed == self.good,
                 f"{case}: after {how} Policies={prop}, ListPolicies={listed}; expected {self.good}")


def garbage(pdir):
    names = []
    for i in range(4):
        n = f"{unit(f'rand{i}')}.policy"
        with open(os.path.join(pdir, n), "wb") as f:
            f.write(os.urandom(4096 << i))
        names.append(n)
    n = f"{unit('huge')}.policy"
    with open(os.path.join(pdir, n), "wb") as f:
        f.write(b"[Policy]\n" + b"#" * (1 << 20) + b"\n")
    names.append(n)
    os.symlink(f"{unit('loopb')}.policy", os.path.join(pdir, f"{unit('loopa')}.policy"))
    os.symlink(f"{unit('loopa')}.policy", os.path.join(pdir, f"{unit('loopb')}.policy"))
    os.symlink(f"{unit('self')}.policy", os.path.join(pdir, f"{unit('self')}.policy"))
    os.symlink("/nonexistent/vmp", os.path.join(pdir, f"{unit('dangling')}.policy"))
    os.mkdir(os.path.join(pdir, f"{unit('dir')}.policy"))
    os.mkfifo(os.path.join(pdir, f"{unit('fifo')}.policy"))
    return names + [f"{unit(u)}.policy" for u in ("loopa", "loopb", "self", "dangling", "dir", "fifo")]


def main():
    vt.need_root_and_cgroups()
    vb.need_bus()
    vb.SystemBus().start()
    top = vt.make_tempdir()
    pdir = os.path.join(top, "policies")
    os.mkdir(pdir)
    write_good(pdir, "a")
    write_good(pdir, "b")
    good = sorted(unit(u) for u in "ab")

    d = vt.Daemon(f"--policy-dir={pdir}", config=vb.FAST_LEVELS).start()
    vb.wait_name(vb.NAME)
    cl = vb.Client()
    mgr = vf.Manager()
    c = Checks(d, mgr, cl, pdir, good)
    vt.check(c.policies() == (good, good), f"policies at start: {c.policies()}")
    before = vf.figures(d.pid)

    # a) unreadable. Whatever happens, the mode comes back.
    restore = vt.on_cleanup(f"chmod 755 {pdir}", lambda: os.chmod(pdir, 0o755))
    os.chmod(pdir, 0)
    c.bad_reload("a) chmod 000", [pdir, "Permission denied"])
    os.chmod(pdir, 0o755)
    vt.cancel_cleanup(restore)
    vt.check(mgr.reload() is None, "Reload() after the mode came back failed")

    # b) a file of random bytes instead of the directory.
    saved = pdir + ".saved"
    os.rename(pdir, saved)
    back = vt.on_cleanup(f"{pdir} back", lambda: (os.path.isfile(pdir) and os.unlink(pdir),
                                                  os.path.isdir(saved) and os.rename(saved, pdir)))
    with open(pdir, "wb") as f:
        f.write(os.urandom(8192))
    c.bad_reload("b) a file instead of the directory", [pdir, "Not a directory"])
    os.unlink(pdir)
    os.rename(saved, pdir)
    vt.cancel_cleanup(back)
    vt.check(mgr.reload() is None, "Reload() after the directory came back failed")

    # c) garbage next to the good files.
    bad = garbage(pdir)
    c.bad_reload("c) garbage in the directory", [f"{unit('huge')}.policy"])
    err = mgr.reload()
    named = [n for n in bad if n in err[1]]
    vt.log(f"c) the error names {len(named)} of the {len(bad)} bad entries "
           f"(it is cut at 2 KiB / the diagnostics' line limit)")
    vt.check(len(named) >= 3, f"c) Reload()'s error names only {named}")

    # Good again, with a third policy: taken.
    for n in bad:
        p = os.path.join(pdir, n)
        if os.path.isdir(p) and not os.path.islink(p):
            os.rmdir(p)
        else:
            os.unlink(p)
    write_good(pdir, "c")
    err = mgr.reload()
    vt.check(err is None, f"Reload() of a good directory failed: {err}")
    good3 = sorted(unit(u) for u in "abc")
    vt.check(c.policies() == (good3, good3), f"after the good reload: {c.policies()}, expected {good3}")
    vf.still_signals(mgr, cl, what="after the good reload")
    after = vf.figures(d.pid)
    vf.check_bounded(d.pid, before, after, "the bad reloads")
    mgr.close()
    cl.stop()
    d.stop()
    shutil.rmtree(top, ignore_errors=True)


vt.run(main)
