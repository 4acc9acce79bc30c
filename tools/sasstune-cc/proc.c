/* sasstune-cc: running an external tool with fork/exec, no shell. */
#include "cc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

bool cc_verbose;

/* "sasstune-cc: message" and a newline on stderr. */
static void vmsg(const char *fmt, va_list ap)
{
	fputs("sasstune-cc: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void cc_msg(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
}

void cc_log(const char *fmt, ...)
{
	if (!cc_verbose)
		return;
	va_list ap;
	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
}

void cc_first_line(const char *text, char *out, size_t max)
{
	if (!max)
		return;
	out[0] = 0;
	if (!text)
		return;
	while (*text == '\n' || *text == '\r')
		text++;
	size_t n = strcspn(text, "\r\n");
	if (n >= max)
		n = max - 1;
	memcpy(out, text, n);
	out[n] = 0;
	while (n > 0 && (out[n - 1] == ' ' || out[n - 1] == '\t'))
		out[--n] = 0;
	/* keep the line printable */
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)out[i] < 0x20)
			out[i] = ' ';
}

void cc_proc_result_free(cc_proc_result *res)
{
	st_buf_free(&res->out);
	st_buf_free(&res->err);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void close_pair(int p[2])
{
	for (int i = 0; i < 2; i++)
		if (p[i] >= 0) {
			close(p[i]);
			p[i] = -1;
		}
}

/* Fork; in the child run argv with execv, or fn(arg, fd of the "out" pipe)
 * followed by exit().  Collect the child's out and stderr until both close,
 * then its status.  what names the child in messages. */
static st_status spawn(const char *what, char *const argv[], cc_child_fn fn, void *arg, unsigned timeout_s,
		       cc_proc_result *res, st_error *err)
{
	memset(res, 0, sizeof *res);
	int out_p[2] = {-1, -1}, err_p[2] = {-1, -1}, exec_p[2] = {-1, -1};
	if (pipe2(out_p, O_CLOEXEC) || pipe2(err_p, O_CLOEXEC) || pipe2(exec_p, O_CLOEXEC)) {
		st_status rc = st_error_set(err, ST_EIO, "%s: cannot create a pipe: %s", what, strerror(errno));
		close_pair(out_p);
		close_pair(err_p);
		close_pair(exec_p);
		return rc;
	}
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close_pair(out_p);
		close_pair(err_p);
		close_pair(exec_p);
		return st_error_set(err, ST_EIO, "%s: cannot fork: %s", what, strerror(e));
	}
	if (pid == 0) {
		int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC); /* dup2 makes fd 0 inheritable */
		if (devnull >= 0)
			dup2(devnull, 0);
		dup2(err_p[1], 2);
		if (argv) {
			/* only async-signal-safe calls on this path */
			dup2(out_p[1], 1);
			execv(argv[0], argv);
			int e = errno;
			ssize_t w = write(exec_p[1], &e, sizeof e);
			(void)w;
			_exit(127);
		}
		close(exec_p[1]);
		close(out_p[0]);
		close(err_p[0]);
		int code = fn(arg, out_p[1]);
		close(out_p[1]);
		fflush(stderr);
		exit(code); /* exit, not _exit: under the sanitizers the child's leaks are checked too */
	}
	close(out_p[1]);
	close(err_p[1]);
	close(exec_p[1]);

	/* Did exec succeed?  The pipe closes on exec (EOF) or carries errno. */
	int exec_errno = 0;
	ssize_t r;
	do
		r = read(exec_p[0], &exec_errno, sizeof exec_errno);
	while (r < 0 && errno == EINTR);
	close(exec_p[0]);

	st_status rc = ST_OK;
	struct pollfd fds[2] = {{out_p[0], POLLIN, 0}, {err_p[0], POLLIN, 0}};
	st_buf *bufs[2] = {&res->out, &res->err};
	int open_fds = 2;
	double deadline = timeout_s ? now_s() + timeout_s : 0;
	while (open_fds > 0) {
		int wait_ms = -1;
		if (deadline) {
			double left = deadline - now_s();
			if (left <= 0) {
				res->timed_out = true;
				kill(pid, SIGKILL);
				break;
			}
			wait_ms = (int)(left * 1000) + 1;
		}
		int n = poll(fds, 2, wait_ms);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			kill(pid, SIGKILL);
			rc = st_error_set(err, ST_EIO, "%s: poll failed: %s", what, strerror(errno));
			break;
		}
		for (int i = 0; i < 2; i++) {
			if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			char chunk[65536];
			ssize_t got = read(fds[i].fd, chunk, sizeof chunk);
			if (got < 0 && errno == EINTR)
				continue;
			if (got <= 0) {
				close(fds[i].fd);
				fds[i].fd = -1;
				open_fds--;
				continue;
			}
			if (rc == ST_OK && st_buf_append(bufs[i], chunk, (size_t)got) != ST_OK)
				rc = st_error_set(err, ST_ENOMEM, "%s: out of memory reading its output", what);
		}
	}
	for (int i = 0; i < 2; i++)
		if (fds[i].fd >= 0)
			close(fds[i].fd);

	int status = 0;
	pid_t w;
	do
		w = waitpid(pid, &status, 0);
	while (w < 0 && errno == EINTR);
	if (w < 0 && rc == ST_OK)
		rc = st_error_set(err, ST_EIO, "%s: waitpid failed: %s", what, strerror(errno));

	for (int i = 0; i < 2 && rc == ST_OK; i++)
		if (bufs[i]->len && st_buf_append(bufs[i], "", 1) == ST_OK)
			bufs[i]->len--; /* NUL-terminate, keep len */

	if (rc == ST_OK && r == (ssize_t)sizeof exec_errno)
		rc = st_error_set(err, ST_ENOTFOUND, "%s: cannot run: %s", what, strerror(exec_errno));
	if (rc != ST_OK) {
		cc_proc_result_free(res);
		return rc;
	}
	if (WIFSIGNALED(status))
		res->signal = WTERMSIG(status);
	else if (WIFEXITED(status))
		res->exit_code = WEXITSTATUS(status);
	return ST_OK;
}

st_status cc_run_tool(char *const argv[], unsigned timeout_s, cc_proc_result *res, st_error *err)
{
	return spawn(argv[0], argv, NULL, NULL, timeout_s, res, err);
}

st_status cc_run_child(const char *what, cc_child_fn fn, void *arg, unsigned timeout_s, cc_proc_result *res,
		       st_error *err)
{
	return spawn(what, NULL, fn, arg, timeout_s, res, err);
}
