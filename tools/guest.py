# SPDX-License-Identifier: LGPL-2.1-or-later
"""A small Debian 12 qemu guest with systemd as PID 1, shared by bench/compare
and tests/guest/run.

  deps(packages)               apt-get install what is missing (apt-get update first)
  mirror()                     the bookworm mirror this machine's apt uses (read now, never stored)
  runner_unit(desc, script)    a oneshot unit that mounts the 9p share at /mnt/share, runs
                               python3 SCRIPT from it and powers the guest off
  image(out, packages, ...)    debootstrap --variant=minbase → OUT/guest.img, OUT/vmlinuz,
                               OUT/initrd.img; cached by a stamp of its inputs
  boot(img, share, append, timeout, kernel=None)
                               qemu (TCG, 1 GiB, 2 vCPUs, no swap) from that image (its own
                               kernel and initrd, or KERNEL alone), SHARE as 9p tag "share",
                               under the memory-pressure lock; returns the console log's path

The guest is emulated (TCG: /dev/kvm on the development machines cannot run a
stock kernel). qemu runs with -mem-prealloc -overcommit mem-lock=on and the
guest with transparent_hugepage=never: without them load speeds varied 3x
between runs. The disk is opened with snapshot=on, so every boot starts from
the same image and nothing written in the guest survives except through the
share."""

import fcntl
import glob
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import time

# Every run that makes memory pressure on this machine holds it (flock), one at a time:
# a TCG guest keeps both host cores busy and disturbs timing tests.
PRESSURE_LOCK = "/tmp/vmp-pressure.lock"


def log(*a):
    print(time.strftime("%H:%M:%S"), *a, file=sys.stderr, flush=True)


def run(*argv, **kw):
    kw.setdefault("check", True)
    return subprocess.run(argv, **kw)


def deps(packages):
    missing = [p for p in packages
               if subprocess.run(["dpkg-query", "-W", "-f=${Status}", p], capture_output=True,
                                 text=True).stdout != "install ok installed"]
    if missing:
        log("installing", " ".join(missing))
        run("apt-get", "update", "-q", stdout=subprocess.DEVNULL)
        run("apt-get", "install", "-y", "-q", "--no-install-recommends", *missing,
            env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"), stdout=subprocess.DEVNULL)


def mirror():
    """The Debian mirror this machine's apt uses, read now, never stored."""
    for f in sorted(glob.glob("/etc/apt/sources.list.d/*.sources")) + ["/etc/apt/sources.list"]:
        if not os.path.exists(f):
            continue
        text = open(f).read()
        for block in text.split("\n\n"):
            fields = dict(l.split(":", 1) for l in block.splitlines() if ":" in l and not l.startswith("#"))
            if "bookworm" in fields.get("Suites", "").split() and "URIs" in fields:
                return fields["URIs"].split()[0]
        for line in text.splitlines():
            w = line.split()
            if len(w) >= 4 and w[0] == "deb" and "bookworm" in w and "security" not in w[1]:
                return w[[i for i, x in enumerate(w) if x.startswith("http")][0]]
    sys.exit("no bookworm mirror in /etc/apt/sources.list*")


def runner_unit(description, script):
    """The unit that runs SCRIPT (a python3 file in the share) once the guest is
    up, then powers it off whatever the script did. OOMScoreAdjust=-1000: the
    kernel's OOM killer never takes the runner (its loads must be units of
    their own: systemd-run)."""
    return f"""[Unit]
Description={description}
After=multi-user.target dbus.service systemd-journald.service

[Service]
Type=oneshot
ExecStartPre=/bin/mkdir -p /mnt/share
ExecStartPre=-/sbin/modprobe 9pnet_virtio
ExecStartPre=/bin/mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 share /mnt/share
ExecStart=/usr/bin/python3 /mnt/share/{script}
ExecStopPost=/bin/systemctl --no-block poweroff
OOMScoreAdjust=-1000
TimeoutStartSec=infinity
StandardOutput=journal+console
StandardError=journal+console

[Install]
WantedBy=multi-user.target
"""


def unmount_below(root):
    """debootstrap mounts /proc (and sometimes /sys) in its target and can
    leave it mounted (seen here: /proc still mounted after "Base system
    installed successfully"); mkfs.ext4 -d would copy it (and fail on auxv).
    Deepest first."""
    root = os.path.realpath(root)
    below = [l.split()[4] for l in open("/proc/self/mountinfo")]
    below = [m for m in below if m.startswith(root + "/")]
    for m in sorted(below, key=len, reverse=True):
        subprocess.run(["umount", "-l", m], stderr=subprocess.DEVNULL)


def image(out, packages, runner, runner_name, stamp_inputs="", setup=None, files=(), hostname="vmpguest",
          size="3G", rebuild=False):
    """debootstrap --variant=minbase of PACKAGES → OUT/guest.img (ext4), with the
    kernel and initrd copied out next to it for -kernel/-initrd.

    RUNNER is the text of the unit installed and enabled as RUNNER_NAME.
    SETUP(root) may change the tree before it becomes the image. FILES are
    (path in the guest, MiB) of random data, real blocks on the guest's disk
    for page-cache loads. The image is rebuilt when the stamp of PACKAGES and
    STAMP_INPUTS changes (the caller puts in everything else it depends on);
    the debootstrapped tree (OUT/rootfs) is kept and reused while the package
    list stays the same."""
    os.makedirs(out, exist_ok=True)
    stamp = hashlib.sha256((" ".join(packages) + stamp_inputs).encode()).hexdigest()[:16]
    img = os.path.join(out, "guest.img")
    stampf = os.path.join(out, "guest.stamp")
    if not rebuild and os.path.exists(img) and os.path.exists(stampf) and open(stampf).read() == stamp:
        return img
    root = os.path.join(out, "rootfs")
    pkgf = os.path.join(out, "rootfs.packages")
    pkgs = " ".join(packages)
    if not rebuild and os.path.exists(os.path.join(root, "etc", "debian_version")) \
            and os.path.exists(os.path.join(root, "vmlinuz")) and os.path.exists(pkgf) and open(pkgf).read() == pkgs:
        log("reusing", root)
    else:
        shutil.rmtree(root, ignore_errors=True)
        if os.path.exists(pkgf):
            os.unlink(pkgf)
        log("debootstrap (about 2-4 min)")
        with open(os.path.join(out, "debootstrap.log"), "w") as f:
            run("debootstrap", "--variant=minbase", "--include=" + ",".join(packages), "bookworm", root,
                mirror(), stdout=f, stderr=subprocess.STDOUT)
        open(pkgf, "w").write(pkgs)
    if setup:
        setup(root)
    with open(os.path.join(root, "etc/systemd/system", runner_name), "w") as f:
        f.write(runner)
    run("systemctl", "--root=" + root, "enable", runner_name, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL)
    open(os.path.join(root, "etc/hostname"), "w").write(hostname + "\n")
    open(os.path.join(root, "etc/fstab"), "w").write("/dev/vda / ext4 rw,relatime 0 1\n")
    for path, mib in files:
        f = os.path.join(root, path.lstrip("/"))
        if not os.path.exists(f) or os.path.getsize(f) != mib << 20:
            run("dd", "if=/dev/urandom", "of=" + f, "bs=1M", f"count={mib}", "status=none")
    for name in ("vmlinuz", "initrd.img"):
        shutil.copyfile(os.path.realpath(os.path.join(root, name)), os.path.join(out, name))
    tmp = img + ".tmp"
    if os.path.exists(tmp):
        os.unlink(tmp)
    unmount_below(root)
    log("mkfs.ext4 -d")
    run("mkfs.ext4", "-q", "-F", "-L", "root", "-d", root, tmp, size)
    os.rename(tmp, img)
    open(stampf, "w").write(stamp)
    return img


def _pressure_lock():
    """The lock as an open descriptor, held. When this process was started
    under `flock /tmp/vmp-pressure.lock …`, it already holds the lock through
    the descriptor it inherited: flock() on that one returns at once, where a
    new open() of the file would wait for ourselves forever."""
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}") == PRESSURE_LOCK:
                fd = os.dup(int(fd))
                break
        except OSError:
            continue
    else:
        fd = os.open(PRESSURE_LOCK, os.O_RDONLY | os.O_CREAT | os.O_CLOEXEC, 0o644)
    t = time.monotonic()
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        log("waiting for", PRESSURE_LOCK)
        fcntl.flock(fd, fcntl.LOCK_EX)
        log(f"got {PRESSURE_LOCK} after {time.monotonic() - t:.0f} s")
    return fd


def boot(img, share, append=(), timeout=900, console=None, memory_mib=1024, cpus=2, kernel=None):
    """Boot IMG (kernel and initrd next to it) with SHARE as the 9p tag "share"
    and APPEND added to the kernel command line; returns the console log's path
    (qemu's own stderr goes to that path + ".stderr"). KERNEL: another
    bzImage, booted without an initramfs (everything it needs to mount
    /dev/vda built in, as kernel/build's). Holds the memory-pressure lock
    while qemu runs; after TIMEOUT seconds qemu is stopped (SIGTERM, then
    SIGKILL)."""
    out = os.path.dirname(os.path.abspath(img))
    if kernel:
        boot_files = ["-kernel", kernel]
    else:
        boot_files = ["-kernel", os.path.join(out, "vmlinuz"), "-initrd", os.path.join(out, "initrd.img")]
    console = console or os.path.join(out, "console.log")
    cmdline = ["console=ttyS0", "root=/dev/vda", "rw", "panic=-1", "loglevel=4", "transparent_hugepage=never",
               "systemd.show_status=0", *append]
    argv = ["qemu-system-x86_64", "-machine", "q35", "-accel", "tcg", "-cpu", "max", "-smp", str(cpus),
            "-m", str(memory_mib), "-mem-prealloc", "-overcommit", "mem-lock=on", "-display", "none",
            "-monitor", "none", "-serial", "file:" + console, "-no-reboot", "-nic", "none",
            *boot_files,
            "-append", " ".join(cmdline),
            "-drive", f"file={img},format=raw,if=virtio,snapshot=on",
            "-virtfs", f"local,path={share},mount_tag=share,security_model=none,id=share"]
    lock = _pressure_lock()
    try:
        with open(console + ".stderr", "wb") as err:
            p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
            try:
                p.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                log(f"guest still running after {timeout} s, stopping qemu (pid {p.pid})")
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
    finally:
        os.close(lock)
    return console
