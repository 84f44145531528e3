/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <limits.h>

#include "victim.h"

static const char *const victim_verdict_table[_VICTIM_VERDICT_MAX] = {
        [VICTIM_OK] = "ok",
        [VICTIM_PID1] = "pid1",
        [VICTIM_SELF] = "self",
        [VICTIM_KERNEL_THREAD] = "kernel-thread",
        [VICTIM_UNMARKED] = "unmarked",
        [VICTIM_OOM_DISABLED] = "oom-disabled",
        [VICTIM_NO_MEMORY] = "no-memory",
        [VICTIM_BAD_PID] = "bad-pid",
};

const char *victim_verdict_to_string(VictimVerdict v) {
        return v >= 0 && (size_t) v < ELEMENTSOF(victim_verdict_table) ? victim_verdict_table[v] : NULL;
}

/* The order of the checks is the order of the reasons a log should give:
 * the absolute rules first. */
VictimVerdict victim_check(const Candidate *c, pid_t self_pid) {
        if (c->pid <= 0)
                return VICTIM_BAD_PID;
        if (c->pid == 1)
                return VICTIM_PID1;
        if (c->pid == self_pid)
                return VICTIM_SELF;
        if (c->is_kernel_thread)
                return VICTIM_KERNEL_THREAD;
        if (!c->unit_marked_killable)
                return VICTIM_UNMARKED;
        if (c->oom_score_adj <= OOM_SCORE_ADJ_MIN)
                return VICTIM_OOM_DISABLED;
        if (c->rss_bytes == 0)
                return VICTIM_NO_MEMORY;
        return VICTIM_OK;
}

#define CMP_DESC(a, b) ((a) > (b) ? -1 : (a) < (b) ? 1 : 0)

int victim_compare(const Candidate *a, const Candidate *b) {
        int r;

        if ((r = CMP_DESC(a->rss_bytes, b->rss_bytes)))
                return r;
        if ((r = CMP_DESC(a->oom_score_adj, b->oom_score_adj)))
                return r;
        if ((r = CMP_DESC(a->starttime_ticks, b->starttime_ticks)))
                return r;
        return CMP_DESC(a->pid, b->pid);
}

int victim_select(const Candidate *c, size_t n, pid_t self_pid) {
        size_t best = SIZE_MAX;

        for (size_t i = 0; i < n && i <= INT_MAX; i++) {
                if (victim_check(&c[i], self_pid) != VICTIM_OK)
                        continue;
                if (best == SIZE_MAX || victim_compare(&c[i], &c[best]) < 0)
                        best = i;
        }
        return best == SIZE_MAX ? -ESRCH : (int) best;
}

void victim_best_init(VictimBest *b) {
        *b = (VictimBest) {};
}

bool victim_best_offer(VictimBest *b, const Candidate *c, pid_t self_pid) {
        b->n_seen++;
        if (victim_check(c, self_pid) != VICTIM_OK)
                return false;
        b->n_eligible++;
        if (b->found && victim_compare(c, &b->best) >= 0)
                return false;
        b->best = *c;
        b->found = true;
        return true;
}

/* ret_idx[0..n) as a binary heap with the worst victim at the root: the
 * one to drop when a better candidate comes and the heap is full. */
bool victim_best_skip(VictimBest *b, const Candidate *partial, pid_t self_pid) {
        bool skip = partial->pid <= 1 || partial->pid == self_pid || partial->is_kernel_thread ||
                    partial->rss_bytes == 0 || (b->found && partial->rss_bytes < b->best.rss_bytes);

        if (skip)
                b->n_seen++;
        return skip;
}

static bool worse(const Candidate *c, size_t a, size_t b) {
        return victim_compare(&c[a], &c[b]) > 0;
}

static void heap_sift_down(const Candidate *c, size_t *h, size_t n, size_t i) {
        for (;;) {
                size_t l = 2 * i + 1, r = l + 1, top = i, t;

                if (l < n && worse(c, h[l], h[top]))
                        top = l;
                if (r < n && worse(c, h[r], h[top]))
                        top = r;
                if (top == i)
                        return;
                t = h[i], h[i] = h[top], h[top] = t;
                i = top;
        }
}

static void heap_push(const Candidate *c, size_t *h, size_t n, size_t idx) {
        size_t i = n;

        h[i] = idx;
        while (i > 0 && worse(c, h[i], h[(i - 1) / 2])) {
                size_t p = (i - 1) / 2, t = h[i];

                h[i] = h[p], h[p] = t;
                i = p;
        }
}

size_t victim_select_unit(const Candidate *c, size_t n, const char *unit, pid_t self_pid,
                          size_t *ret_idx, size_t max, size_t *ret_eligible) {
        size_t eligible = 0, stored = 0;

        if (!ret_idx)
                max = 0;
        for (size_t i = 0; i < n; i++) {
                if (!streq_ptr(c[i].unit, unit) || victim_check(&c[i], self_pid) != VICTIM_OK)
                        continue;
                eligible++;
                if (stored < max)
                        heap_push(c, ret_idx, stored++, i);
                else if (stored > 0 && victim_compare(&c[i], &c[ret_idx[0]]) < 0) {
                        ret_idx[0] = i;
                        heap_sift_down(c, ret_idx, stored, 0);
                }
        }
        /* Heap sort: the worst goes to the end, so the array ends best first. */
        for (size_t end = stored; end > 1; end--) {
                size_t t = ret_idx[0];

                ret_idx[0] = ret_idx[end - 1], ret_idx[end - 1] = t;
                heap_sift_down(c, ret_idx, end - 1, 0);
        }
        if (ret_eligible)
                *ret_eligible = eligible;
        return stored;
}

/* Oldest first, then lowest pid. */
static bool main_before(const Candidate *a, const Candidate *b) {
        if (a->starttime_ticks != b->starttime_ticks)
                return a->starttime_ticks < b->starttime_ticks;
        return a->pid < b->pid;
}

static const Candidate *sort_base;

static int pid_index_compare(const void *x, const void *y) {
        pid_t a = sort_base[*(const size_t *) x].pid, b = sort_base[*(const size_t *) y].pid;

        return a < b ? -1 : a > b;
}

/* Whether pid is among c[0..n): through the pid-sorted scratch when given. */
static bool has_pid(const Candidate *c, size_t n, const size_t *sorted, pid_t pid) {
        if (!sorted) {
                for (size_t i = 0; i < n; i++)
                        if (c[i].pid == pid)
                                return true;
                return false;
        }
        for (size_t lo = 0, hi = n; lo < hi;) {
                size_t mid = lo + (hi - lo) / 2;

                if (c[sorted[mid]].pid == pid)
                        return true;
                if (c[sorted[mid]].pid < pid)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return false;
}

int victim_main_process(const Candidate *c, size_t n, pid_t self_pid, size_t *scratch) {
        size_t best = SIZE_MAX;

        if (scratch && n > 0) {
                for (size_t i = 0; i < n; i++)
                        scratch[i] = i;
                sort_base = c;  /* qsort has no context pointer; single-threaded daemon */
                qsort(scratch, n, sizeof(*scratch), pid_index_compare);
                sort_base = NULL;
        }
        for (size_t i = 0; i < n && i <= INT_MAX; i++) {
                if (c[i].pid <= 1 || c[i].pid == self_pid || c[i].is_kernel_thread)
                        continue;
                if (has_pid(c, n, scratch, c[i].ppid))
                        continue;       /* its parent is in the unit too: not the root */
                if (best == SIZE_MAX || main_before(&c[i], &c[best]))
                        best = i;
        }
        return best == SIZE_MAX ? -ESRCH : (int) best;
}
