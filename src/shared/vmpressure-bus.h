/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The D-Bus contract of org.freedesktop.vmpressure1(5), shared by the
 * daemon (bus.c) and vmpressurectl: names, members and the signatures of
 * the structured properties and signals. Changing one here changes the
 * protocol for both sides at once; the man page documents them.
 */

#define VMP_BUS_NAME            "org.freedesktop.vmpressure1"
#define VMP_BUS_PATH            "/org/freedesktop/vmpressure1"
#define VMP_BUS_INTERFACE       "org.freedesktop.vmpressure1.Manager"
#define VMP_BUS_LMM_NAME        "org.freedesktop.LowMemoryMonitor"
#define VMP_BUS_LMM_PATH        "/org/freedesktop/LowMemoryMonitor"
#define VMP_BUS_LMM_INTERFACE   "org.freedesktop.LowMemoryMonitor"

#define VMP_BUS_ERROR_INVALID_CONFIG "org.freedesktop.vmpressure1.Error.InvalidConfig"
#define VMP_BUS_ERROR_INVALID_POLICY "org.freedesktop.vmpressure1.Error.InvalidPolicy"
#define VMP_BUS_ERROR_NO_SUCH_SCOPE  "org.freedesktop.vmpressure1.Error.NoSuchScope"

/* Methods. */
#define VMP_BUS_METHOD_SUBSCRIBE     "Subscribe"
#define VMP_BUS_METHOD_SIMULATE      "Simulate"
#define VMP_BUS_METHOD_RELOAD        "Reload"
#define VMP_BUS_METHOD_LIST_POLICIES "ListPolicies"

/* Signals and their signatures. */
#define VMP_BUS_SIGNAL_NORMAL        "Normal"
#define VMP_BUS_SIGNAL_SIMULATED     "Simulated"
#define VMP_BUS_SIGNAL_KILLED        "Killed"
#define VMP_BUS_SIGNAL_ACTION        "Action"
#define VMP_BUS_LEVEL_SIG            "su"               /* Low, Medium, OOM: scope, index */
#define VMP_BUS_NORMAL_SIG           "s"                /* scope */
#define VMP_BUS_SIMULATED_SIG        "ss"               /* scope, level */
#define VMP_BUS_KILLED_SIG           "susts"            /* unit, pid, comm, rss_bytes, reason */

/* Properties with a structure: the element's fields, then the property's
 * array type. */
#define VMP_BUS_PROPERTY_SCOPES             "Scopes"
#define VMP_BUS_PROPERTY_SCOPE_SIMULATIONS  "ScopeSimulations"
#define VMP_BUS_PROPERTY_LATENCIES          "Latencies"
#define VMP_BUS_PROPERTY_RECENT_ACTIONS     "RecentActions"
#define VMP_BUS_PROPERTY_UNWATCHED          "UnwatchedCgroups"
#define VMP_BUS_PROPERTY_GUARDS             "Guards"
#define VMP_BUS_PROPERTY_POLICIES           "Policies"
#define VMP_BUS_PROPERTY_SOURCE_DETAILS     "SourceDetails"
/* scope, what its source reads and what wakes it */
#define VMP_BUS_SOURCE_DETAIL_STRUCT "(ss)"

/* name, cgroup, level, source, normal, low, medium, oom announcements */
#define VMP_BUS_SCOPE_SIG            "sssstttt"
#define VMP_BUS_SCOPE_STRUCT         "(" VMP_BUS_SCOPE_SIG ")"
/* name, in a simulation now, simulated normal, low, medium, oom */
#define VMP_BUS_SCOPE_SIMULATION_SIG "sbtttt"
#define VMP_BUS_SCOPE_SIMULATION_STRUCT "(" VMP_BUS_SCOPE_SIMULATION_SIG ")"
/* A latency histogram: stage, simulated, [(le_usec, cumulative count)], count, sum_usec */
#define VMP_BUS_LATENCY_HEAD_SIG     "sb"
#define VMP_BUS_LATENCY_BUCKET_SIG   "tt"
#define VMP_BUS_LATENCY_BUCKET_STRUCT "(" VMP_BUS_LATENCY_BUCKET_SIG ")"
#define VMP_BUS_LATENCY_TAIL_SIG     "tt"
#define VMP_BUS_LATENCY_SIG          VMP_BUS_LATENCY_HEAD_SIG "a" VMP_BUS_LATENCY_BUCKET_STRUCT VMP_BUS_LATENCY_TAIL_SIG
#define VMP_BUS_LATENCY_STRUCT       "(" VMP_BUS_LATENCY_SIG ")"
/* A recent action, and the Action signal: realtime_usec, unit, level,
 * action, signal, pid, result, simulated, latency_usec */
#define VMP_BUS_ACTION_SIG           "tssssusbt"
#define VMP_BUS_ACTION_STRUCT        "(" VMP_BUS_ACTION_SIG ")"
/* cgroup, absent|table-full|no-source */
#define VMP_BUS_UNWATCHED_SIG        "ss"
#define VMP_BUS_UNWATCHED_STRUCT     "(" VMP_BUS_UNWATCHED_SIG ")"
/* Guards: unit, state, guard bytes, limit bytes, mark bytes (limit - guard:
 * the usage where the guard band begins), what was done */
#define VMP_BUS_GUARD_SIG            "ssttts"
#define VMP_BUS_GUARD_STRUCT         "(" VMP_BUS_GUARD_SIG ")"
/* ListPolicies: unit, policy file, scope */
#define VMP_BUS_POLICY_SIG           "sss"
#define VMP_BUS_POLICY_STRUCT        "(" VMP_BUS_POLICY_SIG ")"

/* The most entries the daemon keeps in Scopes and in UnwatchedCgroups: a
 * real machine has hundreds of units; vmpressurectl sizes its tables by
 * these. */
#define VMP_BUS_SCOPES_MAX           1024
#define VMP_BUS_UNWATCHED_MAX        4096
#define VMP_BUS_GUARDS_MAX           64
/* The system scope's name in Scopes and in the signals; Simulate()'s
 * default scope. */
#define VMP_BUS_SCOPE_SYSTEM         "-.slice"
