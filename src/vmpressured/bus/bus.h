/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The D-Bus face of the daemon (org.freedesktop.vmpressure1(5)): a thin
 * sd-bus vtable over the manager, the Subscribe() descriptors, and the
 * org.freedesktop.LowMemoryMonitor compatibility name for GLib's
 * GMemoryMonitor. No decisions here: levels come from the manager's
 * listener, and the bus only says them.
 *
 * The connection is optional at every moment: without a system bus (early
 * boot, dbus-daemon restarting) the daemon goes on watching pressure and
 * serving fd subscribers, and reconnects when the bus's socket appears
 * (inotify on its directory: nothing wakes while there is no bus; a timer,
 * every BUS_RETRY_USEC for BUS_RETRY_FAST_ATTEMPTS attempts, then every
 * BUS_RETRY_SLOW_USEC, only for an address that is not a socket path),
 * registering its objects and taking its names back.
 */

#include <sys/types.h>

#include "manager.h"
#include "subscribers.h"
#include "vmpressure-bus.h"


#define BUS_RETRY_USEC            (1 * USEC_PER_SEC)
#define BUS_RETRY_FAST_ATTEMPTS   30
#define BUS_RETRY_SLOW_USEC       (5 * USEC_PER_SEC)
/* The default system bus address, and its socket's directory is what is
 * watched (inotify) while there is no bus: no timer then. The timer above
 * is only for addresses that are not a socket path. After the socket
 * appears, BUS_SOCKET_QUICK_RETRIES tries BUS_SOCKET_QUICK_RETRY_USEC
 * apart: dbus-daemon listen()s a moment after it bind()s. */
#define BUS_SYSTEM_SOCKET_ADDRESS  "unix:path=/run/dbus/system_bus_socket"
#define BUS_SOCKET_QUICK_RETRIES   20u
#define BUS_SOCKET_QUICK_RETRY_USEC (50 * USEC_PER_MSEC)
/* A dbus-daemon that does not read (stopped, stuck) first fills the
 * connection's socket buffer (sd-bus asks for 8 MiB; we cut it to
 * BUS_SNDBUF_BYTES, which the kernel doubles), then sd-bus's own queue; past
 * BUS_WQUEUE_MAX queued messages signals are dropped and counted
 * (SignalDrops), so a stuck bus cannot grow the daemon. An announcement is
 * ~400 bytes on the wire (signal and PropertiesChanged). */
#define BUS_SNDBUF_BYTES          (256 * 1024)
/* sd-bus asks for an 8 MiB receive buffer (the kernel doubles it), in the
 * daemon's memory cgroup; what dbus-daemon has for us beyond this waits in
 * dbus-daemon. A large message is read in pieces of this, each its own
 * dispatch below the pressure sources. */
#define BUS_RCVBUF_BYTES          (256 * 1024)
/* No method takes a string longer than a D-Bus name (255 bytes) or a unit
 * name (256): longer arguments and object paths are refused unread by
 * sd-bus's handlers. */
#define BUS_ARG_MAX               4096u
#define BUS_WQUEUE_MAX            256
/* Subscribe() calls waiting for dbus-daemon to say who called (one round
 * trip, well under 1 ms); past this many, more are refused for now. */
#define BUS_SUBSCRIBE_PENDING_MAX 64
/* GLib apps free caches on every LowMemoryWarning: each level is sent at
 * most this often, a repeat under sustained pressure as well as a return
 * after Normal; only a rise above the last level sent is sent at once. Like
 * low-memory-monitor's own 15 s recovery interval. */
#define BUS_LMM_REPEAT_USEC       (15 * USEC_PER_SEC)

#include "responder.h"

typedef struct Bus Bus;

/* Registers the level listener and the subscriber set on the manager's loop
 * and connects to the system bus ($DBUS_SYSTEM_BUS_ADDRESS or the default).
 * A missing bus is not an error (it is retried). 0, or negative errno. */
int bus_new(Manager *m, Bus **ret);
Bus *bus_free(Bus *b);
DEFINE_TRIVIAL_CLEANUP_FUNC(Bus *, bus_free);

/* For the actions: the Killed signal. 0, or negative errno (also when
 * there is no bus at the moment: -ENOTCONN). */
int bus_emit_killed(Bus *b, const char *unit, pid_t pid, const char *comm, uint64_t rss_bytes,
                    const char *reason);

/* The OOM level signal and the Killed signal built and sealed as sending
 * them would, and not sent: the start-up rehearsal of the OOM path
 * (responder_rehearse()).
 * 0, or negative errno (-ENOTCONN without a bus). */
int bus_rehearse_killed(Bus *b, const char *unit, pid_t pid, const char *comm, uint64_t rss_bytes,
                        const char *reason);

/* The current system bus connection, for the actions' KillUnit() calls;
 * NULL while there is none (reconnecting). Borrowed: do not keep it across
 * event loop iterations, it is replaced on reconnection. */
struct sd_bus *bus_get_connection(Bus *b);

/* LowMemoryWarning's byte for a level: 50, 100, 255; 0 for none. */
uint8_t bus_lmm_level(Level l);
/* Pure: whether an announcement of level at now (µs) is sent as
 * LowMemoryWarning, given the last level sent and when each level was last
 * sent (0: never). */
bool bus_lmm_wanted(Level last_level, const usec_t last_usec[static _LEVEL_MAX], Level level, usec_t now);

/* Policies for ListPolicies, the Policies property and Reload; Killed signals. */
void bus_set_responder(Bus *b, Responder *r);
