/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libvmpressure: vmpressure_fd(3), the seed's vmpressure_fd(2) for programs
 * on any kernel. The kernel's syscall where the kernel has it, otherwise a
 * descriptor from vmpressured's Subscribe() over the system bus: both give
 * one struct vmpressure_event per read(2), only for levels at or above the
 * threshold, and poll(2) reports POLLIN when a record is waiting.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <systemd/sd-bus.h>

#include "vmpressure.h"
#include "vmpressure-bus.h"

#define VMPRESSURE_WINDOW_SYSCTL "/proc/sys/vm/vmpressure_window"

/* The seed never got a number in mainline: a distribution kernel that
 * carries the patch defines __NR_vmpressure_fd (or the build passes
 * -DVMPRESSURE_FD_SYSCALL_NR=…). We never guess one: a wrong number is
 * some other syscall. */
#if !defined(VMPRESSURE_FD_SYSCALL_NR) && defined(__NR_vmpressure_fd)
#define VMPRESSURE_FD_SYSCALL_NR __NR_vmpressure_fd
#endif

#define _public_ __attribute__((visibility("default")))

static int threshold_is_valid(uint32_t t) {
        return t == VMPRESSURE_LOW || t == VMPRESSURE_MEDIUM || t == VMPRESSURE_OOM;
}

/* The syscall's number: $VMPRESSURE_FD_SYSCALL_NR, else the compile-time
 * one; -1 when none is known. */
static long syscall_number(void) {
        const char *e = secure_getenv("VMPRESSURE_FD_SYSCALL_NR");
        char *end;
        long nr;

        if (e && *e) {
                errno = 0;
                nr = strtol(e, &end, 10);
                if (errno == 0 && *end == '\0' && nr >= 0)
                        return nr;
                return -1;
        }
#ifdef VMPRESSURE_FD_SYSCALL_NR
        return VMPRESSURE_FD_SYSCALL_NR;
#else
        return -1;
#endif
}

/* 1 and the fd in *ret when the kernel did it, 0 when the kernel has no
 * vmpressure_fd (or we know no number), negative errno when it refused. */
static int fd_from_syscall(struct vmpressure_config *config, int *ret) {
        long nr, fd;

        if (access(VMPRESSURE_WINDOW_SYSCTL, F_OK) < 0)
                return 0;
        nr = syscall_number();
        if (nr < 0)
                return 0;
        fd = syscall(nr, config);
        if (fd < 0)
                return errno == ENOSYS ? 0 : -errno;
        /* The seed's syscall takes no flags; ours are close-on-exec like the bus's. */
        (void) fcntl((int) fd, F_SETFD, FD_CLOEXEC);
        *ret = (int) fd;
        return 1;
}

/* The daemon's answer as an errno: no bus or no daemon → ECONNREFUSED or
 * ENOENT, bad threshold → EINVAL, too many subscribers → EMFILE. */
static int bus_error_to_errno(const sd_bus_error *e, int r) {
        if (sd_bus_error_has_names(e, SD_BUS_ERROR_SERVICE_UNKNOWN, SD_BUS_ERROR_NAME_HAS_NO_OWNER,
                                   SD_BUS_ERROR_UNKNOWN_OBJECT, SD_BUS_ERROR_UNKNOWN_METHOD,
                                   SD_BUS_ERROR_UNKNOWN_INTERFACE))
                return ENOENT;
        if (sd_bus_error_has_name(e, SD_BUS_ERROR_INVALID_ARGS))
                return EINVAL;
        if (sd_bus_error_has_name(e, SD_BUS_ERROR_LIMITS_EXCEEDED))
                return EMFILE;
        if (sd_bus_error_has_names(e, SD_BUS_ERROR_ACCESS_DENIED, SD_BUS_ERROR_AUTH_FAILED))
                return EACCES;
        if (sd_bus_error_has_name(e, SD_BUS_ERROR_NO_REPLY) || r == -ETIMEDOUT)
                return ETIMEDOUT;
        if (r == -ENOENT || r == -ECONNREFUSED)
                return -r;      /* no system bus socket, or nobody listening on it */
        return r < 0 ? -r : EIO;
}

static int fd_from_daemon(uint32_t threshold, int *ret) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        sd_bus *bus = NULL;
        int r, fd;

        /* A private connection: the caller's default bus (and its thread)
         * is left alone, and nothing stays open once we return. */
        r = sd_bus_open_system(&bus);
        if (r >= 0)
                r = sd_bus_call_method(bus, VMP_BUS_NAME, VMP_BUS_PATH, VMP_BUS_INTERFACE,
                                       VMP_BUS_METHOD_SUBSCRIBE, &error, &reply, "u", threshold);
        if (r >= 0)
                r = sd_bus_message_read(reply, "h", &fd);
        if (r >= 0) {
                /* The reply owns the fd it received; ours is a dup. */
                *ret = fcntl(fd, F_DUPFD_CLOEXEC, 3);
                r = *ret < 0 ? -errno : 0;
        } else
                r = -bus_error_to_errno(&error, r);

        sd_bus_message_unref(reply);
        sd_bus_error_free(&error);
        sd_bus_flush_close_unref(bus);
        return r;
}

_public_ int vmpressure_fd(struct vmpressure_config *config) {
        int fd = -1, r;

        if (!config) {
                errno = EFAULT;
                return -1;
        }
        config->size = sizeof(*config);
        if (!threshold_is_valid(config->threshold)) {
                errno = EINVAL;
                return -1;
        }

        r = fd_from_syscall(config, &fd);
        if (r == 0)
                r = fd_from_daemon(config->threshold, &fd);
        if (r < 0) {
                errno = -r;
                return -1;
        }
        return fd;
}
