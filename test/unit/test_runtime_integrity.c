/* The reference integrity check (st_session_check_reference, docs/runtime.md "Verification"):
 * a candidate that writes outside its buffers, beyond the guards, into the worker's pristine
 * input copies or its stored reference (the mock's op stray), its own outputs right.  Every later
 * candidate in that worker would "mismatch"; the session notices, restarts the worker and
 * verifies again, and the estimate (checks on) reports the culprit itself. */
#include "testutil.h"

#include "sasstune/runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static st_test_mock M;

static int setup(void **state)
{
	(void)state;
	st_test_mock_init(&M, ".");
	return 0;
}

static void options(st_runtime_options *o)
{
	st_test_mock_options(&M, o);
	o->timeout_s = 5; /* no hang is tested here */
}

#define CUBIN ST_TEST_MOCK_CUBIN
#define SIZE ST_TEST_MOCK_SIZE
#define REF CUBIN("op add\n")
#define HONEST CUBIN("op add\nend\nhonest")     /* the reference's code, other bytes */
#define STRAY CUBIN("op stray\n")               /* astray on its second launch (input set 1) */
#define STRAY_EARLY CUBIN("op stray\nstray_launch 1\n") /* astray on input set 0 */

static st_session *open_ok(const st_runtime_options *o, st_launch *l)
{
	st_session *s = NULL;
	st_error err = {0};
	if (st_session_open(REF, SIZE(REF), l, o, &s, &err) != ST_OK)
		fail_msg("open: %s", err.msg);
	return s;
}

static st_session_info info_of(const st_session *s)
{
	st_session_info i;
	st_session_get_info(s, &i);
	return i;
}

static void want_msg(const st_error *err, const char *needle)
{
	if (!strstr(err->msg, needle))
		fail_msg("message '%s' lacks '%s'", err->msg, needle);
	assert_null(strchr(err->msg, '\n'));
}

/* A clean session's reference reproduces; a check costs no restart; checks are off by default. */
static void test_clean(void **state)
{
	(void)state;
	st_runtime_options o;
	options(&o);
	assert_false(o.check_reference);
	st_launch *l = st_test_mock_spec();
	st_session *s = open_ok(&o, l);
	st_error err = {0};
	assert_int_equal(st_session_check_reference(s, &err), ST_OK);
	assert_int_equal(st_session_verify(s, HONEST, SIZE(HONEST), &err), ST_OK);
	assert_int_equal(st_session_check_reference(s, &err), ST_OK);
	st_session_info i = info_of(s);
	assert_true(i.reference_checks == 2 && i.contaminations == 0 && i.restarts == 0 && !i.last_stray);
	/* a genuinely wrong candidate: one check (clean), the mismatch stands, no restart */
	assert_int_equal(st_session_verify(s, CUBIN("op wrong\n"), SIZE(CUBIN("op wrong\n")), &err), ST_EMISMATCH);
	want_msg(&err, "input set 0: params[2]");
	i = info_of(s);
	assert_true(i.reference_checks == 3 && i.contaminations == 0 && i.restarts == 0);
	st_session_close(s);
	assert_int_equal(st_session_check_reference(NULL, &err), ST_EINVAL);
	st_launch_free(l);
}

/* The culprit passes its own verification (checks off, as in the search); the honest candidate
 * after it mismatches in the contaminated worker, the check finds the contamination, and its
 * verification in a fresh worker is its verdict: ok, not a false mismatch. */
static void test_honest_after_stray(void **state)
{
	(void)state;
	st_runtime_options o;
	options(&o);
	st_launch *l = st_test_mock_spec();
	st_session *s = open_ok(&o, l);
	st_error err = {0};
	assert_int_equal(st_session_verify(s, STRAY, SIZE(STRAY), &err), ST_OK); /* unseen without checks */
	assert_int_equal(st_session_verify(s, HONEST, SIZE(HONEST), &err), ST_OK);
	st_session_info i = info_of(s);
	/* two checks: the one that found the contamination, one after the verification in the fresh worker */
	assert_true(i.contaminations == 1 && i.reference_checks == 2 && i.restarts == 1 && !i.last_stray);
	assert_int_equal(st_session_verify(s, HONEST, SIZE(HONEST), &err), ST_OK); /* the fresh worker is clean */
	assert_int_equal(info_of(s).reference_checks, 2);
	/* the check itself: the device copy of the reference was written to (compared on the GPU) */
	assert_int_equal(st_session_verify(s, STRAY, SIZE(STRAY), &err), ST_OK);
	assert_int_equal(st_session_check_reference(s, &err), ST_ECONTAMINATED);
	assert_int_equal(err.code, ST_ECONTAMINATED);
	want_msg(&err, "the reference no longer reproduces: input set 0: params[0]: the device copy of the reference changed");
	i = info_of(s);
	assert_true(i.contaminations == 2 && i.restarts == 1); /* the worker is stopped; restarted on the next call */
	assert_int_equal(st_session_check_reference(s, &err), ST_OK);
	assert_int_equal(info_of(s).restarts, 2);
	st_session_close(s);
	st_launch_free(l);
}

/* Compared on the host (no PTX JIT): the stray write lands in a pristine input copy, and the
 * reference run on it shows the campaign's signature: an INPUT buffer differs. */
static void test_host_compare(void **state)
{
	(void)state;
	st_runtime_options o;
	options(&o);
	st_launch *l = st_test_mock_spec();
	setenv("MOCK_CUDA_NO_JIT", "1", 1);
	st_session *s = open_ok(&o, l);
	assert_false(info_of(s).verify_on_gpu);
	st_error err = {0};
	assert_int_equal(st_session_verify(s, STRAY, SIZE(STRAY), &err), ST_OK);
	assert_int_equal(st_session_check_reference(s, &err), ST_ECONTAMINATED);
	want_msg(&err, "the reference no longer reproduces: input set 0: params[0]: 1 of 4096 fp32 elements differ, first at element 7");
	assert_int_equal(st_session_verify(s, STRAY, SIZE(STRAY), &err), ST_OK);
	assert_int_equal(st_session_verify(s, HONEST, SIZE(HONEST), &err), ST_OK);
	st_session_info i = info_of(s);
	assert_true(i.contaminations == 2 && i.restarts == 2);
	st_session_close(s);
	unsetenv("MOCK_CUDA_NO_JIT");
	st_launch_free(l);
}

/* The runtime reads no SASSTUNE_CHECK_REFERENCE: the option is off whatever the environment says
 * (the CLI and the pass read the variable and set the option; test_pass_settings, test_run_command). */
static void test_options_ignore_environment(void **state)
{
	(void)state;
	static const char *const values[] = {"1", "yes", "0", ""};
	for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
		setenv("SASSTUNE_CHECK_REFERENCE", values[i], 1);
		st_runtime_options o;
		memset(&o, 0xff, sizeof o);
		st_runtime_options_init(&o);
		assert_false(o.check_reference);
	}
	unsetenv("SASSTUNE_CHECK_REFERENCE");
}

/* With check_reference, the culprit itself is caught: after its ok, the check finds the
 * contamination; verified again alone in a fresh worker and checked, it is to blame. */
static void test_check_option(void **state)
{
	(void)state;
	st_runtime_options o;
	options(&o);
	o.check_reference = true;
	st_launch *l = st_test_mock_spec();
	st_session *s = open_ok(&o, l);
	st_error err = {0};
	assert_int_equal(st_session_verify(s, HONEST, SIZE(HONEST), &err), ST_OK);
	assert_int_equal(info_of(s).reference_checks, 1); /* one check per verified candidate */
	assert_int_equal(st_session_verify(s, STRAY, SIZE(STRAY), &err), ST_EMISMATCH);
	want_msg(&err, "the candidate wrote outside its buffers (the reference no longer reproduces");
	st_session_info i = info_of(s);
	assert_true(i.last_stray && i.contaminations == 2 && i.reference_checks == 3 && i.restarts == 1);
	assert_int_equal(st_session_verify(s, HONEST, SIZE(HONEST), &err), ST_OK);
	i = info_of(s);
	assert_true(!i.last_stray && i.contaminations == 2 && i.restarts == 2);
	/* astray on input set 0: it fails its own comparison (the device reference it is compared
	 * with was hit); in a fresh worker again, and then the check blames it */
	assert_int_equal(st_session_verify(s, STRAY_EARLY, SIZE(STRAY_EARLY), &err), ST_EMISMATCH);
	want_msg(&err, "the candidate wrote outside its buffers");
	assert_true(info_of(s).last_stray);
	st_session_close(s);
	st_launch_free(l);
}

/* The estimate checks the reference after B's verification: a stray write is B's mismatch. */
static void test_estimate(void **state)
{
	(void)state;
	st_runtime_options o;
	options(&o);
	st_launch *l = st_test_mock_spec();
	st_estimate e;
	st_error err = {0};
	assert_int_equal(st_estimate_run(REF, SIZE(REF), l, &o, STRAY, SIZE(STRAY), true, 10, &e, &err), ST_OK);
	assert_true(e.verdict == ST_EMISMATCH && e.stage == ST_ESTIMATE_VERIFY);
	want_msg(&err, "the candidate wrote outside its buffers");
	assert_true(e.info.last_stray && e.info.contaminations == 2);
	memset(&err, 0, sizeof err);
	assert_int_equal(st_estimate_run(REF, SIZE(REF), l, &o, HONEST, SIZE(HONEST), true, 10, &e, &err), ST_OK);
	assert_true(e.verdict == ST_OK && e.stage == ST_ESTIMATE_DONE);
	assert_true(!e.info.last_stray && e.info.contaminations == 0 && e.info.reference_checks == 1);
	st_launch_free(l);
}

/* A reference that is not deterministic reproduces within the tolerance. */
static void test_nondeterministic(void **state)
{
	(void)state;
	st_runtime_options o;
	options(&o);
	st_launch *l = st_test_mock_spec();
	const uint8_t *ref = CUBIN("op nondet\n");
	st_session *s = NULL;
	st_error err = {0};
	if (st_session_open(ref, SIZE(ref), l, &o, &s, &err) != ST_OK)
		fail_msg("open: %s", err.msg);
	assert_false(info_of(s).deterministic);
	assert_int_equal(st_session_check_reference(s, &err), ST_OK);
	st_session_close(s);
	st_launch_free(l);
}

/* Run `sasstune ARGS` in dir on the mock driver; its exit status, its output in out. */
static int sasstune(const char *dir, const char *args, char *out, size_t n)
{
	char cmd[8192];
	snprintf(cmd, sizeof cmd, "cd %s && SASSTUNE_LIBCUDA=%s %s/sasstune %s 2>&1", dir, M.libcuda, M.bindir, args);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	size_t got = fread(out, 1, n - 1, p);
	out[got] = 0;
	int st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* `sasstune run` reports the contamination (and, with --check-reference, the culprit). */
static void test_run_command(void **state)
{
	(void)state;
	char dir[] = "/tmp/st_rt_integrity_XXXXXX", path[4200];
	assert_non_null(mkdtemp(dir));
	const char *files[][2] = {{"spec.json", st_test_mock_spec_json}, {"ref.cubin", (const char *)REF},
				  {"stray.cubin", (const char *)STRAY}, {"honest.cubin", (const char *)HONEST}};
	for (size_t i = 0; i < 4; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, files[i][0]);
		FILE *f = fopen(path, "w");
		assert_non_null(f);
		fputs(files[i][1], f);
		fclose(f);
	}
	static char out[65536];
	const char *args = "run stray.cubin honest.cubin --reference ref.cubin --launch spec.json --no-time --json";
	int rc = sasstune(dir, args, out, sizeof out);
	if (rc != 0 || !strstr(out, "\"contaminations\":\t1") || !strstr(out, "\"reference_checks\":\t2") ||
	    strstr(out, "stray_write"))
		fail_msg("run: exit %d, output:\n%s", rc, out);
	rc = sasstune(dir, "run stray.cubin honest.cubin --reference ref.cubin --launch spec.json --no-time --check-reference",
		      out, sizeof out);
	if (rc != 1 || !strstr(out, "candidate 1/2 stray.cubin: mismatch: the candidate wrote outside its buffers") ||
	    !strstr(out, "candidate 2/2 honest.cubin: ok") || !strstr(out, "2 contaminations"))
		fail_msg("run --check-reference: exit %d, output:\n%s", rc, out);
	/* the variable is the flag's equal ("0" is off) */
	setenv("SASSTUNE_CHECK_REFERENCE", "1", 1);
	rc = sasstune(dir, "run stray.cubin honest.cubin --reference ref.cubin --launch spec.json --no-time", out,
		      sizeof out);
	if (rc != 1 || !strstr(out, "candidate 1/2 stray.cubin: mismatch: the candidate wrote outside its buffers") ||
	    !strstr(out, "2 contaminations"))
		fail_msg("SASSTUNE_CHECK_REFERENCE=1 run: exit %d, output:\n%s", rc, out);
	setenv("SASSTUNE_CHECK_REFERENCE", "0", 1);
	rc = sasstune(dir, args, out, sizeof out);
	if (rc != 0 || !strstr(out, "\"reference_checks\":\t2"))
		fail_msg("SASSTUNE_CHECK_REFERENCE=0 run: exit %d, output:\n%s", rc, out);
	unsetenv("SASSTUNE_CHECK_REFERENCE");
	rc = sasstune(dir, "compare ref.cubin stray.cubin --launch spec.json --warmup-ms 1", out, sizeof out);
	if (rc != 1 || !strstr(out, "stray.cubin: mismatch: the candidate wrote outside its buffers"))
		fail_msg("compare: exit %d, output:\n%s", rc, out);
	snprintf(path, sizeof path, "rm -rf %s", dir);
	assert_int_equal(system(path), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clean),
		cmocka_unit_test(test_options_ignore_environment),
		cmocka_unit_test(test_honest_after_stray),
		cmocka_unit_test(test_host_compare),
		cmocka_unit_test(test_check_option),
		cmocka_unit_test(test_estimate),
		cmocka_unit_test(test_nondeterministic),
		cmocka_unit_test(test_run_command),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
