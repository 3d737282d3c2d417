/* Runs a command with some system calls refused, as the places users run
 * on refuse them, through a seccomp filter:
 *   io_uring     io_uring_setup fails with EPERM (Docker's default profile):
 *                the driver must fall back to its pwrite engine;
 *   flock        flock fails with ENOSYS (Lustre mounted without -o flock,
 *                some NFS set-ups): locks must fall back to fcntl's;
 *   fcntl-locks  every fcntl lock command fails with ENOSYS (with flock: a
 *                file system with no locks at all).
 * usage: refuse_syscalls WHAT[,WHAT...] COMMAND [ARGS...] */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAX_RULES 32

static struct sock_filter filter[MAX_RULES * 4];
static unsigned n;

static void emit(struct sock_filter f) { filter[n++] = f; }
static void load_nr(void) { emit((struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr))); }
static void fail_with(int err) { emit((struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (err & SECCOMP_RET_DATA))); }

/* System call `nr` fails with `err`. */
static void refuse(int nr, int err) {
    load_nr();
    emit((struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 1));
    fail_with(err);
}

/* fcntl(fd, cmd, ...) fails with `err` for this one cmd (the low 32 bits of
 * the second argument, little-endian). */
static void refuse_fcntl(int cmd, int err) {
    load_nr();
    emit((struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_fcntl, 0, 3));
    emit((struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1])));
    emit((struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)cmd, 0, 1));
    fail_with(err);
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: refuse_syscalls io_uring|flock|fcntl-locks[,...] COMMAND [ARGS...]\n");
        return 2;
    }
    for (char *what = strtok(argv[1], ","); what != NULL; what = strtok(NULL, ",")) {
        if (strcmp(what, "io_uring") == 0) {
            refuse(__NR_io_uring_setup, EPERM);
        } else if (strcmp(what, "flock") == 0) {
            refuse(__NR_flock, ENOSYS);
        } else if (strcmp(what, "fcntl-locks") == 0) {
            int cmds[] = {F_SETLK, F_SETLKW, F_GETLK, F_OFD_SETLK, F_OFD_SETLKW, F_OFD_GETLK};
            for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) refuse_fcntl(cmds[i], ENOSYS);
        } else {
            fprintf(stderr, "refuse_syscalls: unknown '%s'\n", what);
            return 2;
        }
    }
    emit((struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
    struct sock_fprog prog = {(unsigned short)n, filter};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
        perror("refuse_syscalls: seccomp");
        return 2;
    }
    execvp(argv[2], argv + 2);
    perror("refuse_syscalls: exec");
    return 2;
}
