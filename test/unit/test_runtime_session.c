/* Sessions end to end without a GPU: the real worker process, driven through
 * a mock CUDA driver (test/mock/cuda_mock.c), so that verification, faults,
 * hangs, worker restarts and the timing statistics are all exercised in CI. */
#include "testutil.h"

#include "sasstune/runtime.h"

#include <stdarg.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

static st_test_mock M;

static int setup(void **state)
{
	(void)state;
	st_test_mock_init(&M, ST_SOURCE_DIR "/build");
	return 0;
}

static void options(st_runtime_options *o)
{
	st_test_mock_options(&M, o);
}

static st_launch *spec(void)
{
	return st_test_mock_spec();
}

#define CUBIN ST_TEST_MOCK_CUBIN
#define SIZE ST_TEST_MOCK_SIZE

static st_session *open_ok(const uint8_t *ref, const st_runtime_options *o, st_launch *l)
{
	st_session *s = NULL;
	st_error err = {0};
	if (st_session_open(ref, SIZE(ref), l, o, &s, &err) != ST_OK)
		fail_msg("open: %s", err.msg);
	return s;
}

static void expect(st_status got, st_status want, const st_error *err, const char *needle)
{
	if (got != want)
		fail_msg("status %d (%s), expected %d", got, err->msg, want);
	if (needle && !strstr(err->msg, needle))
		fail_msg("message '%s' lacks '%s'", err->msg, needle);
	assert_null(strchr(err->msg, '\n'));
}

static void test_no_driver(void **state)
{
	(void)state;
	st_runtime_options o;
	options(&o);
	o.libcuda = "/nonexistent/libcuda.so.1";
	st_launch *l = spec();
	st_session *s = NULL;
	st_error err = {0};
	st_status rc = st_session_open(CUBIN("op add\n"), SIZE(CUBIN("op add\n")), l, &o, &s, &err);
	expect(rc, ST_EDEVICE, &err, "cannot load the CUDA driver /nonexistent/libcuda.so.1");
	assert_null(s);
	setenv("MOCK_CUDA_DEVICES", "0", 1);
	o.libcuda = M.libcuda;
	rc = st_session_open(CUBIN("op add\n"), SIZE(CUBIN("op add\n")), l, &o, &s, &err);
	unsetenv("MOCK_CUDA_DEVICES");
	expect(rc, ST_EDEVICE, &err, "no CUDA device 0 (this machine has 0)");
	st_launch_free(l);
}

/* The worker opens the ordinal the options name (the launch's device), not device 0. */
static void test_device_ordinal(void **state)
{
	(void)state;
	st_runtime_options o;
	options(&o);
	st_launch *l = spec();
	setenv("MOCK_CUDA_DEVICES", "2", 1);
	o.device = 1;
	st_session *s = open_ok(CUBIN("op add\n"), &o, l);
	st_session_info info;
	st_session_get_info(s, &info);
	if (!strstr(info.device, "Mock GPU #1"))
		fail_msg("opened '%s', expected device 1", info.device);
	st_error err = {0};
	assert_int_equal(st_session_verify(s, CUBIN("op add\n"), SIZE(CUBIN("op add\n")), &err), ST_OK);
	st_session_close(s);
	o.device = 2;
	s = NULL;
	st_status rc = st_session_open(CUBIN("op add\n"), SIZE(CUBIN("op add\n")), l, &o, &s, &err);
	unsetenv("MOCK_CUDA_DEVICES");
	expect(rc, ST_EDEVICE, &err, "no CUDA device 2 (this machine has 2)");
	assert_null(s);
	st_launch_free(l);
}

/* The pid of a child of `parent` (from /proc), or 0. */
static pid_t child_of(pid_t parent)
{
	char path[300], buf[512];
	DIR *d = opendir("/proc");
	struct dirent *de;
	pid_t found = 0;
	while (d && !found && (de = readdir(d))) {
		pid_t p = (pid_t)atoi(de->d_name);
		snprintf(path, sizeof path, "/proc/%s/stat", de->d_name);
		FILE *f = p > 0 ? fopen(path, "r") : NULL;
		if (!f)
			continue;
		size_t n = fread(buf, 1, sizeof buf - 1, f);
		fclose(f);
		buf[n] = 0;
		const char *e = strrchr(buf, ')'); /* "pid (comm) S ppid ..." */
		int ppid = 0;
		char st = 0;
		if (e && sscanf(e + 1, " %c %d", &st, &ppid) == 2 && ppid == parent)
			found = p;
	}
	if (d)
		closedir(d);
	return found;
}

/* Running (not gone, not a zombie)? */
static int alive(pid_t p)
{
	char path[64], buf[512];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)p);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	const char *e = strrchr(buf, ')');
	return e && e[1] == ' ' && e[2] != 'Z' && e[2] != 'X';
}

/* A tuner killed with SIGKILL (no cleanup at all) leaves no worker behind: the worker sees its
 * parent go (runtime/worker.c, parent_watch) and exits by itself. */
static void test_killed_caller_leaves_no_worker(void **state)
{
	(void)state;
	int ready[2];
	assert_int_equal(pipe(ready), 0);
	pid_t tuner = fork();
	assert_true(tuner >= 0);
	if (tuner == 0) {
		close(ready[0]);
		st_runtime_options o;
		options(&o);
		st_launch *l = spec();
		st_session *s = open_ok(CUBIN("op add\n"), &o, l);
		(void)s;
		if (write(ready[1], "r", 1) != 1)
			_exit(1);
		for (;;)
			pause(); /* killed here, session open */
	}
	close(ready[1]);
	char c;
	assert_int_equal(read(ready[0], &c, 1), 1);
	close(ready[0]);
	pid_t w = child_of(tuner);
	assert_true(w > 0 && alive(w));
	kill(tuner, SIGKILL);
	waitpid(tuner, NULL, 0);
	int gone = 0;
	for (int i = 0; i < 300 && !gone; i++) { /* a liveness bound (30 s), not a timing */
		gone = !alive(w);
		if (!gone)
			usleep(100 * 1000);
	}
	assert_true(gone);
}

static void test_no_worker(void **state)
{
	(void)state;
	st_runtime_options o;
	options(&o);
	o.worker = "/nonexistent/sasstune-worker";
	st_launch *l = spec();
	st_session *s = NULL;
	st_error err = {0};
	expect(st_session_open(CUBIN("op add\n"), SIZE(CUBIN("op add\n")), l, &o, &s, &err), ST_ENOTFOUND, &err,
	       "the worker /nonexistent/sasstune-worker is not an executable file");
	o.worker = NULL;
	setenv("SASSTUNE_WORKER", "/nonexistent/w", 1);
	expect(st_session_open(CUBIN("op add\n"), SIZE(CUBIN("op add\n")), l, &o, &s, &err), ST_ENOTFOUND, &err,
	       "/nonexistent/w");
	unsetenv("SASSTUNE_WORKER");
	o.worker = M.worker;
	o.verify_sets = 0;
	expect(st_session_open(CUBIN("op add\n"), SIZE(CUBIN("op add\n")), l, &o, &s, &err), ST_EINVAL, &err, "verify sets");
	st_launch_free(l);
}

static void test_reference_problems(void **state)
{
	(void)state;
	st_runtime_options o;
	options(&o);
	st_launch *l = spec();
	st_session *s = NULL;
	st_error err = {0};
	const uint8_t *fault = CUBIN("op fault\n");
	expect(st_session_open(fault, SIZE(fault), l, &o, &s, &err), ST_ECRASH, &err, "reference: ");
	assert_non_null(strstr(err.msg, "CUDA_ERROR_ILLEGAL_ADDRESS"));
	const uint8_t *five = CUBIN("op add\nparams 8 8 8 4 8\n");
	expect(st_session_open(five, SIZE(five), l, &o, &s, &err), ST_EFORMAT, &err,
	       "kernel add_kernel takes 5 parameters, the launch spec gives 6");
	const uint8_t *wide = CUBIN("op add\nparams 8 8 8 8 8 8\n");
	expect(st_session_open(wide, SIZE(wide), l, &o, &s, &err), ST_EFORMAT, &err,
	       "params[3]: kernel add_kernel takes 8 bytes there, the launch spec gives 4");
	const uint8_t *other = (const uint8_t *)"MOCKCUBIN\nkernel other\nend\n";
	expect(st_session_open(other, SIZE(other), l, &o, &s, &err), ST_ENOTFOUND, &err, "no kernel named add_kernel");
	const uint8_t *oob = CUBIN("op oob\n");
	expect(st_session_open(oob, SIZE(oob), l, &o, &s, &err), ST_EMISMATCH, &err, "wrote outside the buffer");
	const uint8_t *hang = CUBIN("op hang\n");
	expect(st_session_open(hang, SIZE(hang), l, &o, &s, &err), ST_ETIMEOUT, &err, "the worker was killed");
	assert_null(s);
	st_launch_free(l);
}

static void verify_outcomes(bool on_gpu)
{
	st_runtime_options o;
	options(&o);
	st_launch *l = spec();
	st_session *s = open_ok(CUBIN("op add\n"), &o, l);
	st_session_info info;
	st_session_get_info(s, &info);
	assert_true(info.deterministic);
	assert_int_equal(info.verify_on_gpu, on_gpu);
	assert_int_equal(info.verify_sets, 2);
	assert_int_equal(info.restarts, 0);
	assert_non_null(strstr(info.device, "Mock GPU (sm_90, driver 13.0)"));
	assert_true(info.kernel_ms > 0.009 && info.kernel_ms < 0.011);
	st_error err = {0};
	const uint8_t *good = CUBIN("op add\n# a different candidate\n");
	expect(st_session_verify(s, good, SIZE(good), &err), ST_OK, &err, NULL);
	expect(st_session_verify(s, CUBIN("op wrong\n"), SIZE(CUBIN("op wrong\n")), &err), ST_EMISMATCH, &err,
	       "input set 0: params[2]: 1 of 4096 fp32 elements differ, first at element 5");
	expect(st_session_verify(s, CUBIN("op oob\n"), SIZE(CUBIN("op oob\n")), &err), ST_EMISMATCH, &err,
	       "params[2]: the kernel wrote outside the buffer (byte offset 16384)");
	expect(st_session_verify(s, CUBIN("op fault\n"), SIZE(CUBIN("op fault\n")), &err), ST_ECRASH, &err,
	       "CUDA_ERROR_ILLEGAL_ADDRESS");
	/* the next candidate runs in a new worker */
	expect(st_session_verify(s, good, SIZE(good), &err), ST_OK, &err, NULL);
	st_session_get_info(s, &info);
	assert_int_equal(info.restarts, 1);
	assert_true(info.restart_ms > 0);
	expect(st_session_verify(s, CUBIN("op hang\n"), SIZE(CUBIN("op hang\n")), &err), ST_ETIMEOUT, &err,
	       "no answer within");
	expect(st_session_verify(s, good, SIZE(good), &err), ST_OK, &err, NULL);
	expect(st_session_verify(s, CUBIN("op die\n"), SIZE(CUBIN("op die\n")), &err), ST_ECRASH, &err,
	       "the worker died (killed by signal 9");
	expect(st_session_verify(s, good, SIZE(good), &err), ST_OK, &err, NULL);
	st_session_get_info(s, &info);
	assert_int_equal(info.restarts, 3);
	expect(st_session_verify(s, (const uint8_t *)"\177ELF junk", 9, &err), ST_EFORMAT, &err,
	       "the driver rejected the cubin: CUDA_ERROR_INVALID_IMAGE");
	const uint8_t *other = (const uint8_t *)"MOCKCUBIN\nkernel other\nend\n";
	expect(st_session_verify(s, other, SIZE(other), &err), ST_ENOTFOUND, &err, "no kernel named add_kernel");
	/* a bad candidate did not need a restart */
	expect(st_session_verify(s, good, SIZE(good), &err), ST_OK, &err, NULL);
	st_session_get_info(s, &info);
	assert_int_equal(info.restarts, 3);
	assert_int_equal(info.regs, 32);
	expect(st_session_verify(s, NULL, 0, &err), ST_EINVAL, &err, NULL);
	st_session_close(s);
	st_launch_free(l);
}

/* The worker holds none of the caller's descriptors: a pipe the caller
 * closes reaches end-of-file even while a worker runs. */
static void test_worker_holds_no_fds(void **state)
{
	(void)state;
	int p[2];
	assert_int_equal(pipe(p), 0); /* not close-on-exec */
	st_runtime_options o;
	options(&o);
	st_launch *l = spec();
	st_session *s = open_ok(CUBIN("op add\n"), &o, l);
	close(p[1]);
	struct pollfd pfd = {.fd = p[0], .events = POLLIN};
	assert_int_equal(poll(&pfd, 1, 2000), 1);
	char c;
	assert_int_equal(read(p[0], &c, 1), 0);
	close(p[0]);
	st_session_close(s);
	st_launch_free(l);
}

/* outputs compared by the (mock-run) comparison kernel, and on the host */
static void test_verify_outcomes(void **state)
{
	(void)state;
	verify_outcomes(true);
	setenv("MOCK_CUDA_NO_JIT", "1", 1);
	verify_outcomes(false);
	unsetenv("MOCK_CUDA_NO_JIT");
}

static void test_timing(void **state)
{
	(void)state;
	st_runtime_options o;
	options(&o);
	st_launch *l = spec();
	st_session *s = open_ok(CUBIN("op add\ntime_us 20\n"), &o, l);
	st_error err = {0};
	st_timing t;
	const uint8_t *fast = CUBIN("op add\ntime_us 18\n");
	expect(st_session_compare(s, NULL, 0, fast, SIZE(fast), 0, &t, &err), ST_OK, &err, NULL);
	assert_int_equal(t.n, 60);
	assert_int_equal(t.reps, 3); /* ceil(50 us / 20 us) */
	assert_true(fabs(t.ratio - 0.9) < 0.005);
	assert_true(t.ci_lo <= t.ratio && t.ratio <= t.ci_hi && t.ci_hi < 0.91 && t.ci_lo > 0.89);
	assert_true(fabs(t.a_ms - 0.020) < 0.0005 && fabs(t.b_ms - 0.018) < 0.0005);
	/* B against A is the inverse */
	expect(st_session_compare(s, fast, SIZE(fast), NULL, 0, 40, &t, &err), ST_OK, &err, NULL);
	assert_int_equal(t.n, 40);
	assert_true(fabs(t.ratio - 1 / 0.9) < 0.006);
	/* A/A */
	expect(st_session_noise(s, NULL, 0, 0, &t, &err), ST_OK, &err, NULL);
	assert_true(fabs(t.ratio - 1) < 0.003 && t.ci_lo < 1.0 + 1e-9 && t.ci_hi > 1.0 - 1e-9);
	/* a hang while timing is killed, and the next timing works */
	const uint8_t *hang = CUBIN("op hang\n");
	expect(st_session_compare(s, NULL, 0, hang, SIZE(hang), 10, &t, &err), ST_ETIMEOUT, &err, NULL);
	const uint8_t *fault = CUBIN("op fault\n");
	expect(st_session_compare(s, NULL, 0, fault, SIZE(fault), 10, &t, &err), ST_ECRASH, &err, NULL);
	expect(st_session_compare(s, NULL, 0, fast, SIZE(fast), 10, &t, &err), ST_OK, &err, NULL);
	assert_true(fabs(t.ratio - 0.9) < 0.01);
	st_session_close(s);
	/* without CUDA graphs: plain launches, the same answers */
	setenv("MOCK_CUDA_NO_GRAPHS", "1", 1);
	s = open_ok(CUBIN("op add\ntime_us 20\n"), &o, l);
	expect(st_session_compare(s, NULL, 0, fast, SIZE(fast), 30, &t, &err), ST_OK, &err, NULL);
	assert_int_equal(t.reps, 3);
	assert_true(fabs(t.ratio - 0.9) < 0.01);
	unsetenv("MOCK_CUDA_NO_GRAPHS");
	st_session_close(s);
	/* with the L2 flush: one launch per sample */
	o.flush_l2 = true;
	s = open_ok(CUBIN("op add\ntime_us 20\n"), &o, l);
	expect(st_session_compare(s, NULL, 0, fast, SIZE(fast), 30, &t, &err), ST_OK, &err, NULL);
	assert_int_equal(t.reps, 1);
	assert_true(fabs(t.ratio - 0.9) < 0.01);
	st_session_close(s);
	st_launch_free(l);
}

static void test_nondeterministic_reference(void **state)
{
	(void)state;
	st_runtime_options o;
	options(&o);
	st_launch *l = spec();
	st_session *s = open_ok(CUBIN("op nondet\n"), &o, l);
	st_session_info info;
	st_session_get_info(s, &info);
	assert_false(info.deterministic);
	st_error err = {0};
	expect(st_session_verify(s, CUBIN("op add\n"), SIZE(CUBIN("op add\n")), &err), ST_OK, &err, NULL);
	expect(st_session_verify(s, CUBIN("op wrong\n"), SIZE(CUBIN("op wrong\n")), &err), ST_EMISMATCH, &err,
	       "relative L2 error");
	/* a restarted worker keeps comparing within the tolerance */
	expect(st_session_verify(s, CUBIN("op fault\n"), SIZE(CUBIN("op fault\n")), &err), ST_ECRASH, &err, NULL);
	expect(st_session_verify(s, CUBIN("op add\n"), SIZE(CUBIN("op add\n")), &err), ST_OK, &err, NULL);
	expect(st_session_verify(s, CUBIN("op wrong\n"), SIZE(CUBIN("op wrong\n")), &err), ST_EMISMATCH, &err,
	       "relative L2 error");
	st_session_get_info(s, &info);
	assert_int_equal(info.restarts, 1);
	assert_false(info.deterministic);
	st_session_close(s);
	/* with no tolerance at all, the reference cannot be used */
	o.tolerance = 0;
	s = NULL;
	expect(st_session_open(CUBIN("op nondet\n"), SIZE(CUBIN("op nondet\n")), l, &o, &s, &err), ST_EMISMATCH, &err,
	       "not deterministic");
	st_launch_free(l);
}

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* Run a shell command; returns its exit status and its output (stdout+stderr). */
static int sh(char *out, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int sh(char *out, size_t n, const char *fmt, ...)
{
	char cmd[8192];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof cmd, fmt, ap);
	va_end(ap);
	strncat(cmd, " 2>&1", sizeof cmd - strlen(cmd) - 1);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	size_t got = fread(out, 1, n - 1, p);
	out[got] = 0;
	int st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The commands, end to end, on the mock driver: exit codes and reports. */
static void test_commands(void **state)
{
	(void)state;
	char dir[] = "/tmp/st_rt_cli_XXXXXX";
	assert_non_null(mkdtemp(dir));
	write_file(dir, "spec.json", st_test_mock_spec_json);
	write_file(dir, "good.cubin", "MOCKCUBIN\nkernel add_kernel\nop add\ntime_us 20\nend\n");
	write_file(dir, "fast.cubin", "MOCKCUBIN\nkernel add_kernel\nop add\ntime_us 19\nend\n");
	write_file(dir, "wrong.cubin", "MOCKCUBIN\nkernel add_kernel\nop wrong\nend\n");
	write_file(dir, "fault.cubin", "MOCKCUBIN\nkernel add_kernel\nop fault\nend\n");
	write_file(dir, "hang.cubin", "MOCKCUBIN\nkernel add_kernel\nop hang\nend\n");
	static char out[65536];
	const char *env = "SASSTUNE_LIBCUDA";
	int rc = sh(out, sizeof out, "cd %s && %s=%s %s/sasstune run good.cubin fast.cubin fault.cubin fast.cubin hang.cubin "
		    "wrong.cubin fast.cubin --launch spec.json --timeout 0.5 --warmup-ms 1 --pairs 30", dir, env, M.libcuda, M.bindir);
	if (rc != 1 || !strstr(out, "candidate 2/7 fast.cubin: ok, 0.01") ||
	    !strstr(out, "candidate 3/7 fault.cubin: crashed: kernel add_kernel on input set 0: CUDA_ERROR_ILLEGAL_ADDRESS") ||
	    !strstr(out, "candidate 4/7 fast.cubin: ok") || !strstr(out, "candidate 5/7 hang.cubin: timed_out: no answer within") ||
	    !strstr(out, "candidate 6/7 wrong.cubin: mismatch: input set 0: params[2]") ||
	    !strstr(out, "candidate 7/7 fast.cubin: ok") ||
	    !strstr(out, "summary: 7 candidates: 4 ok, 1 mismatch, 1 crashed, 1 timed out, 0 error") ||
	    !strstr(out, "2 worker restarts"))
		fail_msg("run: exit %d, output:\n%s", rc, out);
	rc = sh(out, sizeof out, "cd %s && %s=%s %s/sasstune run good.cubin fast.cubin --launch spec.json --json --warmup-ms 1",
		dir, env, M.libcuda, M.bindir);
	if (rc != 0 || !strstr(out, "\"status\":\t\"ok\"") || !strstr(out, "\"candidates_per_s\":") ||
	    !strstr(out, "\"deterministic\":\ttrue"))
		fail_msg("run --json: exit %d, output:\n%s", rc, out);
	rc = sh(out, sizeof out, "cd %s && %s=%s %s/sasstune compare good.cubin fast.cubin --launch spec.json --warmup-ms 1",
		dir, env, M.libcuda, M.bindir);
	if (rc != 0 || !strstr(out, "B/A = 0.9") || !strstr(out, "B is ") || !strstr(out, "% faster"))
		fail_msg("compare: exit %d, output:\n%s", rc, out);
	rc = sh(out, sizeof out, "cd %s && %s=%s %s/sasstune compare good.cubin wrong.cubin --launch spec.json", dir, env,
		M.libcuda, M.bindir);
	if (rc != 1 || !strstr(out, "sasstune compare: wrong.cubin: mismatch: input set 0: params[2]"))
		fail_msg("compare wrong: exit %d, output:\n%s", rc, out);
	rc = sh(out, sizeof out, "cd %s && %s=%s %s/sasstune noise good.cubin --launch spec.json --repeat 2 --json --warmup-ms 1",
		dir, env, M.libcuda, M.bindir);
	if (rc != 0 || !strstr(out, "\"max_deviation\":") || !strstr(out, "\"runs\":"))
		fail_msg("noise: exit %d, output:\n%s", rc, out);
	rc = sh(out, sizeof out, "cd %s && %s=/nonexistent/libcuda.so.1 %s/sasstune run good.cubin --launch spec.json", dir,
		env, M.bindir);
	if (rc != 1 || !strstr(out, "cannot load the CUDA driver /nonexistent/libcuda.so.1") || strchr(out, '\n') != out + strlen(out) - 1)
		fail_msg("no driver: exit %d, output:\n%s", rc, out);
	rc = sh(out, sizeof out, "%s/sasstune run x.cubin --launch l.json --pairs 0", M.bindir);
	assert_int_equal(rc, 2);
	rc = sh(out, sizeof out, "%s/sasstune-worker --help", M.bindir);
	if (rc != 0 || !strstr(out, "usage: sasstune-worker --serve"))
		fail_msg("worker --help: exit %d: %s", rc, out);
	rc = sh(out, sizeof out, "%s/sasstune-worker", M.bindir);
	assert_int_equal(rc, 2);
	sh(out, sizeof out, "rm -rf %s", dir);
}

/* A hidden buffer (the tensor behind a host TMA descriptor, not a kernel
 * parameter): the mock's add kernel writes its output through params[2], here a
 * tensor map whose first 8 bytes are the buffer's address (as the mock encodes
 * it).  The buffer is verified and guarded like a ptr param's. */
static const char spec_tma_fmt[] =
	"{\"kernel\":\"add_kernel\",\"grid\":[8],\"block\":[128],"
	"\"buffers\":[{\"dtype\":\"fp32\",\"bytes\":16384,\"init\":\"zeros\",\"name\":\"out\"%s}],\"params\":["
	"{\"kind\":\"ptr\",\"dtype\":\"fp32\",\"bytes\":16384,\"init\":\"randn\"},"
	"{\"kind\":\"ptr\",\"dtype\":\"fp32\",\"bytes\":16384,\"init\":\"randn\"},"
	"{\"kind\":\"tensormap\",\"buffer\":0,\"dtype\":\"fp32\",\"shape\":[4096],\"strides\":[1],\"box\":[128]},"
	"{\"kind\":\"i32\",\"value\":4096},{\"kind\":\"ptr\",\"bytes\":0},{\"kind\":\"ptr\",\"bytes\":0}]}";

#define TMA_CUBIN(body) CUBIN("params 8 8 128 4 8 8\n" body)

static st_launch *spec_tma(bool verify)
{
	char json[2048];
	snprintf(json, sizeof json, spec_tma_fmt, verify ? "" : ",\"verify\":false");
	st_launch *l = NULL;
	st_error err = {0};
	if (st_launch_parse(json, strlen(json), NULL, &l, &err) != ST_OK)
		fail_msg("%s", err.msg);
	return l;
}

static void hidden_buffer_outcomes(bool on_gpu)
{
	st_runtime_options o;
	options(&o);
	st_launch *l = spec_tma(true);
	st_error err = {0};
	st_session *s = NULL;
	/* the reference is checked too: a write past the hidden buffer's end */
	const uint8_t *oob = TMA_CUBIN("op oob\n");
	expect(st_session_open(oob, SIZE(oob), l, &o, &s, &err), ST_EMISMATCH, &err,
	       "reference: buffers[0] (out): the kernel wrote outside the buffer (byte offset 16384)");
	s = open_ok(TMA_CUBIN("op add\n"), &o, l);
	st_session_info info;
	st_session_get_info(s, &info);
	assert_true(info.deterministic);
	assert_int_equal(info.verify_on_gpu, on_gpu);
	const uint8_t *good = TMA_CUBIN("op add\n# another candidate\n");
	expect(st_session_verify(s, good, SIZE(good), &err), ST_OK, &err, NULL);
	/* an output written only through the descriptor is compared bit for bit */
	expect(st_session_verify(s, TMA_CUBIN("op wrong\n"), SIZE(TMA_CUBIN("op wrong\n")), &err), ST_EMISMATCH, &err,
	       "input set 0: buffers[0] (out): 1 of 4096 fp32 elements differ, first at element 5 (reference ");
	/* and its guard catches a write past its end */
	expect(st_session_verify(s, oob, SIZE(oob), &err), ST_EMISMATCH, &err,
	       "buffers[0] (out): the kernel wrote outside the buffer (byte offset 16384)");
	/* a restarted worker rebuilds the hidden buffer's reference (the digest matches) */
	expect(st_session_verify(s, TMA_CUBIN("op fault\n"), SIZE(TMA_CUBIN("op fault\n")), &err), ST_ECRASH, &err,
	       "CUDA_ERROR_ILLEGAL_ADDRESS");
	expect(st_session_verify(s, good, SIZE(good), &err), ST_OK, &err, NULL);
	expect(st_session_verify(s, TMA_CUBIN("op wrong\n"), SIZE(TMA_CUBIN("op wrong\n")), &err), ST_EMISMATCH, &err,
	       "input set 0: buffers[0] (out): 1 of 4096 fp32 elements differ");
	st_session_get_info(s, &info);
	assert_int_equal(info.restarts, 1);
	/* the spec must match the kernel: 8 bytes where the spec has a 128-byte tensor map */
	expect(st_session_verify(s, CUBIN("op add\n"), SIZE(CUBIN("op add\n")), &err), ST_EFORMAT, &err,
	       "params[2]: kernel add_kernel takes 8 bytes there, the launch spec gives 128");
	st_session_close(s);
	st_launch_free(l);
	/* verify: false skips its contents, but its guards are still checked */
	l = spec_tma(false);
	s = open_ok(TMA_CUBIN("op add\n"), &o, l);
	expect(st_session_verify(s, TMA_CUBIN("op wrong\n"), SIZE(TMA_CUBIN("op wrong\n")), &err), ST_OK, &err, NULL);
	expect(st_session_verify(s, oob, SIZE(oob), &err), ST_EMISMATCH, &err,
	       "buffers[0] (out): the kernel wrote outside the buffer (byte offset 16384)");
	st_session_close(s);
	st_launch_free(l);
}

static void test_hidden_buffers(void **state)
{
	(void)state;
	hidden_buffer_outcomes(true);
	setenv("MOCK_CUDA_NO_JIT", "1", 1);
	hidden_buffer_outcomes(false);
	unsetenv("MOCK_CUDA_NO_JIT");
}

/* The command names a hidden buffer in its report, too. */
static void test_hidden_buffer_command(void **state)
{
	(void)state;
	char dir[] = "/tmp/st_rt_tma_XXXXXX";
	assert_non_null(mkdtemp(dir));
	char json[2048];
	snprintf(json, sizeof json, spec_tma_fmt, "");
	write_file(dir, "spec.json", json);
	write_file(dir, "good.cubin", "MOCKCUBIN\nkernel add_kernel\nparams 8 8 128 4 8 8\nop add\nend\n");
	write_file(dir, "wrong.cubin", "MOCKCUBIN\nkernel add_kernel\nparams 8 8 128 4 8 8\nop wrong\nend\n");
	static char out[65536];
	int rc = sh(out, sizeof out, "cd %s && SASSTUNE_LIBCUDA=%s %s/sasstune run good.cubin wrong.cubin --launch spec.json "
		    "--timeout 0.5 --warmup-ms 1 --pairs 10", dir, M.libcuda, M.bindir);
	if (rc != 1 || !strstr(out, "candidate 2/2 wrong.cubin: mismatch: input set 0: buffers[0] (out): 1 of 4096 fp32 elements differ"))
		fail_msg("run: exit %d, output:\n%s", rc, out);
	sh(out, sizeof out, "rm -rf %s", dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_driver),
		cmocka_unit_test(test_no_worker),
		cmocka_unit_test(test_device_ordinal),
		cmocka_unit_test(test_killed_caller_leaves_no_worker),
		cmocka_unit_test(test_reference_problems),
		cmocka_unit_test(test_verify_outcomes),
		cmocka_unit_test(test_timing),
		cmocka_unit_test(test_nondeterministic_reference),
		cmocka_unit_test(test_commands),
		cmocka_unit_test(test_worker_holds_no_fds),
		cmocka_unit_test(test_hidden_buffers),
		cmocka_unit_test(test_hidden_buffer_command),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
