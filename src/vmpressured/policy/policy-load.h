/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Reads the policy directories and hands the files to the pure parser. */

#include "policy.h"

/* Highest priority first. */
#define POLICY_DIR_ETC "/etc/vmpressured/policies"
#define POLICY_DIR_RUN "/run/vmpressured/policies"
#define POLICY_DIR_LIB "/usr/lib/vmpressured/policies"
extern const char *const policy_dirs_default[3];

/* Adds every "*.policy" in dirs[0..n_dirs) (highest priority first; within
 * a directory in name order) to s: the first file of a name wins. A missing
 * directory is normal and silent; an unreadable directory or file is added
 * to diag and the rest loads. An empty file or a symlink to /dev/null masks
 * the name. Returns the number of problems reported (≥ 0), or -ENOMEM. */
int policy_set_load_dirs(PolicySet *s, const char *const *dirs, size_t n_dirs, Diagnostics *diag);

/* A new set from dirs: *ret is set whenever the return value is ≥ 0 (the
 * problem count), so a caller that reloads decides whether to keep the old
 * set. -ENOMEM. */
int policy_set_load(const char *const *dirs, size_t n_dirs, PolicySet **ret, Diagnostics *diag);
