/* The caller's side of a session: finds and starts sasstune-worker
 * (fork+exec, a socket pair on its stdin/stdout), sends requests with a
 * watchdog deadline, kills and restarts the worker after a crash or hang, and
 * turns raw timings into ratios with intervals.  This side never loads the
 * CUDA driver. */
#include "rt.h"
#include "sasstune/profile.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_PAIRS 100000u

struct st_session {
	st_runtime_options opt;
	char *worker_path, *libcuda, *spec_text, *base_dir;
	uint8_t *cubin;
	size_t cubin_size;
	pid_t pid;
	int fd;
	unsigned starts;
	uint64_t digest;
	unsigned reps;
	st_session_info info;
};

void st_runtime_options_init(st_runtime_options *o)
{
	memset(o, 0, sizeof *o);
	o->verify_sets = 2;
	o->pairs = 100;
	o->warmup_ms = 25;
	o->sample_us = 50;
	o->seed = 1;
	o->bootstrap = 2000;
	o->tolerance = 1e-3;
	o->timeout_s = 5; /* nothing here reads the environment: check_reference stays off (the CLI and the
			   * pass turn it on from $SASSTUNE_CHECK_REFERENCE themselves) */
}

/* ---- finding the worker ---- */
static char *exe_in(const char *dir, size_t dirlen)
{
	const char *name = "sasstune-worker";
	size_t n = dirlen + strlen(name) + 2;
	char *p = malloc(n);
	if (!p)
		return NULL;
	snprintf(p, n, "%.*s/%s", (int)dirlen, dir, name);
	if (access(p, X_OK) == 0)
		return p;
	free(p);
	return NULL;
}

static char *next_to(const char *file)
{
	const char *slash = file ? strrchr(file, '/') : NULL;
	return slash ? exe_in(file, (size_t)(slash - file)) : NULL;
}

static char *find_worker(const st_runtime_options *o, st_error *err)
{
	const char *given = o->worker && *o->worker ? o->worker : getenv("SASSTUNE_WORKER");
	if (given && *given) {
		if (access(given, X_OK) != 0) {
			st_error_set(err, ST_ENOTFOUND, "the worker %s is not an executable file: %s", given, strerror(errno));
			return NULL;
		}
		return strdup(given);
	}
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	char *p = NULL;
	if (n > 0) {
		self[n] = 0;
		p = next_to(self);
	}
	Dl_info info;
	if (!p && dladdr((void *)&st_session_open, &info) && info.dli_fname)
		p = next_to(info.dli_fname);
	const char *path = getenv("PATH");
	while (!p && path && *path) {
		const char *end = strchr(path, ':');
		size_t len = end ? (size_t)(end - path) : strlen(path);
		if (len)
			p = exe_in(path, len);
		path = end ? end + 1 : NULL;
	}
	if (!p)
		st_error_set(err, ST_ENOTFOUND, "cannot find sasstune-worker: set SASSTUNE_WORKER, or install it next to the sasstune command or libsasstune.so");
	return p;
}

/* ---- the worker process ---- */
static void describe_exit(int status, char *buf, size_t n)
{
	if (WIFSIGNALED(status))
		snprintf(buf, n, "killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
	else if (WIFEXITED(status))
		snprintf(buf, n, "exited with status %d", WEXITSTATUS(status));
	else
		snprintf(buf, n, "stopped");
}

/* Kill (if asked) and reap the worker; describes how it ended. */
static void stop_worker(st_session *s, bool kill_it, char *how, size_t how_len)
{
	if (how_len)
		snprintf(how, how_len, "ended");
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	if (s->pid <= 0)
		return;
	if (kill_it)
		kill(s->pid, SIGKILL);
	int status = 0;
	pid_t r;
	while ((r = waitpid(s->pid, &status, 0)) < 0 && errno == EINTR)
		;
	if (r == s->pid && how_len)
		describe_exit(status, how, how_len);
	s->pid = 0;
}

static st_status spawn(st_session *s, st_error *err)
{
	int sv[2], ep[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		return st_error_set(err, ST_EIO, "cannot create a socket pair for the worker: %s", strerror(errno));
	if (pipe2(ep, O_CLOEXEC) != 0) {
		close(sv[0]);
		close(sv[1]);
		return st_error_set(err, ST_EIO, "cannot create a pipe: %s", strerror(errno));
	}
	static char serve[] = "--serve";
	char *argv[] = {s->worker_path, serve, NULL};
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(sv[0]);
		close(sv[1]);
		close(ep[0]);
		close(ep[1]);
		return st_error_set(err, ST_EIO, "cannot fork the worker: %s", strerror(e));
	}
	if (pid == 0) { /* child: async-signal-safe calls only */
		int fd = sv[1];
		if (fd <= 1)
			fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (fd < 0 || dup2(fd, 0) < 0 || dup2(fd, 1) < 0) {
			int e = errno;
			(void)!write(ep[1], &e, sizeof e);
			_exit(127);
		}
		/* hold none of the caller's other descriptors (a pipe end kept open
		 * here would keep its reader from seeing end-of-file) */
		bool closed = false;
#ifdef SYS_close_range
		closed = (ep[1] <= 3 || syscall(SYS_close_range, 3u, (unsigned)ep[1] - 1, 0u) == 0) &&
			 syscall(SYS_close_range, (unsigned)ep[1] + 1, ~0u, 0u) == 0;
#endif
		for (int i = 3; !closed && i < 4096; i++)
			if (i != ep[1])
				close(i);
		execv(argv[0], argv);
		int e = errno;
		(void)!write(ep[1], &e, sizeof e);
		_exit(127);
	}
	close(sv[1]);
	close(ep[1]);
	int child_errno = 0;
	ssize_t n;
	while ((n = read(ep[0], &child_errno, sizeof child_errno)) < 0 && errno == EINTR)
		;
	close(ep[0]);
	s->pid = pid;
	s->fd = sv[0];
	if (n > 0) {
		stop_worker(s, true, NULL, 0);
		return st_error_set(err, ST_EIO, "cannot run the worker %s: %s", s->worker_path, strerror(child_errno));
	}
	return ST_OK;
}

static double now(void) { return st_rt_now_ms(); }

/* One request and its reply.  On a hang the worker is killed; after a crash
 * it is reaped; either way the next request starts a new one. */
static st_status exchange(st_session *s, uint32_t type, const st_rt_writer *req, double timeout_ms, uint8_t **payload,
			  st_rt_reader *rd, st_error *err)
{
	*payload = NULL;
	st_status rc = st_rt_msg_send(s->fd, type, req, err);
	uint32_t rtype = 0;
	size_t len = 0;
	double deadline = now() + timeout_ms;
	while (rc == ST_OK) {
		rc = st_rt_msg_recv(s->fd, deadline, &rtype, payload, &len, err);
		if (rc != ST_OK || rtype != ST_MSG_PROGRESS)
			break;
		/* the worker says how much GPU time is left: allow that, four times over */
		st_rt_reader pr = {.p = *payload, .left = len};
		double left = st_rt_get_f64(&pr);
		free(*payload);
		*payload = NULL;
		timeout_ms = 1000 * s->opt.timeout_s + (pr.bad || !(left >= 0) ? 0 : 4 * fmin(left, 1e9));
		deadline = now() + timeout_ms;
	}
	char how[96];
	if (rc == ST_ETIMEOUT) {
		stop_worker(s, true, how, sizeof how);
		return st_error_set(err, ST_ETIMEOUT, "no answer within %.1f s (hung?); the worker was killed",
				    timeout_ms / 1000);
	}
	if (rc == ST_EIO) {
		stop_worker(s, true, how, sizeof how);
		return st_error_set(err, ST_ECRASH, "the worker died (%s)", how);
	}
	if (rc != ST_OK || rtype != ST_MSG_REPLY) {
		stop_worker(s, true, how, sizeof how);
		free(*payload);
		*payload = NULL;
		return rc != ST_OK ? rc : st_error_set(err, ST_EFORMAT, "the worker sent a malformed reply");
	}
	*rd = (st_rt_reader){.p = *payload, .left = len};
	st_status status = (st_status)(int32_t)st_rt_get_u32(rd);
	char *msg = st_rt_get_str(rd);
	if (rd->bad || !msg) {
		free(msg);
		stop_worker(s, true, how, sizeof how);
		return st_error_set(err, ST_EFORMAT, "the worker sent a malformed reply");
	}
	if (status != ST_OK)
		st_error_set(err, status, "%s", msg[0] ? msg : st_status_str(status));
	free(msg);
	if (status == ST_ECRASH)
		stop_worker(s, true, how, sizeof how); /* its context is gone; it exits by itself */
	return status;
}

static st_status start_worker(st_session *s, st_error *err)
{
	double t0 = now();
	st_status rc = spawn(s, err);
	if (rc != ST_OK)
		return rc;
	const st_runtime_options *o = &s->opt;
	st_rt_writer w = {0};
	st_rt_put_u32(&w, ST_PROTO_VERSION);
	st_rt_put_u32(&w, o->verify_sets);
	st_rt_put_u64(&w, o->seed);
	st_rt_put_u32(&w, o->flush_l2);
	st_rt_put_u32(&w, (uint32_t)o->device);
	st_rt_put_f64(&w, o->sample_us);
	st_rt_put_f64(&w, o->warmup_ms);
	st_rt_put_f64(&w, o->tolerance);
	st_rt_put_u32(&w, s->starts && !s->info.deterministic ? ST_INIT_NONDET : 0);
	st_rt_put_str(&w, s->libcuda);
	st_rt_put_str(&w, s->spec_text);
	st_rt_put_str(&w, s->base_dir);
	st_rt_put_blob(&w, s->cubin, s->cubin_size);
	uint8_t *payload;
	st_rt_reader rd;
	rc = exchange(s, ST_MSG_INIT, &w, 1000 * (o->timeout_s + 60), &payload, &rd, err);
	st_buf_free(&w.b);
	if (rc != ST_OK) {
		free(payload);
		stop_worker(s, true, NULL, 0);
		return rc;
	}
	char *dev = st_rt_get_str(&rd);
	unsigned ccmaj = st_rt_get_u32(&rd), ccmin = st_rt_get_u32(&rd);
	(void)ccmaj, (void)ccmin;
	st_rt_get_u32(&rd); /* driver */
	st_rt_get_u32(&rd); /* SMs */
	st_rt_get_u32(&rd); /* L2 */
	bool det = st_rt_get_u32(&rd) != 0;
	double kernel_ms = st_rt_get_f64(&rd);
	unsigned reps = st_rt_get_u32(&rd);
	int regs = (int)st_rt_get_u32(&rd), local = (int)st_rt_get_u32(&rd);
	uint64_t digest = st_rt_get_u64(&rd);
	st_rt_get_f64(&rd); /* the worker's own init time */
	bool on_gpu = st_rt_get_u32(&rd) != 0;
	free(payload);
	if (rd.bad || !dev) {
		free(dev);
		stop_worker(s, true, NULL, 0);
		return st_error_set(err, ST_EFORMAT, "the worker sent a malformed INIT reply");
	}
	double ms = now() - t0;
	if (s->starts == 0) {
		snprintf(s->info.device, sizeof s->info.device, "%s", dev);
		s->info.deterministic = det;
		s->info.kernel_ms = kernel_ms;
		s->info.start_ms = ms;
		s->info.regs = regs;
		s->info.local_bytes = local;
		s->info.verify_on_gpu = on_gpu;
		s->digest = digest;
		s->reps = reps;
	} else {
		s->info.restarts++;
		s->info.restart_ms += ms;
		/* the same seeded inputs and reference must give the same outputs (unless
		 * the reference is not deterministic: then only within the tolerance) */
		if (det != s->info.deterministic || (det && digest != s->digest)) {
			free(dev);
			stop_worker(s, true, NULL, 0);
			return st_error_set(err, ST_EDEVICE, "a restarted worker computed different reference outputs than the first one");
		}
		s->reps = reps;
	}
	free(dev);
	s->starts++;
	return ST_OK;
}

static st_status ensure_worker(st_session *s, st_error *err)
{
	return s->pid > 0 ? ST_OK : start_worker(s, err);
}

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

st_status st_session_open(const uint8_t *cubin, size_t size, const st_launch *spec, const st_runtime_options *opt,
			  st_session **out, st_error *err)
{
	*out = NULL;
	if (!cubin || !size || !spec)
		return st_error_set(err, ST_EINVAL, "st_session_open: no cubin or no launch spec");
	st_session *s = calloc(1, sizeof *s);
	if (!s)
		return st_error_set(err, ST_ENOMEM, "out of memory");
	s->fd = -1;
	if (opt)
		s->opt = *opt;
	else
		st_runtime_options_init(&s->opt);
	st_runtime_options *o = &s->opt;
	st_status rc = ST_OK;
	if (o->verify_sets < 1 || o->verify_sets > 64)
		rc = st_error_set(err, ST_EINVAL, "verify sets must be 1 to 64, not %u", o->verify_sets);
	else if (o->pairs < 1 || o->pairs > MAX_PAIRS)
		rc = st_error_set(err, ST_EINVAL, "pairs must be 1 to %u, not %u", MAX_PAIRS, o->pairs);
	else if (!(o->timeout_s > 0) || !(o->warmup_ms >= 0) || !(o->sample_us >= 0) || !(o->tolerance >= 0))
		rc = st_error_set(err, ST_EINVAL, "timeout must be positive; warmup, sample time and tolerance not negative");
	if (rc == ST_OK) {
		o->worker = NULL;
		o->libcuda = NULL;
		s->worker_path = find_worker(opt ? opt : o, err);
		if (!s->worker_path)
			rc = err && err->code ? err->code : ST_ENOTFOUND;
	}
	if (rc == ST_OK) {
		s->libcuda = dup_or_null(opt && opt->libcuda ? opt->libcuda : NULL);
		s->spec_text = strdup(spec->text);
		s->base_dir = dup_or_null(spec->base_dir);
		s->cubin = malloc(size);
		if (!s->spec_text || !s->cubin || (opt && opt->libcuda && !s->libcuda) || (spec->base_dir && !s->base_dir))
			rc = st_error_set(err, ST_ENOMEM, "out of memory");
	}
	if (rc == ST_OK) {
		memcpy(s->cubin, cubin, size);
		s->cubin_size = size;
		s->info.verify_sets = o->verify_sets;
		rc = start_worker(s, err);
	}
	if (rc != ST_OK) {
		st_session_close(s);
		return rc;
	}
	*out = s;
	return ST_OK;
}

void st_session_close(st_session *s)
{
	if (!s)
		return;
	if (s->pid > 0 && s->fd >= 0) {
		st_rt_msg_send(s->fd, ST_MSG_QUIT, NULL, NULL);
		/* give it a moment to free its context, then insist */
		int status;
		for (int i = 0; i < 300; i++) {
			pid_t r = waitpid(s->pid, &status, WNOHANG);
			if (r == s->pid || (r < 0 && errno != EINTR)) {
				s->pid = 0;
				break;
			}
			usleep(10 * 1000);
		}
	}
	stop_worker(s, true, NULL, 0);
	free(s->worker_path);
	free(s->libcuda);
	free(s->spec_text);
	free(s->base_dir);
	free(s->cubin);
	free(s);
}

/* Expected GPU time of a request, for the watchdog. */
static double budget_ms(const st_session *s, double gpu_ms)
{
	return 1000 * s->opt.timeout_s + 4 * gpu_ms;
}

static st_status verify_once(st_session *s, const uint8_t *cubin, size_t size, st_error *err)
{
	st_status rc = ensure_worker(s, err);
	if (rc != ST_OK)
		return st_error_wrap(err, "starting a new worker"), rc;
	s->info.last_load_ms = 0;
	s->info.regs = s->info.local_bytes = 0;
	st_rt_writer w = {0};
	st_rt_put_blob(&w, cubin, size);
	uint8_t *payload;
	st_rt_reader rd;
	double gpu = 2.0 * s->opt.verify_sets * s->info.kernel_ms;
	rc = exchange(s, ST_MSG_VERIFY, &w, budget_ms(s, gpu), &payload, &rd, err);
	st_buf_free(&w.b);
	if (payload) {
		st_rt_reader r2 = rd;
		double load_ms = st_rt_get_f64(&r2);
		st_rt_get_f64(&r2);
		int regs = (int)st_rt_get_u32(&r2), local = (int)st_rt_get_u32(&r2);
		if (!r2.bad) {
			s->info.last_load_ms = load_ms;
			s->info.regs = regs;
			s->info.local_bytes = local;
		}
	}
	free(payload);
	return rc;
}

st_status st_session_check_reference(st_session *s, st_error *err)
{
	if (!s)
		return st_error_set(err, ST_EINVAL, "st_session_check_reference: no session");
	st_status rc = ensure_worker(s, err);
	if (rc != ST_OK)
		return st_error_wrap(err, "starting a new worker"), rc;
	st_rt_writer w = {0};
	uint8_t *payload;
	st_rt_reader rd;
	s->info.reference_checks++;
	rc = exchange(s, ST_MSG_CHECK, &w, budget_ms(s, 2.0 * s->opt.verify_sets * s->info.kernel_ms), &payload, &rd, err);
	free(payload);
	if (rc == ST_ECRASH || rc == ST_ETIMEOUT) { /* it ran fine at the start: now its state is broken */
		st_error_wrap(err, "the reference no longer runs");
		rc = ST_ECONTAMINATED;
	}
	if (rc == ST_ECONTAMINATED) {
		if (err)
			err->code = rc;
		s->info.contaminations++;
		stop_worker(s, true, NULL, 0); /* the next call starts a fresh one */
	}
	return rc;
}

/* After a candidate ran alone in a fresh worker (or, checks on, right after its OK verification):
 * a contaminated reference now is its own stray write.  Turns *rc into ST_EMISMATCH saying so. */
static void blame_stray(st_session *s, st_status *rc, st_error *err)
{
	st_error e2 = {0};
	if (st_session_check_reference(s, &e2) != ST_ECONTAMINATED)
		return;
	s->info.last_stray = true;
	*rc = st_error_set(err, ST_EMISMATCH, "the candidate wrote outside its buffers (%s)", e2.msg);
}

/* Verify; a mismatch (or with opt.check_reference, a pass) is followed by a check of the reference.
 * Contaminated: some earlier kernel (or this one) wrote outside its buffers, so this verdict means
 * nothing; the candidate is verified again in a fresh worker, where it runs alone, and checked
 * once more there.  An error of the check itself leaves the verdict as it was. */
st_status st_session_verify(st_session *s, const uint8_t *cubin, size_t size, st_error *err)
{
	if (!s || !cubin || !size)
		return st_error_set(err, ST_EINVAL, "st_session_verify: no cubin");
	s->info.last_stray = false;
	st_status rc = verify_once(s, cubin, size, err);
	if (rc != ST_EMISMATCH && !(rc == ST_OK && s->opt.check_reference))
		return rc;
	st_error e2 = {0};
	if (st_session_check_reference(s, &e2) != ST_ECONTAMINATED)
		return rc;
	rc = verify_once(s, cubin, size, err);
	if (rc == ST_OK || rc == ST_EMISMATCH)
		blame_stray(s, &rc, err);
	return rc;
}

static st_status timing(st_session *s, const uint8_t *a, size_t na, const uint8_t *b, size_t nb, unsigned flags,
			unsigned pairs, st_timing *out, st_error *err)
{
	memset(out, 0, sizeof *out);
	if (!pairs)
		pairs = s->opt.pairs;
	if (pairs > MAX_PAIRS)
		return st_error_set(err, ST_EINVAL, "at most %u pairs", MAX_PAIRS);
	st_status rc = ensure_worker(s, err);
	if (rc != ST_OK)
		return st_error_wrap(err, "starting a new worker"), rc;
	st_rt_writer w = {0};
	st_rt_put_u32(&w, pairs);
	st_rt_put_u32(&w, flags);
	st_rt_put_blob(&w, a, a ? na : 0);
	st_rt_put_blob(&w, b, b ? nb : 0);
	double gpu = s->opt.warmup_ms + 2.0 * pairs * s->reps * s->info.kernel_ms + (s->opt.flush_l2 ? 0.2 * 2 * pairs : 0);
	uint8_t *payload;
	st_rt_reader rd;
	rc = exchange(s, ST_MSG_TIME, &w, budget_ms(s, gpu), &payload, &rd, err);
	st_buf_free(&w.b);
	if (rc != ST_OK) {
		free(payload);
		return rc;
	}
	unsigned n = st_rt_get_u32(&rd), reps = st_rt_get_u32(&rd);
	st_rt_get_f64(&rd);
	double *ta = NULL, *tb = NULL, *ratio = NULL;
	if (!rd.bad && n == pairs && rd.left == 16ull * n) {
		ta = malloc(n * sizeof *ta);
		tb = malloc(n * sizeof *tb);
		ratio = malloc(n * sizeof *ratio);
	}
	if (!ta || !tb || !ratio) {
		rc = rd.bad || n != pairs ? st_error_set(err, ST_EFORMAT, "the worker sent a malformed TIME reply")
					  : st_error_set(err, ST_ENOMEM, "out of memory");
	} else {
		for (unsigned i = 0; i < n; i++)
			ta[i] = st_rt_get_f64(&rd);
		for (unsigned i = 0; i < n; i++)
			tb[i] = st_rt_get_f64(&rd);
		for (unsigned i = 0; i < n && rc == ST_OK; i++) {
			if (!(ta[i] > 0) || !(tb[i] > 0))
				rc = st_error_set(err, ST_EDEVICE, "a timed sample measured %g ms: the timer is too coarse, raise the sample time",
						  ta[i] > 0 ? tb[i] : ta[i]);
			ratio[i] = tb[i] / ta[i];
		}
		if (rc == ST_OK)
			rc = st_bootstrap_median(ratio, n, s->opt.bootstrap, s->opt.seed, &out->ratio, &out->ci_lo,
						 &out->ci_hi, err);
		if (rc == ST_OK) {
			out->a_ms = st_median(ta, n);
			out->b_ms = st_median(tb, n);
			out->n = n;
			out->reps = reps;
		}
	}
	free(ta);
	free(tb);
	free(ratio);
	free(payload);
	return rc;
}

st_status st_session_compare(st_session *s, const uint8_t *a, size_t a_size, const uint8_t *b, size_t b_size,
			     unsigned pairs, st_timing *out, st_error *err)
{
	if (!s || !out)
		return st_error_set(err, ST_EINVAL, "st_session_compare: no session or no result");
	return timing(s, a, a_size, b, b_size, 0, pairs, out, err);
}

st_status st_session_noise(st_session *s, const uint8_t *a, size_t a_size, unsigned pairs, st_timing *out,
			   st_error *err)
{
	if (!s || !out)
		return st_error_set(err, ST_EINVAL, "st_session_noise: no session or no result");
	return timing(s, a, a_size, NULL, 0, ST_TIME_B_IS_COPY, pairs, out, err);
}

void st_session_get_info(const st_session *s, st_session_info *info) { *info = s->info; }

st_status st_session_profile(st_session *s, const uint8_t *cubin, size_t size, unsigned period, double target_ms,
			     unsigned max_launches, st_profile **out, st_error *err)
{
	*out = NULL;
	if (!s || (period && (period < 5 || period > 31)) || !max_launches || !(target_ms >= 0 && target_ms <= 1e6))
		return st_error_set(err, ST_EINVAL, "st_session_profile: bad arguments (period 0 or 5..31, launches >= 1)");
	st_status rc = ensure_worker(s, err);
	if (rc != ST_OK)
		return st_error_wrap(err, "starting a new worker"), rc;
	st_rt_writer w = {0};
	st_rt_put_u32(&w, period);
	st_rt_put_u32(&w, max_launches);
	st_rt_put_f64(&w, target_ms);
	st_rt_put_blob(&w, cubin, cubin ? size : 0);
	uint8_t *payload;
	st_rt_reader rd;
	/* CUPTI's own start-up, then the launches (the worker reports their expected time) */
	rc = exchange(s, ST_MSG_PROFILE, &w, budget_ms(s, 30000 + 20 * target_ms), &payload, &rd, err);
	st_buf_free(&w.b);
	char *text = rc == ST_OK ? st_rt_get_str(&rd) : NULL;
	free(payload);
	if (rc == ST_OK && !text)
		rc = st_error_set(err, ST_EFORMAT, "the worker sent a malformed PROFILE reply");
	if (rc == ST_OK && (rc = st_profile_parse(text, strlen(text), out, err)) != ST_OK)
		st_error_wrap(err, "the worker's samples");
	if (rc == ST_OK)
		snprintf(st_profile_meta_of(*out)->device, sizeof st_profile_meta_of(*out)->device, "%s", s->info.device);
	free(text);
	return rc;
}
