#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Configuration errors: a broken vmpressured.conf makes the daemon refuse to
start with exit status 1 and one "FILE:LINE: …" message per bad line on stderr,
with and without --check-config; a good file passes --check-config with 0; and
no input, however broken (random bytes, NULs, huge lines, a file over 1 MiB,
byte-flipped good files), crashes it: the exit status is 0 or 1, never a signal.

Needs no root and no cgroups: it runs everywhere (never skipped)."""

import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vmptest as vt  # noqa: E402

GOOD = """# every key, valid values
[Daemon]
Source=auto
Watch=system.slice/foo.service
LogLevel=info
DryRun=yes

[Levels]
Window=256
Medium=60
OOM=99
HoldSec=1
QuietSec=2
RepeatSec=1
HeadroomFloor=2%

[PSI]
WindowSec=2
LowStallMSec=100
MediumStallMSec=300
OOMStallMSec=500

[Poll]
IdleSec=2
BusyMSec=100
"""

# (name, text, line that must be named on stderr or None: only exit status 1)
BROKEN = [
    ("bad-value-and-unknown-key", "[Levels]\nQuietSec=abc\nNoSuchKey=1\n", [2, 3]),
    ("unterminated-section", "[Levels\nQuietSec=2\n", [1]),
    ("key-without-name", "[Levels]\n=5\n", [2]),
    ("key-outside-section", "QuietSec=1\n", [1]),
    ("unknown-section", "[NoSuchSection]\nA=1\n", [1]),
    ("overflow", "[Levels]\nQuietSec=99999999999999999999999\n", [2]),
    ("negative", "[Levels]\nHoldSec=-1\n", [2]),
    ("window-zero", "[Levels]\nWindow=0\n", [2]),
    ("bad-source", "[Daemon]\nSource=bogus\n", [2]),
    ("bad-watch", "[Daemon]\nWatch=../etc\n", [2]),
    ("bad-bool", "[Daemon]\nDryRun=perhaps\n", [2]),
    ("duplicate-key", "[Levels]\nQuietSec=2\nQuietSec=3\n", [3]),
    ("nul-byte", "[Levels]\nQuiet\0Sec=2\n", [2]),
    ("huge-line", "[Levels]\nQuietSec=" + "9" * 100000 + "\n", [2]),
    ("medium-above-oom", "[Levels]\nMedium=90\nOOM=50\n", None),
    ("not-utf8", "[Levels]\nQuietSec=\xff\xfe\n", [2]),
]


def write(d, name, data):
    path = os.path.join(d, name + ".conf")
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode("utf-8", "surrogateescape"))
    return path


def run(path, *extra):
    r = vt.run_daemon_once([f"--config={path}", *extra])
    vt.check(r.returncode >= 0, f"{path} {' '.join(extra)}: killed by signal {-r.returncode} "
             f"(stderr: {r.stderr[-2000:]!r})")
    return r


def check_broken(d):
    for name, text, lines in BROKEN:
        path = write(d, name, text.encode("latin-1") if name == "not-utf8" else text)
        for extra in (("--check-config",), ("--print-events",)):
            r = run(path, *extra)
            err = r.stderr.decode(errors="replace")
            vt.check(r.returncode == 1, f"{name} {extra[0]}: exit status {r.returncode}, expected 1; "
                     f"stderr: {err[-500:]!r}")
            vt.check(b"ready" not in r.stdout, f"{name}: the daemon started with a broken config")
            for line in lines or []:
                vt.check(f"{path}:{line}:" in err, f"{name} {extra[0]}: stderr does not name {path}:{line}: "
                         f"{err[-500:]!r}")
            vt.check(lines is not None or path in err, f"{name}: stderr does not name {path}: {err[-500:]!r}")
        vt.log(f"{name}: exit 1, {err.splitlines()[0][:100] if err else '(no stderr)'}")


def check_good(d):
    path = write(d, "good", GOOD)
    r = run(path, "--check-config")
    vt.check(r.returncode == 0, f"good config: --check-config exit status {r.returncode}: "
             f"{r.stderr.decode(errors='replace')[-500:]!r}")
    empty = write(d, "empty", "")
    r = run(empty, "--check-config")
    vt.check(r.returncode == 0, f"empty config (all defaults): exit status {r.returncode}")
    r = run(os.path.join(d, "does-not-exist.conf"), "--check-config")
    vt.check(r.returncode == 1, f"an explicit --config= that does not exist: exit status {r.returncode}")
    r = run(d, "--check-config")
    vt.check(r.returncode == 1, f"a directory as --config=: exit status {r.returncode}")
    big = write(d, "big", "# " + "x" * (1 << 20) + "\n")
    r = run(big, "--check-config")
    vt.check(r.returncode == 1, f"a config over 1 MiB: exit status {r.returncode}")


def check_garbage(d, rng):
    """Random bytes must be rejected (1); byte-flipped good files may be fine (0) or not (1)."""
    statuses = {0: 0, 1: 0}
    for i in range(150):
        data = bytes(rng.getrandbits(8) for _ in range(rng.randint(16, 4096)))
        path = write(d, f"random-{i}", data)
        r = run(path, "--check-config")
        vt.check(r.returncode == 1, f"random bytes ({path}, kept): exit status {r.returncode}, expected 1")
        os.unlink(path)
    good = bytearray(GOOD.encode())
    for i in range(150):
        data = bytearray(good)
        for _ in range(rng.randint(1, 8)):
            pos = rng.randrange(len(data))
            op = rng.randrange(3)
            if op == 0:
                data[pos] = rng.getrandbits(8)
            elif op == 1:
                del data[pos]
            else:
                data[pos:pos] = bytes([rng.choice(b"[]=#;\n\0\xff 9-%")])
        path = write(d, f"mutated-{i}", bytes(data))
        r = run(path, "--check-config")
        vt.check(r.returncode in (0, 1), f"mutated config ({path}, kept): exit status {r.returncode}")
        statuses[r.returncode] += 1
        os.unlink(path)
    vt.log(f"garbage: 150 random files rejected; 150 mutated good files: {statuses[0]} accepted, "
           f"{statuses[1]} rejected, none crashed")


def main():
    # Needs only the binary: no root, no cgroups, so never a skip.
    vt.check(os.access(os.environ.get("VMPRESSURED", ""), os.X_OK), "$VMPRESSURED is not set to the binary")
    d = vt.make_tempdir()
    check_broken(d)
    check_good(d)
    seed = int(os.environ.get("VMP_TEST_SEED", "20261201"))
    vt.log(f"garbage seed {seed} (VMP_TEST_SEED= to change)")
    check_garbage(d, random.Random(seed))


vt.run(main)
