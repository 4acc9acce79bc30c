/* Running ptxas: one process group per run, output through a close-on-exec pipe, killed as a
 * group when it runs over its time; compiles in parallel from a few threads. */
#include "variants_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define ST_VR_OUT_MAX 65536 /* output kept per run */

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int spawn(char *const argv[], int outfd, pid_t *pid)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&at);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, outfd, 1); /* dup2 clears close-on-exec on 1 and 2 */
	posix_spawn_file_actions_adddup2(&fa, outfd, 2);
	sigset_t none, dfl;
	sigemptyset(&none);
	sigemptyset(&dfl);
	sigaddset(&dfl, SIGPIPE);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &dfl);
	posix_spawnattr_setpgroup(&at, 0); /* its own group: a timeout kills its children too */
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	int e = posix_spawn(pid, argv[0], &fa, &at, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	return e;
}

/* Read the pipe until EOF or the deadline; then wait for the child until the deadline. */
static void collect(int fd, pid_t pid, double deadline, st_vr_run *r)
{
	char chunk[4096];
	bool eof = false, done = false;
	while (!done) {
		double left = deadline - now_s();
		if (left <= 0) {
			kill(-pid, SIGKILL);
			r->timed_out = true;
			break;
		}
		if (eof) {
			pid_t w = waitpid(pid, &r->wstatus, WNOHANG);
			if (w == pid)
				return;
			struct timespec ts = {0, 5000000};
			nanosleep(&ts, NULL);
			continue;
		}
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int ms = left > 1 ? 1000 : (int)(left * 1000) + 1;
		if (poll(&p, 1, ms) <= 0)
			continue;
		ssize_t got = read(fd, chunk, sizeof chunk);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			eof = true;
		else if (r->out.len < ST_VR_OUT_MAX)
			st_buf_append(&r->out, chunk, (size_t)got); /* no memory: the message is shorter */
	}
	while (waitpid(pid, &r->wstatus, 0) < 0 && errno == EINTR) {
	}
}

st_status st_vr_exec(char *const argv[], double timeout_s, st_vr_run *r, st_error *err)
{
	memset(r, 0, sizeof *r);
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return st_error_set(err, ST_EIO, "pipe: %s", strerror(errno));
	double t0 = now_s();
	pid_t pid;
	int e = spawn(argv, p[1], &pid);
	close(p[1]);
	if (e) {
		close(p[0]);
		st_buf_printf(&r->out, "cannot run %s: %s", argv[0], strerror(e));
		return r->out.data ? ST_OK : st_error_set(err, ST_ENOMEM, "out of memory");
	}
	r->spawned = true;
	collect(p[0], pid, t0 + timeout_s, r);
	close(p[0]);
	r->secs = now_s() - t0;
	if (st_buf_append(&r->out, "", 1) != ST_OK)
		return st_error_set(err, ST_ENOMEM, "out of memory");
	r->out.len--;
	return ST_OK;
}

/* The first line naming an error, else the first non-empty line. */
static void first_error_line(const char *text, char *out, size_t outsz)
{
	const char *pick = NULL, *first = NULL;
	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (*l == '\n')
			continue;
		if (!first)
			first = l;
		const char *end = strchr(l, '\n');
		size_t len = end ? (size_t)(end - l) : strlen(l);
		if (!pick && (memmem(l, len, "error", 5) || memmem(l, len, "Error", 5) || memmem(l, len, "fatal", 5)))
			pick = l;
	}
	if (!pick)
		pick = first;
	if (!pick) {
		out[0] = 0;
		return;
	}
	size_t len = strcspn(pick, "\r\n");
	snprintf(out, outsz, "%.*s", (int)(len < outsz ? len : outsz - 1), pick);
}

void st_vr_run_reason(const st_vr_run *r, double timeout_s, char *out, size_t outsz)
{
	out[0] = 0;
	if (!r->spawned)
		snprintf(out, outsz, "%s", r->out.data ? (const char *)r->out.data : "cannot run");
	else if (r->timed_out)
		snprintf(out, outsz, "timed out after %g s", timeout_s);
	else if (WIFSIGNALED(r->wstatus))
		snprintf(out, outsz, "crashed (signal %d)", WTERMSIG(r->wstatus));
	else if (WIFEXITED(r->wstatus) && WEXITSTATUS(r->wstatus) != 0) {
		first_error_line(r->out.data ? (const char *)r->out.data : "", out, outsz);
		if (!out[0])
			snprintf(out, outsz, "exit status %d", WEXITSTATUS(r->wstatus));
	}
}

/* argv: ptxas, the words of base and extra, -o OUT, PTX (malloc'ed; words point into *copy). */
static char **job_argv(const st_vr_job *j, char **copy)
{
	size_t lb = strlen(j->base), le = strlen(j->extra);
	*copy = malloc(lb + le + 2);
	char **argv = calloc(lb / 2 + le / 2 + 8, sizeof *argv);
	if (!*copy || !argv) {
		free(*copy);
		free(argv);
		return NULL;
	}
	snprintf(*copy, lb + le + 2, "%s %s", j->base, j->extra);
	size_t n = 0;
	argv[n++] = (char *)j->ptxas;
	for (char *save = NULL, *w = strtok_r(*copy, " \t\n", &save); w; w = strtok_r(NULL, " \t\n", &save))
		argv[n++] = w;
	argv[n++] = "-o";
	argv[n++] = (char *)j->out_path;
	argv[n++] = (char *)j->ptx_path;
	argv[n] = NULL;
	return argv;
}

static void run_job(st_vr_job *j, double timeout_s)
{
	char *copy = NULL;
	char **argv = job_argv(j, &copy);
	st_vr_run r;
	st_error e = {0};
	if (!argv || st_vr_exec(argv, timeout_s, &r, &e) != ST_OK) {
		snprintf(j->reason, sizeof j->reason, "%.200s", argv ? e.msg : "out of memory");
		free(argv);
		free(copy);
		return;
	}
	j->secs = r.secs;
	st_vr_run_reason(&r, timeout_s, j->reason, sizeof j->reason);
	if (!j->reason[0] && st_read_file(j->out_path, &j->cubin, &j->size, &e) != ST_OK)
		snprintf(j->reason, sizeof j->reason, "no output: %.200s", e.msg);
	unlink(j->out_path);
	st_buf_free(&r.out);
	free(argv);
	free(copy);
}

typedef struct pool {
	pthread_mutex_t lock;
	st_vr_job *jobs;
	size_t n, next;
	double timeout_s;
} pool;

static void *worker(void *arg)
{
	pool *p = arg;
	for (;;) {
		pthread_mutex_lock(&p->lock);
		size_t i = p->next < p->n ? p->next++ : p->n;
		pthread_mutex_unlock(&p->lock);
		if (i == p->n)
			return NULL;
		run_job(&p->jobs[i], p->timeout_s);
	}
}

st_status st_vr_compile_all(st_vr_job *jobs, size_t n, unsigned jobs_max, double timeout_s, st_error *err)
{
	pool p = {.jobs = jobs, .n = n, .timeout_s = timeout_s};
	if (jobs_max < 1)
		jobs_max = 1;
	if (jobs_max > n)
		jobs_max = (unsigned)n;
	if (jobs_max > 64)
		jobs_max = 64;
	pthread_t t[64];
	pthread_mutex_init(&p.lock, NULL);
	unsigned started = 0;
	for (; started < jobs_max; started++)
		if (pthread_create(&t[started], NULL, worker, &p) != 0)
			break;
	if (started == 0 && n > 0)
		worker(&p); /* no thread: run them here */
	for (unsigned i = 0; i < started; i++)
		pthread_join(t[i], NULL);
	pthread_mutex_destroy(&p.lock);
	(void)err;
	return ST_OK;
}
