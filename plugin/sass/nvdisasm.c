/* Running nvdisasm: posix_spawn with pipes, no shell, with a timeout (finding it: nvdisasm_find.c). */
#include "sass_internal.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static char *join(const char *dir, const char *sub, const char *name)
{
	size_t n = strlen(dir) + (sub ? strlen(sub) : 0) + strlen(name) + 3;
	char *p = malloc(n);
	if (p)
		snprintf(p, n, "%s/%s%s%s", dir, sub ? sub : "", sub ? "/" : "", name);
	return p;
}

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Write the cubin to a private temporary file; returns its path. */
static st_status temp_cubin(const uint8_t *data, size_t size, char **path, st_error *err)
{
	const char *dir = getenv("TMPDIR");
	if (!dir || !*dir)
		dir = "/tmp";
	char *p = join(dir, NULL, "sasstune-XXXXXX");
	if (!p)
		return st_error_set(err, ST_ENOMEM, "nvdisasm: out of memory");
	int fd = mkostemp(p, O_CLOEXEC);
	if (fd < 0) {
		st_status s = st_error_set(err, ST_EIO, "nvdisasm: cannot create a temporary file in %s: %s", dir,
					   strerror(errno));
		free(p);
		return s;
	}
	size_t done = 0;
	while (done < size) {
		ssize_t w = write(fd, data + done, size - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			st_status s = st_error_set(err, ST_EIO, "nvdisasm: cannot write %s: %s", p, strerror(errno));
			close(fd);
			unlink(p);
			free(p);
			return s;
		}
		done += (size_t)w;
	}
	close(fd);
	*path = p;
	return ST_OK;
}

st_status st_nvdisasm_run(const char *tool, const char *const *args, const uint8_t *cubin, size_t size,
			  int timeout_ms, char **out, size_t *outlen, st_error *err)
{
	*out = NULL;
	*outlen = 0;
	if (timeout_ms <= 0)
		timeout_ms = 60000;
	char *file = NULL;
	st_status s = temp_cubin(cubin, size, &file, err);
	if (s != ST_OK)
		return s;
	const char *argv[16];
	size_t argc = 0;
	argv[argc++] = tool;
	for (size_t i = 0; args && args[i] && argc < 14; i++)
		argv[argc++] = args[i];
	argv[argc++] = file;
	argv[argc] = NULL;

	int po[2] = {-1, -1}, pe[2] = {-1, -1};
	st_buf ob = {0}, eb = {0};
	pid_t pid = -1;
	posix_spawn_file_actions_t fa;
	int have_fa = 0;
	/* close-on-exec: a child spawned by another thread at the same time must not hold our pipe ends */
	if (pipe2(po, O_CLOEXEC) || pipe2(pe, O_CLOEXEC)) {
		s = st_error_set(err, ST_ETOOL, "nvdisasm: pipe: %s", strerror(errno));
		goto done;
	}
	if (posix_spawn_file_actions_init(&fa)) {
		s = st_error_set(err, ST_ENOMEM, "nvdisasm: out of memory");
		goto done;
	}
	have_fa = 1;
	posix_spawn_file_actions_addclose(&fa, po[0]);
	posix_spawn_file_actions_addclose(&fa, pe[0]);
	posix_spawn_file_actions_adddup2(&fa, po[1], 1);
	posix_spawn_file_actions_adddup2(&fa, pe[1], 2);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	int rc = posix_spawn(&pid, tool, &fa, NULL, (char *const *)argv, environ);
	if (rc) {
		pid = -1;
		s = st_error_set(err, ST_ETOOL, "nvdisasm: cannot run %s: %s", tool, strerror(rc));
		goto done;
	}
	close(po[1]);
	close(pe[1]);
	po[1] = pe[1] = -1;
	long long deadline = now_ms() + timeout_ms;
	int open_o = 1, open_e = 1, timed_out = 0;
	char chunk[65536];
	while (open_o || open_e) {
		long long left = deadline - now_ms();
		if (left <= 0) {
			timed_out = 1;
			break;
		}
		struct pollfd pf[2] = {{open_o ? po[0] : -1, POLLIN, 0}, {open_e ? pe[0] : -1, POLLIN, 0}};
		int pr = poll(pf, 2, (int)(left > 1000 ? 1000 : left));
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr < 0) {
			s = st_error_set(err, ST_ETOOL, "nvdisasm: poll: %s", strerror(errno));
			goto done;
		}
		for (int i = 0; i < 2; i++) {
			int *open_p = i ? &open_e : &open_o;
			if (!*open_p || !(pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			ssize_t r = read(pf[i].fd, chunk, sizeof chunk);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0) {
				*open_p = 0;
				continue;
			}
			st_buf *b = i ? &eb : &ob;
			if (i && b->len > 65536)
				continue; /* keep the start of stderr only */
			if (st_buf_append(b, chunk, (size_t)r) != ST_OK) {
				s = st_error_set(err, ST_ENOMEM, "nvdisasm: out of memory");
				goto done;
			}
		}
	}
	if (timed_out) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		pid = -1;
		s = st_error_set(err, ST_ETIMEOUT, "nvdisasm: %s timed out after %d ms", tool, timeout_ms);
		goto done;
	}
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	pid = -1;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		char line[200] = "";
		if (eb.len) {
			size_t n = strcspn((const char *)eb.data, "\n");
			if (n > eb.len)
				n = eb.len;
			if (n >= sizeof line)
				n = sizeof line - 1;
			memcpy(line, eb.data, n);
			line[n] = 0;
		}
		if (WIFEXITED(status))
			s = st_error_set(err, ST_ETOOL, "nvdisasm: %s exited with status %d%s%s", tool, WEXITSTATUS(status),
					 line[0] ? ": " : "", line);
		else
			s = st_error_set(err, ST_ETOOL, "nvdisasm: %s was killed by signal %d", tool, WTERMSIG(status));
		goto done;
	}
	if ((s = st_buf_append(&ob, "", 1)) != ST_OK) {
		s = st_error_set(err, ST_ENOMEM, "nvdisasm: out of memory");
		goto done;
	}
	*out = (char *)ob.data;
	*outlen = ob.len - 1;
	ob.data = NULL;
	s = ST_OK;
done:
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	if (have_fa)
		posix_spawn_file_actions_destroy(&fa);
	for (int i = 0; i < 2; i++) {
		if (po[i] >= 0)
			close(po[i]);
		if (pe[i] >= 0)
			close(pe[i]);
	}
	st_buf_free(&ob);
	st_buf_free(&eb);
	unlink(file);
	free(file);
	return s;
}
