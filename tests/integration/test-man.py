#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Every page in man/ renders without a warning:
MANWIDTH=80 man --warnings -l PAGE >/dev/null prints nothing."""

import glob
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vmptest as vt    # noqa: E402


def main():
    if not shutil.which("man") or not shutil.which("groff"):
        vt.skip_or_fail("man-db and groff-base are not installed (tools/dev deps installs them)")
    pages = sorted(glob.glob(os.path.join(os.environ["VMP_SOURCE_ROOT"], "man", "*.[1-8]")))
    vt.check(len(pages) >= 6, f"only {len(pages)} pages in man/")
    bad = []
    for p in pages:
        r = subprocess.run(["man", "--warnings", "-l", p], env=dict(os.environ, MANWIDTH="80", MAN_KEEP_FORMATTING="0"),
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=60)
        vt.log(f"{os.path.basename(p)}: exit {r.returncode}, {len(r.stderr.splitlines())} warning lines")
        if r.returncode != 0 or r.stderr:
            bad.append(f"{p}: exit {r.returncode}\n{r.stderr}")
    vt.check(not bad, "pages with warnings:\n" + "\n".join(bad))


vt.run(main)
