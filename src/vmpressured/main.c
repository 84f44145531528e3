/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <getopt.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "config.h"
#include "conf.h"
#include "bus.h"
#include "caps.h"
#include "log.h"
#include "manager.h"
#include "memory.h"
#include "read-file.h"
#include "responder.h"
#include "task-iter.h"
#include "subscribers.h"

/* A config file is a few hundred bytes; anything this large is a mistake. */
#define CONFIG_FILE_MAX (1024 * 1024)

/* Descriptors of the daemon's own, besides subscribers, for RLIMIT_NOFILE
 * before anything is open: measured 12 with the system scope on the memcg
 * source, the bus and the signal and timer sources; every watched cgroup
 * adds up to 6 (memcg eventfds and control files, PSI, memory.events), and
 * one more for a Guard='s usage threshold on cgroup v1. */
#define NOFILE_OWN_BASE      32u
#define NOFILE_OWN_PER_SCOPE 8u
/* The soft limit asked for whatever the count above says: a memcg scope
 * holds 5 descriptors (measured: 19 with one watched cgroup, 39 with five)
 * and the scope table grows to MANAGER_SCOPES_MAX (1024) at run time, so a
 * full table needs ~5,000 on top of the subscribers' two each. The daemon
 * uses no select(), so it goes up towards the hard limit (524288 under
 * systemd), to this at most, as systemd does for its own daemons. */
#define NOFILE_SOFT_WANTED   65536u

typedef struct Args {
        const char *config_path;
        bool config_path_explicit;
        const char *source;
        const char *watch[CONFIG_WATCH_MAX];
        size_t n_watch;
        const char *syscall_nr;
        const char *log_level;
        bool dry_run;
        bool print_events;
        bool check_config;
        const char *policy_dirs[8];
        size_t n_policy_dirs;
} Args;

static void help(void) {
        printf("vmpressured [OPTIONS...]\n\n"
               "Turns the kernel's memory-pressure notifications into the levels\n"
               "LOW, MEDIUM, OOM and back to NORMAL.\n\n"
               "  -c --config=PATH       Configuration file (default %s)\n"
               "  -s --source=SOURCE     auto, syscall, memcg, reclaim, psi or vmstat\n"
               "  -w --watch=CGROUP      Also watch this cgroup (path below the root); repeatable\n"
               "     --syscall-nr=N      vmpressure_fd syscall number, where the kernel has one\n"
               "  -l --log-level=LEVEL   emerg … debug\n"
               "  -n --dry-run           Decide, but change nothing on the system\n"
               "  -p --print-events      Print sources and level changes on stdout\n"
               "     --policy-dir=DIR    Read policies from DIR instead of the default\n"
               "                         directories; repeatable, first wins\n"
               "     --check-config      Parse the configuration and exit\n"
               "  -h --help              Show this help\n"
               "     --version           Show the version\n\n"
               "See vmpressured(8) and vmpressured.conf(5).\n", CONFIG_FILE);
}

enum { ARG_SYSCALL_NR = 0x100, ARG_CHECK_CONFIG, ARG_VERSION, ARG_POLICY_DIR };

/* 0 to run, 1 to exit 0 (help, version), negative errno on bad usage. */
static int parse_argv(int argc, char *argv[], Args *a) {
        static const struct option options[] = {
                { "config",       required_argument, NULL, 'c' },
                { "source",       required_argument, NULL, 's' },
                { "watch",        required_argument, NULL, 'w' },
                { "syscall-nr",   required_argument, NULL, ARG_SYSCALL_NR },
                { "log-level",    required_argument, NULL, 'l' },
                { "dry-run",      no_argument,       NULL, 'n' },
                { "print-events", no_argument,       NULL, 'p' },
                { "check-config", no_argument,       NULL, ARG_CHECK_CONFIG },
                { "policy-dir",   required_argument, NULL, ARG_POLICY_DIR },
                { "help",         no_argument,       NULL, 'h' },
                { "version",      no_argument,       NULL, ARG_VERSION },
                {}
        };
        int c;

        a->config_path = CONFIG_FILE;
        while ((c = getopt_long(argc, argv, "c:s:w:l:nph", options, NULL)) >= 0)
                switch (c) {
                case 'c':
                        a->config_path = optarg;
                        a->config_path_explicit = true;
                        break;
                case 's':
                        a->source = optarg;
                        break;
                case 'w':
                        if (a->n_watch >= CONFIG_WATCH_MAX) {
                                fprintf(stderr, "Too many --watch= (at most %d).\n", CONFIG_WATCH_MAX);
                                return -E2BIG;
                        }
                        a->watch[a->n_watch++] = optarg;
                        break;
                case ARG_SYSCALL_NR:
                        a->syscall_nr = optarg;
                        break;
                case 'l':
                        a->log_level = optarg;
                        break;
                case 'n':
                        a->dry_run = true;
                        break;
                case 'p':
                        a->print_events = true;
                        break;
                case ARG_POLICY_DIR:
                        if (a->n_policy_dirs >= ELEMENTSOF(a->policy_dirs)) {
                                fprintf(stderr, "Too many --policy-dir= (at most %zu).\n",
                                        ELEMENTSOF(a->policy_dirs));
                                return -E2BIG;
                        }
                        a->policy_dirs[a->n_policy_dirs++] = optarg;
                        break;
                case ARG_CHECK_CONFIG:
                        a->check_config = true;
                        break;
                case 'h':
                        help();
                        return 1;
                case ARG_VERSION:
                        printf("vmpressured %s\n", PACKAGE_VERSION);
                        return 1;
                default:
                        return -EINVAL;
                }
        if (optind < argc) {
                fprintf(stderr, "Unexpected argument: %s\n", argv[optind]);
                return -EINVAL;
        }
        return 0;
}

/* Reads the whole file; -ENOENT is the caller's to judge. */
static int read_config_file(const char *path, char **ret, size_t *ret_len) {
        _cleanup_(closep) int fd = -EBADF;
        _cleanup_(freep) char *buf = NULL;
        size_t len = 0;
        struct stat st;
        ssize_t n;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        /* -c /dev/null is the usual way to say "no configuration, defaults only". */
        if (S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3))
                st.st_size = 0;
        else if (!S_ISREG(st.st_mode))
                return S_ISDIR(st.st_mode) ? -EISDIR : -EBADFD;
        if (st.st_size > CONFIG_FILE_MAX)
                return -EFBIG;

        buf = malloc((size_t) st.st_size + 1);
        if (!buf)
                return -ENOMEM;
        n = pread_full(fd, buf, (size_t) st.st_size + 1);
        if (n < 0)
                return (int) n;
        if ((size_t) n > (size_t) st.st_size)
                return -EFBIG;      /* grew while we read it */
        len = (size_t) n;
        buf[len] = '\0';
        *ret = TAKE_PTR(buf);
        *ret_len = len;
        return 0;
}

static int load_config(const Args *a, Config *c) {
        _cleanup_(freep) char *text = NULL;
        Diagnostics *diag;
        size_t len = 0;
        int r;

        r = read_config_file(a->config_path, &text, &len);
        if (r == -ENOENT && !a->config_path_explicit)
                return 0;       /* no file: the defaults */
        if (r < 0) {
                fprintf(stderr, "%s: cannot read: %s\n", a->config_path, strerror(-r));
                return r;
        }

        diag = diag_new();
        if (!diag)
                return -ENOMEM;
        c->mem_total_bytes = memory_total_bytes();     /* bounds HeadroomFloor= sizes */
        r = config_parse(c, a->config_path, text, len, diag);
        for (size_t i = 0; i < diag->n; i++)
                fprintf(stderr, "%s\n", diag->msg[i]);
        if (diag->n_dropped > 0)
                fprintf(stderr, "%s: … and %zu more errors.\n", a->config_path, diag->n_dropped);
        (void) diag_free(diag);
        return r;
}

static int apply_args(const Args *a, Config *c) {
        int r;

        if (a->source) {
                if (streq(a->source, "auto"))
                        c->source = _SOURCE_TYPE_INVALID;
                else if ((c->source = source_type_from_string(a->source)) < 0) {
                        fprintf(stderr, "Unknown source '%s': expected auto, syscall, memcg, reclaim, psi or vmstat.\n",
                                a->source);
                        return -EINVAL;
                }
        }
        for (size_t i = 0; i < a->n_watch; i++) {
                r = config_add_watch(c, a->watch[i]);
                if (r < 0) {
                        fprintf(stderr, "Cannot watch '%s': %s\n", a->watch[i],
                                r == -E2BIG ? "too many cgroups" : "not a usable cgroup path");
                        return r;
                }
        }
        if (a->syscall_nr) {
                char *end;
                long nr;

                errno = 0;
                nr = strtol(a->syscall_nr, &end, 10);
                if (errno != 0 || end == a->syscall_nr || *end || nr < 0 || nr > 4096) {
                        fprintf(stderr, "Invalid syscall number '%s'.\n", a->syscall_nr);
                        return -EINVAL;
                }
                c->params.syscall_nr = nr;
        }
        if (a->log_level) {
                r = log_level_from_string(a->log_level);
                if (r < 0) {
                        fprintf(stderr, "Invalid log level '%s'.\n", a->log_level);
                        return r;
                }
                c->log_level = r;
        }
        if (a->dry_run)
                c->dry_run = true;
        return 0;
}

/* RLIMIT_NOFILE for own descriptors of the daemon's, c's MaxSubscribers=
 * and the SUBSCRIBERS_FD_RESERVE that subscribers never take: the soft
 * limit is raised (up to the hard one) to fit. When it cannot: -EMFILE if
 * not even the daemon and the reserve fit, or MaxSubscribers= was set and
 * does not; an unset MaxSubscribers= is lowered to what fits. */
static int setup_nofile(Config *c, size_t own, const char *when) {
        size_t max = c->max_subscribers ?: SUBSCRIBERS_MAX_DEFAULT, hard = 0;
        size_t want = subscribers_nofile_needed(own, max), floor = subscribers_nofile_needed(own, 1);
        int soft;

        soft = nofile_raise(MAX(want, (size_t) NOFILE_SOFT_WANTED), &hard);
        if (soft < 0)
                return log_error_errno(soft, "Cannot raise RLIMIT_NOFILE to %zu: %m", want);
        if ((size_t) soft >= want)
                return 0;
        if ((size_t) soft < floor) {
                log_error("RLIMIT_NOFILE is %d (hard limit %zu): vmpressured needs at least %zu descriptors "
                          "(about %zu of its own, %u kept free for the OOM path's kills and the bus, %u for "
                          "answering Subscribe()), and %zu for MaxSubscribers=%zu. Raise the limit "
                          "(LimitNOFILE=, ulimit -n).", soft, hard, floor, own, SUBSCRIBERS_FD_RESERVE,
                          SUBSCRIBERS_FD_IN_FLIGHT, want, max);
                return -EMFILE;
        }
        if (c->max_subscribers > 0) {
                log_error("MaxSubscribers=%u needs RLIMIT_NOFILE of %zu (with %u descriptors kept for the OOM "
                          "path and the bus), but its hard limit is %zu%s: lower MaxSubscribers= to %zu or "
                          "raise LimitNOFILE=.", c->max_subscribers, want, SUBSCRIBERS_FD_RESERVE, hard, when,
                          max - (want - (size_t) soft));
                return -EMFILE;
        }
        c->max_subscribers = (unsigned) (max - (want - (size_t) soft));
        log_notice("RLIMIT_NOFILE's hard limit is %zu: MaxSubscribers= is %u instead of %u, keeping %u "
                   "descriptors for the OOM path and the bus.", hard, c->max_subscribers,
                   SUBSCRIBERS_MAX_DEFAULT, SUBSCRIBERS_FD_RESERVE);
        return 0;
}

static size_t own_fds_estimate(const Config *c, size_t n_scopes) {
        return NOFILE_OWN_BASE + NOFILE_OWN_PER_SCOPE * MAX(n_scopes, c->n_watch + 1);
}

typedef struct Reloader {
        const Args *args;
        const Manager *manager;
} Reloader;

/* Reload() and SIGHUP: the file again, then the command line over it, as
 * at start-up; a MaxSubscribers= that RLIMIT_NOFILE cannot hold is refused
 * like a bad line (the running configuration stays). */
static int reload_config(Config *ret, void *userdata) {
        const Reloader *rl = userdata;
        int r;

        config_init(ret);
        r = load_config(rl->args, ret);
        if (r < 0)
                return r;
        r = apply_args(rl->args, ret);
        if (r < 0)
                return r;
        return setup_nofile(ret, own_fds_estimate(ret, manager_n_scopes(rl->manager)), " (Reload() refused)");
}

/* The daemon must keep running when memory is gone: what it has and will
 * have is locked, with a heap reserve for what sd-bus allocates on the OOM
 * path (memory.h). MCL_ONFAULT: pages are locked as they are touched, not
 * all at once: mlockall() without it faulted in every page of every library
 * libsystemd links (gcrypt, zstd, lzma, lz4), 7.8 MiB here, nearly all of
 * it code the daemon never runs. The start-up code is dropped first, and
 * the rehearsal that follows (rehearse_oom_path()) faults in and locks what
 * an OOM needs. Not fatal: unprivileged test runs lack the limit. */
static void lock_memory(void) {
        if (memory_reserve() < 0)
                log_warning("Cannot set aside the heap reserve, continuing without it.");
        (void) memory_drop_code_pages();
        if (mlockall(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT) < 0)
                log_warning_errno(errno, "Cannot lock memory (mlockall), continuing unlocked: %m");
}

/* The headroom reads of an OOM, then a kill that is not one, as earlyoom
 * does at start-up: the victim read,
 * the kill's checks, journal record and Killed signal, so that the pages
 * they need are resident and locked before the first OOM. */
static void rehearse_oom_path(Manager *m, Responder *responder, Bus *bus) {
        Candidate c;
        int r;

        manager_rehearse(m);
        r = responder_rehearse(responder, &c);
        if (r < 0) {
                log_warning_errno(r, "Cannot rehearse the OOM path, continuing: %m");
                return;
        }
        r = bus_rehearse_killed(bus, c.unit, c.pid, c.comm, c.rss_bytes, "start-up rehearsal of the OOM path");
        if (r < 0 && r != -ENOTCONN)
                log_debug_errno(r, "Cannot rehearse the Killed signal, ignoring: %m");
}

/* The victim scan in the kernel (task-iter.h), loaded while the daemon
 * still has CAP_SYS_ADMIN (or CAP_BPF and CAP_PERFMON); without it the scan
 * reads /proc, as it always could. */
static void load_task_iter(void) {
        char reason[400];
        int r;

        r = task_iter_load(reason, sizeof(reason));
        if (r < 0)
                log_notice("Victim scan: reading /proc, one process at a time (no BPF task iterator: %s).", reason);
        else
                log_info("Victim scan: in the kernel (BPF task iterator), /proc only for cgroups it does not match.");
}

int main(int argc, char *argv[]) {
        _cleanup_(manager_freep) Manager *m = NULL;
        _cleanup_(responder_freep) Responder *responder = NULL;
        _cleanup_(bus_freep) Bus *bus = NULL;   /* freed before the manager it listens to */
        Args args = {};
        Reloader reloader = { .args = &args };
        Config config;
        int r;

        log_setup();
        r = parse_argv(argc, argv, &args);
        if (r != 0)
                return r > 0 ? EXIT_SUCCESS : 2;

        config_init(&config);
        r = load_config(&args, &config);
        if (r < 0)
                return EXIT_FAILURE;
        r = apply_args(&args, &config);
        if (r < 0)
                return 2;
        if (args.check_config) {
                printf("%s: OK\n", args.config_path);
                return EXIT_SUCCESS;
        }
        log_set_max_level(config.log_level);

        /* Line-buffered stdout for --print-events readers; events themselves are write(2)n. */
        setvbuf(stdout, NULL, _IOLBF, 0);

        /* Before anything is opened: a limit that cannot hold the daemon and
         * its reserve fails here, not with sources and policies silently
         * missing after "ready". */
        r = setup_nofile(&config, own_fds_estimate(&config, 0), "");
        if (r < 0)
                return EXIT_FAILURE;

        r = manager_new(&config, args.print_events, &m);
        if (r < 0) {
                log_error_errno(r, "Cannot set up: %m");
                return EXIT_FAILURE;
        }
        r = manager_start(m);
        if (r < 0) {
                log_error_errno(r, "Cannot start: %m");
                return EXIT_FAILURE;
        }
        reloader.manager = m;
        manager_set_config_loader(m, reload_config, &reloader);
        /* WATCHDOG=1 at half of the unit's WatchdogSec=; nothing without it. */
        (void) sd_event_set_watchdog(manager_event(m), true);

        r = responder_new(m, args.n_policy_dirs > 0 ? args.policy_dirs : NULL, args.n_policy_dirs,
                          &responder);
        if (r < 0) {
                log_error_errno(r, "Cannot set up the policies: %m");
                return EXIT_FAILURE;
        }

        r = bus_new(m, &bus);
        if (r < 0) {
                log_error_errno(r, "Cannot set up the bus: %m");
                return EXIT_FAILURE;
        }
        bus_set_responder(bus, responder);
        load_task_iter();
        /* Last: everything that needed more privilege is open now. */
        r = caps_drop_to_runtime(memcg_pressure_level_unreadable(manager_env(m)));
        if (r < 0)
                return EXIT_FAILURE;
        /* After all start-up code (CAP_IPC_LOCK is kept for this). */
        lock_memory();
        rehearse_oom_path(m, responder, bus);

        r = manager_run(m);
        /* The MemoryHigh= that guards set, taken back while the bus is there. */
        responder_shutdown(responder);
        if (r < 0) {
                log_error_errno(r, "Event loop failed: %m");
                return EXIT_FAILURE;
        }
        return EXIT_SUCCESS;
}
