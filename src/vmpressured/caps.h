/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Least privilege after start-up. The daemon stays uid 0 (cgroup.event_control
 * is --w------- root:root, and systemd's KillUnit checks uid 0 or CAP_KILL)
 * but keeps only these capabilities (and CAP_DAC_READ_SEARCH on kernels
 * before 6.4, see caps.c), in the effective and permitted sets;
 * every other one leaves the bounding set too (where CAP_SETPCAP allows),
 * the inheritable and ambient sets are emptied and no_new_privs is set, so
 * nothing can come back, not even through execve().
 */

#include <stdbool.h>
#include <sys/capability.h>

typedef struct CapKeep {
        cap_value_t cap;
        const char *why;
} CapKeep;

/* The table, also printed in org.freedesktop.vmpressure1(5). */
extern const CapKeep caps_runtime[];
extern const size_t caps_runtime_n;

/* Applies the table. 0 on success (also when the process had less to begin
 * with: an unprivileged test run), negative errno when the kernel refused. */
/* keep_dac_read_search: also keep CAP_DAC_READ_SEARCH, for a kernel whose
 * memory.pressure_level files are mode 000 (before "memcg v1: provide read
 * access to memory.pressure_level", Linux 6.4): registering a listener opens
 * one for reading, also for cgroups watched after start-up. */
int caps_drop_to_runtime(bool keep_dac_read_search);

/* Drops to exactly keep[] (intersected with what the process has).
 * Returns the number of capabilities still in the bounding set beyond
 * keep[] (they stay when CAP_SETPCAP is missing), or negative errno. */
int caps_keep_only(const cap_value_t *keep, size_t n_keep);
