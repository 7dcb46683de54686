/* runone: run one command for the symbolization benchmark and measure it.
 *
 *   runone STDIN_FILE STDOUT_FILE TIMEOUT_S CMD [ARGS...]
 *
 * Runs CMD with stdin from STDIN_FILE, stdout to STDOUT_FILE and stderr to
 * STDOUT_FILE.err, and prints one TSV line:
 *     wall_s  user_s  sys_s  maxrss_kb  rc  minflt  majflt
 * wall_s runs from just before fork() to the child's exit (wait4), i.e. it
 * includes process start. user/sys/maxrss come from the child's rusage
 * (ru_maxrss = peak RSS in KiB). A small C parent keeps the pre-exec RSS
 * of the child negligible (a Python parent would add ~14 MB to maxrss).
 * rc is the exit status, -SIG if killed by a signal, or "timeout" if it
 * ran longer than TIMEOUT_S and was killed.  minflt/majflt are the child's
 * page faults (ru_minflt, ru_majflt): most of a short run's time on a VM.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t timed_out;
static pid_t child;

static void on_alarm(int sig)
{
    (void)sig;
    timed_out = 1;
    if (child > 0)
        kill(child, SIGKILL);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: runone STDIN_FILE STDOUT_FILE TIMEOUT_S CMD [ARGS...]\n");
        return 2;
    }
    int in = open(argv[1], O_RDONLY | O_CLOEXEC);
    int out = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    size_t n = strlen(argv[2]);
    char *errpath = malloc(n + 5);
    if (!errpath)
        return 2;
    memcpy(errpath, argv[2], n);
    memcpy(errpath + n, ".err", 5);
    int err = open(errpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (in < 0 || out < 0 || err < 0) {
        perror("runone: open");
        return 2;
    }
    double timeout = atof(argv[3]);

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);

    double t0 = now();
    child = fork();
    if (child < 0) {
        perror("runone: fork");
        return 2;
    }
    if (child == 0) {
        dup2(in, 0);
        dup2(out, 1);
        dup2(err, 2);
        execvp(argv[4], argv + 4);
        fprintf(stderr, "runone: exec %s: %s\n", argv[4], strerror(errno));
        _exit(127);
    }
    struct itimerval it;
    memset(&it, 0, sizeof it);
    it.it_value.tv_sec = (time_t)timeout;
    it.it_value.tv_usec = (suseconds_t)((timeout - (double)(time_t)timeout) * 1e6);
    setitimer(ITIMER_REAL, &it, NULL);

    int status;
    struct rusage ru;
    pid_t r;
    while ((r = wait4(child, &status, 0, &ru)) < 0 && errno == EINTR)
        ;
    double t1 = now();
    if (r < 0) {
        perror("runone: wait4");
        return 2;
    }
    char rc[32];
    if (timed_out)
        snprintf(rc, sizeof rc, "timeout");
    else if (WIFSIGNALED(status))
        snprintf(rc, sizeof rc, "%d", -WTERMSIG(status));
    else
        snprintf(rc, sizeof rc, "%d", WEXITSTATUS(status));
    printf("%.6f\t%.6f\t%.6f\t%ld\t%s\t%ld\t%ld\n", t1 - t0,
           (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6,
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6,
           ru.ru_maxrss, rc, ru.ru_minflt, ru.ru_majflt);
    return 0;
}
