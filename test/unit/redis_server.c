/* A real redis-server for tests (redis_server.h).  ST_REDIS_SERVER (from ctest) names the binary. */
#include "redis_server.h"

#include <hiredis/hiredis.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

/* A port the kernel says is free now (bound to 127.0.0.1:0, then closed). */
static int free_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t n = sizeof a;
	int port = -1;
	if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 && getsockname(fd, (struct sockaddr *)&a, &n) == 0)
		port = ntohs(a.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

static int pings(const st_test_redis *s)
{
	redisContext *c = redisConnectWithTimeout("127.0.0.1", s->port, (struct timeval){0, 200000});
	int ok = 0;
	if (c && !c->err) {
		redisReply *r = redisCommand(c, "PING");
		ok = r && r->type == REDIS_REPLY_STATUS;
		if (r)
			freeReplyObject(r);
	}
	if (c)
		redisFree(c);
	return ok;
}

static int launch(st_test_redis *s, const char *const *extra)
{
	const char *bin = getenv("ST_REDIS_SERVER") && *getenv("ST_REDIS_SERVER") ? getenv("ST_REDIS_SERVER") : "redis-server";
	char port[16];
	snprintf(port, sizeof port, "%d", s->port);
	const char *argv[40] = {bin, "--bind", "127.0.0.1", "--port", port, "--dir", s->dir, "--save", "",
				"--appendonly", "no", "--daemonize", "no", "--logfile", "redis.log", "--protected-mode", "yes"};
	int n = 17;
	for (int i = 0; extra && extra[i] && n < 38; i++)
		argv[n++] = extra[i];
	argv[n] = NULL;
	pid_t parent = getpid();
	s->pid = fork();
	if (s->pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlives the test */
		if (getppid() != parent)
			_exit(127);
		if (chdir(s->dir) != 0)
			_exit(127);
		execvp(bin, (char *const *)argv);
		_exit(127);
	}
	if (s->pid < 0)
		return -1;
	for (int i = 0; i < 100; i++) { /* at most 5 s */
		if (pings(s))
			return 0;
		if (waitpid(s->pid, NULL, WNOHANG) == s->pid) { /* died: port taken meanwhile, or no binary */
			s->pid = 0;
			return -1;
		}
		usleep(50 * 1000);
	}
	st_test_redis_kill(s);
	return -1;
}

int st_test_redis_start(st_test_redis *s, const char *const *extra)
{
	memset(s, 0, sizeof *s);
	snprintf(s->dir, sizeof s->dir, "/tmp/st-redis-XXXXXX");
	if (!mkdtemp(s->dir))
		return -1;
	for (int attempt = 0; attempt < 5; attempt++) {
		if ((s->port = free_port()) > 0 && launch(s, extra) == 0) {
			snprintf(s->url, sizeof s->url, "redis://127.0.0.1:%d/0", s->port);
			return 0;
		}
	}
	fprintf(stderr, "redis_server: could not start redis-server (see %s/redis.log)\n", s->dir);
	return -1;
}

void st_test_redis_kill(st_test_redis *s)
{
	if (s->pid > 0) {
		kill(s->pid, SIGCONT);
		kill(s->pid, SIGKILL);
		waitpid(s->pid, NULL, 0);
	}
	s->pid = 0;
}

void st_test_redis_stop(st_test_redis *s)
{
	if (s->pid > 0) {
		kill(s->pid, SIGCONT); /* a test may have stopped it */
		kill(s->pid, SIGTERM);
		for (int i = 0; i < 100 && waitpid(s->pid, NULL, WNOHANG) != s->pid; i++)
			usleep(20 * 1000);
		if (kill(s->pid, 0) == 0)
			st_test_redis_kill(s);
		s->pid = 0;
	}
	if (s->dir[0]) {
		char path[128];
		snprintf(path, sizeof path, "%s/redis.log", s->dir);
		unlink(path);
		rmdir(s->dir);
		s->dir[0] = '\0';
	}
}

long long st_test_redis_cmd(const st_test_redis *s, const char *fmt, ...)
{
	redisContext *c = redisConnectWithTimeout("127.0.0.1", s->port, (struct timeval){1, 0});
	long long v = -1;
	if (c && !c->err) {
		redisSetTimeout(c, (struct timeval){1, 0});
		va_list ap;
		va_start(ap, fmt);
		redisReply *r = redisvCommand(c, fmt, ap);
		va_end(ap);
		if (r && r->type != REDIS_REPLY_ERROR)
			v = r->type == REDIS_REPLY_INTEGER ? r->integer : 0;
		if (r)
			freeReplyObject(r);
	}
	if (c)
		redisFree(c);
	return v;
}
