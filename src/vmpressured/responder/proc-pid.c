/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <limits.h>

#include "proc-pid.h"

/* A cursor over text[0..len): the parsers never read past len and never
 * need a NUL. */
typedef struct Cursor {
        const char *p;
        const char *end;
} Cursor;

static void skip_blanks(Cursor *c) {
        while (c->p < c->end && (*c->p == ' ' || *c->p == '\t'))
                c->p++;
}

/* Decimal, optional '-' when allow_negative. Advances past the digits. */
static int cursor_i64(Cursor *c, bool allow_negative, int64_t *ret) {
        bool neg = false;
        uint64_t x = 0;
        const char *start;

        if (allow_negative && c->p < c->end && *c->p == '-') {
                neg = true;
                c->p++;
        }
        start = c->p;
        while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
                unsigned d = (unsigned) (*c->p - '0');

                if (x > ((uint64_t) INT64_MAX - d) / 10)
                        return -EBADMSG;
                x = x * 10 + d;
                c->p++;
        }
        if (c->p == start)
                return -EBADMSG;
        *ret = neg ? -(int64_t) x : (int64_t) x;
        return 0;
}

static int cursor_u64(Cursor *c, uint64_t *ret) {
        int64_t v;
        int r = cursor_i64(c, false, &v);

        if (r < 0)
                return r;
        *ret = (uint64_t) v;
        return 0;
}

static int cursor_pid(Cursor *c, pid_t *ret) {
        int64_t v;

        if (cursor_i64(c, false, &v) < 0 || v > INT_MAX)
                return -EBADMSG;
        *ret = (pid_t) v;
        return 0;
}

static bool at_line_end(const Cursor *c) {
        return c->p >= c->end || *c->p == '\n';
}

void proc_comm_sanitize(char *buf, const char *s, size_t n) {
        n = MIN(n, (size_t) PROC_COMM_MAX - 1);
        for (size_t i = 0; i < n; i++) {
                unsigned char ch = (unsigned char) s[i];

                buf[i] = ch >= 0x20 && ch < 0x7f ? (char) ch : '?';
        }
        buf[n] = '\0';
}

/* Fields of /proc/<pid>/stat after the name, 1-based as in proc(5). */
enum {
        STAT_STATE = 3,
        STAT_PPID = 4,
        STAT_FLAGS = 9,
        STAT_STARTTIME = 22,
        STAT_VSIZE = 23,
        STAT_RSS = 24,
};

static int stat_field(ProcStat *st, unsigned field, Cursor *c) {
        uint64_t u;
        int r;

        if (field == STAT_STATE) {
                if (c->p >= c->end || *c->p == ' ' || *c->p == '\n')
                        return -EBADMSG;
                st->state = *c->p++;
                return 0;
        }
        if (field == STAT_PPID)
                return cursor_pid(c, &st->ppid);
        if (field != STAT_FLAGS && field != STAT_STARTTIME && field != STAT_VSIZE && field != STAT_RSS) {
                /* Skip; some fields (priority, nice, tty_nr) may be negative. */
                int64_t v;

                return cursor_i64(c, true, &v);
        }
        r = cursor_u64(c, &u);
        if (r < 0)
                return r;
        if (field == STAT_FLAGS)
                st->flags = (unsigned) u;
        else if (field == STAT_STARTTIME)
                st->starttime_ticks = u;
        else if (field == STAT_VSIZE)
                st->vsize_bytes = u;
        else
                st->rss_pages = u;
        return 0;
}

int proc_stat_parse(const char *text, size_t len, ProcStat *ret) {
        const char *open, *close;
        Cursor c = { text, text + len };
        ProcStat st = {};

        if (!text)
                return -EBADMSG;
        if (cursor_pid(&c, &st.pid) < 0 || c.p + 1 >= c.end || c.p[0] != ' ' || c.p[1] != '(')
                return -EBADMSG;
        open = c.p + 1;
        /* The last ')': a name like "a) R 1 (" must not end it early. */
        close = memrchr(open, ')', (size_t) (c.end - open));
        if (!close)
                return -EBADMSG;
        proc_comm_sanitize(st.comm, open + 1, (size_t) (close - open - 1));

        c.p = close + 1;
        for (unsigned field = STAT_STATE; field <= STAT_RSS; field++) {
                if (c.p >= c.end || *c.p != ' ')
                        return -EBADMSG;
                c.p++;
                if (stat_field(&st, field, &c) < 0)
                        return -EBADMSG;
        }
        *ret = st;
        return 0;
}

bool proc_stat_is_kernel_thread(const ProcStat *st) {
        return st->flags & PROC_PF_KTHREAD;
}

/* "Key:" at the start of the line at c; advances past it and the blanks. */
static bool status_key(Cursor *c, const char *key) {
        size_t n = strlen(key);

        if ((size_t) (c->end - c->p) < n + 1 || memcmp(c->p, key, n) != 0 || c->p[n] != ':')
                return false;
        c->p += n + 1;
        skip_blanks(c);
        return true;
}

static int status_line(ProcStatus *st, Cursor *c, bool *have_pid, bool *have_uid) {
        uint64_t u, u2;

        if (status_key(c, "Name")) {
                const char *eol = memchr(c->p, '\n', (size_t) (c->end - c->p));
                size_t n = eol ? (size_t) (eol - c->p) : (size_t) (c->end - c->p);

                proc_comm_sanitize(st->name, c->p, n);
                c->p += n;
                return 0;
        }
        if (status_key(c, "Tgid"))
                return cursor_pid(c, &st->tgid);
        if (status_key(c, "Pid")) {
                *have_pid = true;
                return cursor_pid(c, &st->pid);
        }
        if (status_key(c, "PPid"))
                return cursor_pid(c, &st->ppid);
        if (status_key(c, "Uid")) {
                /* real, effective, saved, filesystem */
                if (cursor_u64(c, &u) < 0 || (skip_blanks(c), cursor_u64(c, &u2)) < 0 ||
                    u > UINT32_MAX || u2 > UINT32_MAX)
                        return -EBADMSG;
                st->uid_real = (uid_t) u;
                st->uid_effective = (uid_t) u2;
                *have_uid = true;
                return 0;
        }
        if (status_key(c, "VmRSS")) {
                if (cursor_u64(c, &u) < 0 || u > UINT64_MAX / 1024)
                        return -EBADMSG;
                skip_blanks(c);
                if ((size_t) (c->end - c->p) < 2 || memcmp(c->p, "kB", 2) != 0)
                        return -EBADMSG;
                c->p += 2;
                st->vm_rss_bytes = u * 1024;
                st->have_vm_rss = true;
                return 0;
        }
        if (status_key(c, "Kthread")) {
                if (cursor_u64(c, &u) < 0 || u > 1)
                        return -EBADMSG;
                st->kthread = (int) u;
                return 0;
        }
        return 0;       /* a line we do not need */
}

int proc_status_parse(const char *text, size_t len, ProcStatus *ret) {
        Cursor c = { text, text + len };
        ProcStatus st = { .kthread = -1 };
        bool have_pid = false, have_uid = false;

        if (!text)
                return -EBADMSG;
        while (c.p < c.end) {
                const char *eol;

                if (status_line(&st, &c, &have_pid, &have_uid) < 0)
                        return -EBADMSG;
                eol = memchr(c.p, '\n', (size_t) (c.end - c.p));
                c.p = eol ? eol + 1 : c.end;
        }
        if (!have_pid || !have_uid)
                return -EBADMSG;
        *ret = st;
        return 0;
}

int proc_statm_parse(const char *text, size_t len, uint64_t page_size, uint64_t *ret_rss_bytes) {
        Cursor c = { text, text + len };
        uint64_t size, resident;

        if (!text || cursor_u64(&c, &size) < 0 || c.p >= c.end || *c.p++ != ' ' ||
            cursor_u64(&c, &resident) < 0)
                return -EBADMSG;
        if (page_size != 0 && resident > UINT64_MAX / page_size)
                return -EBADMSG;
        *ret_rss_bytes = resident * page_size;
        return 0;
}

int proc_oom_score_adj_parse(const char *text, size_t len, int *ret) {
        Cursor c = { text, text + len };
        int64_t v;

        if (!text || cursor_i64(&c, true, &v) < 0 || !at_line_end(&c) || v < -1000 || v > 1000)
                return -EBADMSG;
        *ret = (int) v;
        return 0;
}

/* Whether the comma-separated list s[0..n) holds controller. */
static bool controller_in_list(const char *s, size_t n, const char *controller) {
        size_t l = strlen(controller);

        for (const char *p = s, *end = s + n; p < end;) {
                const char *comma = memchr(p, ',', (size_t) (end - p));
                size_t k = comma ? (size_t) (comma - p) : (size_t) (end - p);

                if (k == l && memcmp(p, controller, l) == 0)
                        return true;
                p += k + 1;
        }
        return false;
}

int proc_cgroup_parse(const char *text, size_t len, const char *controller, char *buf, size_t size) {
        const char *p = text, *end = text + len;
        bool v2 = !controller || controller[0] == '\0';

        if (!text)
                return -EBADMSG;
        while (p < end) {
                const char *eol = memchr(p, '\n', (size_t) (end - p)) ?: end;
                const char *c1 = memchr(p, ':', (size_t) (eol - p)), *c2;
                size_t n;

                if (!c1 || !(c2 = memchr(c1 + 1, ':', (size_t) (eol - c1 - 1))))
                        return -EBADMSG;
                /* "0::/path" is cgroup2; "N:ctrl,ctrl:/path" is v1. */
                if (v2 ? (c1 - p == 1 && p[0] == '0' && c2 == c1 + 1)
                       : controller_in_list(c1 + 1, (size_t) (c2 - c1 - 1), controller)) {
                        n = (size_t) (eol - c2 - 1);
                        if (n + 1 > size)
                                return -ENOBUFS;
                        memcpy(buf, c2 + 1, n);
                        buf[n] = '\0';
                        return 0;
                }
                p = eol + 1;
        }
        return -ENOENT;
}

int cgroup_procs_parse(const char *text, size_t len, pid_t *pids, size_t max) {
        Cursor c = { text, text + len };
        size_t n = 0;

        if (!text && len > 0)
                return -EBADMSG;
        while (c.p < c.end) {
                pid_t pid;

                if (cursor_pid(&c, &pid) < 0 || pid <= 0 || !at_line_end(&c))
                        return -EBADMSG;
                if (c.p < c.end)
                        c.p++;          /* the '\n' */
                if (n < max)
                        pids[n] = pid;
                if (n == INT_MAX)
                        return -EBADMSG;
                n++;
        }
        return (int) n;
}
