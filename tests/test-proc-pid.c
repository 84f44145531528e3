/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <sys/prctl.h>

#include "proc-pid.h"
#include "tests.h"
#include "unit-name.h"

#define S(s) (s), (sizeof(s) - 1)

/* From this machine (kernel 6.18): a process and kthreadd. */
#define STAT_CAT "28383 (cat) R 28381 28381 5995 0 -1 4194304 97 0 0 0 0 0 0 0 20 0 1 0 365057 " \
        "3133440 360 18446744073709551615 94157732483072 94157732502953 140727102835568 0 0 0 0 0 " \
        "0 0 0 0 17 0 0 0 0 0 0 94157732518960 94157732520576 94158148845568 140727102839435 "   \
        "140727102839455 140727102839455 140727102840811 0\n"
#define STAT_KTHREADD "2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 0 25 0 0 "      \
        "18446744073709551615 0 0 0 0 0 0 0 2147483647 0 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
#define STAT_TAIL " S 1 7 7 0 -1 4194560 5 0 0 0 1 2 0 0 -21 -20 1 0 4242 1000 77 18446744073709551615\n"

static void test_stat(void) {
        ProcStat st;

        CHECK_EQ_INT(proc_stat_parse(S(STAT_CAT), &st), 0);
        CHECK_EQ_INT(st.pid, 28383);
        CHECK_STREQ(st.comm, "cat");
        CHECK_EQ_INT(st.state, 'R');
        CHECK_EQ_INT(st.ppid, 28381);
        CHECK_EQ_INT(st.flags, 4194304);
        CHECK_EQ_U64(st.starttime_ticks, 365057);
        CHECK_EQ_U64(st.vsize_bytes, 3133440);
        CHECK_EQ_U64(st.rss_pages, 360);
        CHECK(!proc_stat_is_kernel_thread(&st));

        CHECK_EQ_INT(proc_stat_parse(S(STAT_KTHREADD), &st), 0);
        CHECK_STREQ(st.comm, "kthreadd");
        CHECK_EQ_INT(st.ppid, 0);
        CHECK(proc_stat_is_kernel_thread(&st));         /* 2129984 has PF_KTHREAD */
        CHECK_EQ_U64(st.rss_pages, 0);

        /* names with ')', spaces, '(' and a newline: the last ')' ends the name */
        CHECK_EQ_INT(proc_stat_parse(S("7 (a) R 1 (b)" STAT_TAIL), &st), 0);
        CHECK_STREQ(st.comm, "a) R 1 (b");
        CHECK_EQ_INT(st.state, 'S');
        CHECK_EQ_INT(st.ppid, 1);
        CHECK_EQ_U64(st.starttime_ticks, 4242);         /* negative priority and nice skipped */
        CHECK_EQ_U64(st.rss_pages, 77);
        CHECK_EQ_INT(proc_stat_parse(S("7 (two\nlines)" STAT_TAIL), &st), 0);
        CHECK_STREQ(st.comm, "two?lines");
        CHECK_EQ_INT(proc_stat_parse(S("7 ()" STAT_TAIL), &st), 0);
        CHECK_STREQ(st.comm, "");
        CHECK_EQ_INT(proc_stat_parse(S("7 ())))" STAT_TAIL), &st), 0);
        CHECK_STREQ(st.comm, ")))");
        CHECK_EQ_INT(proc_stat_parse(S("7 (caf\xc3\xa9 \x1b[31m)" STAT_TAIL), &st), 0);
        CHECK_STREQ(st.comm, "caf?? ?[31m");
        /* workqueue workers' names are longer than 16 */
        CHECK_EQ_INT(proc_stat_parse(S("9 (kworker/u8:3-events_unbound) I 2 0 0 0 -1 69238880 0 0 0 0 0 0 0 0 "
                                       "20 0 1 0 30 0 0 18446744073709551615\n"), &st), 0);
        CHECK_STREQ(st.comm, "kworker/u8:3-events_unbound");
        CHECK(proc_stat_is_kernel_thread(&st));
        /* too long for the buffer: cut */
        CHECK_EQ_INT(proc_stat_parse(S("9 (0123456789012345678901234567890123456789012345678901234567890123456789)"
                                       STAT_TAIL), &st), 0);
        CHECK_EQ_INT(strlen(st.comm), PROC_COMM_MAX - 1);

        /* malformed or cut short */
        CHECK_EQ_INT(proc_stat_parse(S(""), &st), -EBADMSG);
        CHECK_EQ_INT(proc_stat_parse(S("7"), &st), -EBADMSG);
        CHECK_EQ_INT(proc_stat_parse(S("7 (x"), &st), -EBADMSG);
        CHECK_EQ_INT(proc_stat_parse(S("7 x) R"), &st), -EBADMSG);
        CHECK_EQ_INT(proc_stat_parse(S("x (y) R 1"), &st), -EBADMSG);
        CHECK_EQ_INT(proc_stat_parse(S("7 (x) R 1 7 7 0 -1 4194560 5 0 0 0 1 2 0 0 20 0 1 0 4242"), &st), -EBADMSG);
        CHECK_EQ_INT(proc_stat_parse(S("7 (x) R abc 7 7 0 -1 4194560 5 0 0 0 1 2 0 0 20 0 1 0 4242 1 2\n"), &st),
                     -EBADMSG);
        CHECK_EQ_INT(proc_stat_parse(S("7 (x) R 1 7 7 0 -1 4194560 5 0 0 0 1 2 0 0 20 0 1 0 "
                                       "99999999999999999999999 1 2\n"), &st), -EBADMSG);
        CHECK_EQ_INT(proc_stat_parse(NULL, 0, &st), -EBADMSG);
        /* length is respected: a NUL-free buffer cut before the end */
        CHECK_EQ_INT(proc_stat_parse(STAT_CAT, 40, &st), -EBADMSG);
}

static void test_stat_self(void) {
        char buf[1024], comm[17] = "";
        ProcStat st;
        ssize_t n;
        int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);

        CHECK(fd >= 0);
        n = read(fd, buf, sizeof(buf));
        (void) close(fd);
        CHECK(n > 0);
        CHECK_EQ_INT(proc_stat_parse(buf, (size_t) n, &st), 0);
        CHECK_EQ_INT(st.pid, getpid());
        CHECK_EQ_INT(st.ppid, getppid());
        /* The task's name, not argv[0]: under valgrind it is "memcheck-amd64-". */
        CHECK(prctl(PR_GET_NAME, comm) == 0);
        CHECK_STREQ(st.comm, comm);
        CHECK(!proc_stat_is_kernel_thread(&st));
        CHECK(st.rss_pages > 0);
}

/* Fuzz by hand: random bytes and mutations of a real line never crash. */
static void test_stat_random(void) {
        unsigned seed = 99;
        char buf[sizeof(STAT_CAT)];

        unsigned n_ok = 0, n_bad = 0;

        for (unsigned i = 0; i < 50000; i++) {
                size_t len = (size_t) rand_r(&seed) % sizeof(buf);
                ProcStat st;
                int r;

                memcpy(buf, STAT_CAT, sizeof(buf));
                for (unsigned k = 0; k < 1 + i % 4; k++)
                        buf[(size_t) rand_r(&seed) % sizeof(buf)] = "() \n0-9x\0"[rand_r(&seed) % 9];
                r = proc_stat_parse(buf, len, &st);
                if (r == 0) {
                        /* A parse that succeeds gives a terminated, bounded name. */
                        if (strnlen(st.comm, sizeof(st.comm)) >= sizeof(st.comm)) {
                                CHECK(false);
                                break;
                        }
                        n_ok++;
                } else if (r == -EBADMSG)
                        n_bad++;
                else {
                        CHECK_EQ_INT(r, -EBADMSG);      /* no other error for text in memory */
                        break;
                }
        }
        CHECK_EQ_INT(n_ok + n_bad, 50000);
        CHECK(n_ok > 0);
        CHECK(n_bad > 0);
}

static void test_status(void) {
        const char status[] =
                "Name:\tmy\\nproc\n"
                "Umask:\t0022\n"
                "State:\tS (sleeping)\n"
                "Tgid:\t28386\n"
                "Ngid:\t0\n"
                "Pid:\t28387\n"
                "PPid:\t28381\n"
                "TracerPid:\t0\n"
                "Uid:\t1000\t1001\t1000\t1000\n"
                "Gid:\t0\t0\t0\t0\n"
                "Kthread:\t0\n"
                "VmPeak:\t    6000 kB\n"
                "VmRSS:\t    1952 kB\n"
                "RssAnon:\t     128 kB\n";
        ProcStatus st;

        CHECK_EQ_INT(proc_status_parse(S(status), &st), 0);
        CHECK_STREQ(st.name, "my\\nproc");
        CHECK_EQ_INT(st.tgid, 28386);
        CHECK_EQ_INT(st.pid, 28387);
        CHECK_EQ_INT(st.ppid, 28381);
        CHECK_EQ_INT(st.uid_real, 1000);
        CHECK_EQ_INT(st.uid_effective, 1001);
        CHECK(st.have_vm_rss);
        CHECK_EQ_U64(st.vm_rss_bytes, 1952 * 1024);
        CHECK_EQ_INT(st.kthread, 0);

        /* a kernel thread: no VmRSS, Kthread: 1; older kernels: no Kthread line */
        CHECK_EQ_INT(proc_status_parse(S("Name:\tkthreadd\nPid:\t2\nPPid:\t0\nUid:\t0\t0\t0\t0\nKthread:\t1\n"), &st), 0);
        CHECK(!st.have_vm_rss);
        CHECK_EQ_U64(st.vm_rss_bytes, 0);
        CHECK_EQ_INT(st.kthread, 1);
        CHECK_EQ_INT(proc_status_parse(S("Name:\tx\nPid:\t5\nUid:\t0\t0\t0\t0"), &st), 0);
        CHECK_EQ_INT(st.kthread, -1);

        CHECK_EQ_INT(proc_status_parse(S("Name:\tx\nUid:\t0\t0\t0\t0\n"), &st), -EBADMSG);     /* no Pid */
        CHECK_EQ_INT(proc_status_parse(S("Name:\tx\nPid:\t5\n"), &st), -EBADMSG);              /* no Uid */
        CHECK_EQ_INT(proc_status_parse(S("Pid:\tfive\nUid:\t0\t0\t0\t0\n"), &st), -EBADMSG);
        CHECK_EQ_INT(proc_status_parse(S("Pid:\t5\nUid:\t0\t0\t0\t0\nVmRSS:\t12 MB\n"), &st), -EBADMSG);
        CHECK_EQ_INT(proc_status_parse(S("Pid:\t5\nUid:\t0\nKthread:\t2\n"), &st), -EBADMSG);
        CHECK_EQ_INT(proc_status_parse(S(""), &st), -EBADMSG);
}

static void test_statm_and_adj(void) {
        uint64_t rss;
        int adj;

        CHECK_EQ_INT(proc_statm_parse(S("765 446 418 5 0 123 0\n"), 4096, &rss), 0);
        CHECK_EQ_U64(rss, 446 * 4096);
        CHECK_EQ_INT(proc_statm_parse(S("0 0 0 0 0 0 0\n"), 4096, &rss), 0);
        CHECK_EQ_U64(rss, 0);
        CHECK_EQ_INT(proc_statm_parse(S("765\n"), 4096, &rss), -EBADMSG);
        CHECK_EQ_INT(proc_statm_parse(S("765 x"), 4096, &rss), -EBADMSG);
        CHECK_EQ_INT(proc_statm_parse(S("1 18446744073709551615"), 4096, &rss), -EBADMSG);

        CHECK_EQ_INT(proc_oom_score_adj_parse(S("0\n"), &adj), 0);
        CHECK_EQ_INT(adj, 0);
        CHECK_EQ_INT(proc_oom_score_adj_parse(S("-1000\n"), &adj), 0);
        CHECK_EQ_INT(adj, -1000);
        CHECK_EQ_INT(proc_oom_score_adj_parse(S("1000"), &adj), 0);
        CHECK_EQ_INT(adj, 1000);
        CHECK_EQ_INT(proc_oom_score_adj_parse(S("1001\n"), &adj), -EBADMSG);
        CHECK_EQ_INT(proc_oom_score_adj_parse(S("-\n"), &adj), -EBADMSG);
        CHECK_EQ_INT(proc_oom_score_adj_parse(S("5 6\n"), &adj), -EBADMSG);
        CHECK_EQ_INT(proc_oom_score_adj_parse(S(""), &adj), -EBADMSG);
}

static void test_cgroup(void) {
        const char hybrid[] =
                "9:name=systemd:/system.slice/foo.service\n"
                "8:pids:/\n"
                "4:memory:/process_api/6bb3535482d71a0f0593887c40d8bb36\n"
                "2:cpu,cpuacct:/system.slice\n"
                "0::/system.slice/foo.service/sub\n";
        char buf[256];

        CHECK_EQ_INT(proc_cgroup_parse(S(hybrid), "name=systemd", buf, sizeof(buf)), 0);
        CHECK_STREQ(buf, "/system.slice/foo.service");
        CHECK_EQ_INT(proc_cgroup_parse(S(hybrid), "memory", buf, sizeof(buf)), 0);
        CHECK_STREQ(buf, "/process_api/6bb3535482d71a0f0593887c40d8bb36");
        CHECK_EQ_INT(proc_cgroup_parse(S(hybrid), "cpuacct", buf, sizeof(buf)), 0);
        CHECK_STREQ(buf, "/system.slice");
        CHECK_EQ_INT(proc_cgroup_parse(S(hybrid), NULL, buf, sizeof(buf)), 0);
        CHECK_STREQ(buf, "/system.slice/foo.service/sub");
        CHECK_EQ_INT(proc_cgroup_parse(S(hybrid), "", buf, sizeof(buf)), 0);
        CHECK_EQ_INT(proc_cgroup_parse(S(hybrid), "mem", buf, sizeof(buf)), -ENOENT);
        CHECK_EQ_INT(proc_cgroup_parse(S(hybrid), "blkio", buf, sizeof(buf)), -ENOENT);
        CHECK_EQ_INT(proc_cgroup_parse(S(hybrid), "memory", buf, 10), -ENOBUFS);
        CHECK_EQ_INT(proc_cgroup_parse(S("0::/\n"), NULL, buf, sizeof(buf)), 0);
        CHECK_STREQ(buf, "/");
        CHECK_EQ_INT(proc_cgroup_parse(S("4:memory:/a"), "memory", buf, sizeof(buf)), 0);  /* no final newline */
        CHECK_STREQ(buf, "/a");
        CHECK_EQ_INT(proc_cgroup_parse(S("garbage\n"), "memory", buf, sizeof(buf)), -EBADMSG);
        CHECK_EQ_INT(proc_cgroup_parse(S("4:memory\n"), "memory", buf, sizeof(buf)), -EBADMSG);
        CHECK_EQ_INT(proc_cgroup_parse(S(""), NULL, buf, sizeof(buf)), -ENOENT);
}

static void test_cgroup_procs(void) {
        pid_t pids[4];

        CHECK_EQ_INT(cgroup_procs_parse(S("12\n345\n6\n"), pids, 4), 3);
        CHECK_EQ_INT(pids[0], 12);
        CHECK_EQ_INT(pids[1], 345);
        CHECK_EQ_INT(pids[2], 6);
        CHECK_EQ_INT(cgroup_procs_parse(S("7"), pids, 4), 1);
        CHECK_EQ_INT(pids[0], 7);
        CHECK_EQ_INT(cgroup_procs_parse(S(""), pids, 4), 0);
        CHECK_EQ_INT(cgroup_procs_parse(NULL, 0, pids, 4), 0);
        CHECK_EQ_INT(cgroup_procs_parse(S("1\n2\n3\n4\n5\n6\n"), pids, 4), 6);  /* counted, 4 stored */
        CHECK_EQ_INT(pids[3], 4);
        CHECK_EQ_INT(cgroup_procs_parse(S("1\n\n2\n"), pids, 4), -EBADMSG);
        CHECK_EQ_INT(cgroup_procs_parse(S("1 2\n"), pids, 4), -EBADMSG);
        CHECK_EQ_INT(cgroup_procs_parse(S("0\n"), pids, 4), -EBADMSG);
        CHECK_EQ_INT(cgroup_procs_parse(S("-3\n"), pids, 4), -EBADMSG);
        CHECK_EQ_INT(cgroup_procs_parse(S("99999999999\n"), pids, 4), -EBADMSG);
}

/* unit-name.c: the cgroup layout systemd uses, for the no-systemd path. */
static void test_unit_names(void) {
        char buf[300];

        CHECK(unit_name_is_valid("foo.service", UNIT_NAME_PLAIN));
        CHECK(!unit_name_is_valid("foo.service", UNIT_NAME_TEMPLATE));
        CHECK(unit_name_is_valid("foo@.service", UNIT_NAME_TEMPLATE));
        CHECK(unit_name_is_valid("foo@a\\x2db.service", UNIT_NAME_INSTANCE));
        CHECK(!unit_name_is_valid("foo@a@b.service", UNIT_NAME_ANY));
        CHECK(!unit_name_is_valid("foo.timer", UNIT_NAME_ANY));
        CHECK(!unit_name_is_valid("foo", UNIT_NAME_ANY));
        CHECK(!unit_name_is_valid("", UNIT_NAME_ANY));
        CHECK(!unit_name_is_valid(NULL, UNIT_NAME_ANY));
        memset(buf, 'a', 247);
        memcpy(buf + 247, ".service", 9);                       /* 255 bytes: the longest */
        CHECK(unit_name_is_valid(buf, UNIT_NAME_PLAIN));
        memset(buf, 'a', 248);
        memcpy(buf + 248, ".service", 9);
        CHECK(!unit_name_is_valid(buf, UNIT_NAME_PLAIN));

        CHECK_EQ_INT(unit_name_template("foo@bar.service", buf, sizeof(buf)), 0);
        CHECK_STREQ(buf, "foo@.service");
        CHECK_EQ_INT(unit_name_template("foo.service", buf, sizeof(buf)), -EINVAL);
        CHECK_EQ_INT(unit_name_template("foo@.service", buf, sizeof(buf)), -EINVAL);
        CHECK_EQ_INT(unit_name_template("foo@bar.service", buf, 5), -ENOBUFS);

        CHECK_EQ_INT(unit_name_to_cgroup_path("foo.service", buf, sizeof(buf)), 0);
        CHECK_STREQ(buf, "system.slice/foo.service");
        CHECK_EQ_INT(unit_name_to_cgroup_path("foo@1.service", buf, sizeof(buf)), 0);
        CHECK_STREQ(buf, "system.slice/foo@1.service");
        CHECK_EQ_INT(unit_name_to_cgroup_path("memory.service", buf, sizeof(buf)), 0);
        CHECK_STREQ(buf, "system.slice/_memory.service");
        CHECK_EQ_INT(unit_name_to_cgroup_path("a-b-c.slice", buf, sizeof(buf)), 0);
        CHECK_STREQ(buf, "a.slice/a-b.slice/a-b-c.slice");
        CHECK_EQ_INT(unit_name_to_cgroup_path("system.slice", buf, sizeof(buf)), 0);
        CHECK_STREQ(buf, "system.slice");
        CHECK_EQ_INT(unit_name_to_cgroup_path("-.slice", buf, sizeof(buf)), 0);
        CHECK_STREQ(buf, "");
        CHECK_EQ_INT(unit_name_to_cgroup_path("a--b.slice", buf, sizeof(buf)), -EINVAL);
        CHECK_EQ_INT(unit_name_to_cgroup_path("foo@.service", buf, sizeof(buf)), -EINVAL);
        CHECK_EQ_INT(unit_name_to_cgroup_path("foo.service", buf, 10), -ENOBUFS);

        CHECK_EQ_INT(unit_cgroup_dir("/sys/fs/cgroup/memory", "foo.service", buf, sizeof(buf)), 0);
        CHECK_STREQ(buf, "/sys/fs/cgroup/memory/system.slice/foo.service");
        CHECK_EQ_INT(unit_cgroup_dir("/sys/fs/cgroup/unified", "-.slice", buf, sizeof(buf)), 0);
        CHECK_STREQ(buf, "/sys/fs/cgroup/unified");

        CHECK_EQ_INT(cgroup_path_get_unit("/system.slice/foo.service/sub", buf, sizeof(buf)), 0);
        CHECK_STREQ(buf, "foo.service");
        CHECK_EQ_INT(cgroup_path_get_unit("/user.slice/user-1000.slice/session-2.scope", buf, sizeof(buf)), 0);
        CHECK_STREQ(buf, "session-2.scope");
        CHECK_EQ_INT(cgroup_path_get_unit("/system.slice/_memory.service", buf, sizeof(buf)), 0);
        CHECK_STREQ(buf, "memory.service");
        CHECK_EQ_INT(cgroup_path_get_unit("/user.slice", buf, sizeof(buf)), 0);
        CHECK_STREQ(buf, "user.slice");
        CHECK_EQ_INT(cgroup_path_get_unit("/", buf, sizeof(buf)), 0);
        CHECK_STREQ(buf, "-.slice");
        CHECK_EQ_INT(cgroup_path_get_unit("/init.scope", buf, sizeof(buf)), 0);
        CHECK_STREQ(buf, "init.scope");
        CHECK_EQ_INT(cgroup_path_get_unit("/process_api/6bb35354", buf, sizeof(buf)), -ENXIO);
}

int main(void) {
        test_stat();
        test_stat_self();
        test_stat_random();
        test_status();
        test_statm_and_adj();
        test_cgroup();
        test_cgroup_procs();
        test_unit_names();
        return test_exit("test-proc-pid");
}
