/* The compile-variants stage: real ptxas (Triton's 12.8; 13.5 where installed), fake ptxas
 * scripts that crash, hang, print errors or copy a given cubin (test/fixtures/variants/), the
 * PTX-match check, the temporary folder, and measuring through the mock CUDA driver. */
#include "testutil.h"

#include "variants/variants_internal.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmpdir[256];

static int setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof tmpdir, "/tmp/st-variants-test-XXXXXX");
	assert_non_null(mkdtemp(tmpdir));
	setenv("TMPDIR", tmpdir, 1); /* the stage's private folders go here: checked empty after */
	unsetenv("SASSTUNE_PTXAS");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	rmdir(tmpdir);
	return 0;
}

static size_t entries(const char *dir)
{
	DIR *d = opendir(dir);
	size_t n = 0;
	for (struct dirent *e; d && (e = readdir(d));)
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	if (d)
		closedir(d);
	return n;
}

static char *triton_ptxas(void)
{
	const char *bin = st_test_triton_bin();
	if (!bin)
		fail_msg("Triton's ptxas not found (ST_TRITON_BIN): scripts/install-deps.sh installs it");
	char buf[4096];
	snprintf(buf, sizeof buf, "%s/ptxas", bin);
	return strdup(buf);
}

static char *fake(const char *name)
{
	char rel[128];
	snprintf(rel, sizeof rel, "variants/%s", name);
	return st_test_fixture(rel);
}

static const st_variant *find(const st_variants *v, const char *label)
{
	for (size_t i = 0; i < st_variants_count(v); i++)
		if (!strcmp(st_variants_get(v, i)->label, label))
			return st_variants_get(v, i);
	fail_msg("no variant '%s'", label);
	return NULL;
}

static st_variants *compile(const char *fixture, const char *stock_fixture, const st_variants_opts *o)
{
	char rel[256];
	size_t ptx_len, size;
	snprintf(rel, sizeof rel, "triton-sm90/%s/sm_90.ptx", fixture);
	uint8_t *ptx = st_test_read(rel, &ptx_len);
	snprintf(rel, sizeof rel, "triton-sm90/%s/sm_90.cubin", stock_fixture);
	uint8_t *stock = st_test_read(rel, &size);
	st_variants *v = NULL;
	st_error err = {0};
	if (st_variants_compile((const char *)ptx, ptx_len, stock, size, NULL, o, &v, &err) != ST_OK)
		fail_msg("compile: %s", err.msg);
	free(ptx);
	free(stock);
	assert_int_equal(entries(tmpdir), 0); /* the private folder is gone */
	return v;
}

static void test_real_ptxas(void **state)
{
	(void)state;
	char *ptxas = triton_ptxas();
	const char *p135 = "/tmp/nvcc/x/nvidia/cu13/bin/ptxas";
	const char *extra[] = {p135};
	st_variants_opts o;
	st_variants_opts_init(&o);
	o.discover = false;
	o.stock_ptxas = ptxas;
	o.jobs = 2;
	bool has135 = access(p135, X_OK) == 0;
	o.ptxas = extra;
	o.n_ptxas = has135;
	st_variants *v = compile("add_f32_1M", "add_f32_1M", &o);
	assert_string_equal(st_variants_kernel(v), "add_kernel");
	const st_variant *stock = st_variants_get(v, 0);
	assert_true(stock->stock);
	assert_true(stock->regs > 0);
	assert_true(stock->code_bytes > 0);
	const st_variant *plain = find(v, "12.8.93");
	assert_true(plain->compiled);
	assert_int_equal(plain->duplicate_of, 0); /* the stock binary reproduces the stock code */
	assert_true(plain->compile_s > 0);
	const st_variant *ul0 = find(v, "12.8.93 --register-usage-level 0");
	assert_true(ul0->compiled);
	assert_true(ul0->code_bytes > 0 && ul0->regs > 0);
	assert_int_equal(ul0->verified, -1);
	assert_int_equal(st_variants_count(v), 4 + 3 * has135); /* .reqntid: no --maxrregcount rows */
	if (has135)
		assert_true(find(v, "13.5.37")->compiled);
	char *json = st_variants_json(v);
	assert_non_null(strstr(json, "\"schema\":\"sasstune-variants-1\""));
	assert_non_null(strstr(json, "\"label\":\"12.8.93 --register-usage-level 10\""));
	free(json);
	assert_int_equal(st_variants_best(v), 0);
	st_variants_free(v);

	/* stock NULL: made by the stock binary, whose plain compile is then not repeated */
	size_t len;
	uint8_t *ptx = st_test_read("triton-sm90/add_f32_1M/sm_90.ptx", &len);
	st_error err = {0};
	o.n_ptxas = 0;
	assert_int_equal(st_variants_compile((const char *)ptx, len, NULL, 0, NULL, &o, &v, &err), ST_OK);
	assert_int_equal(st_variants_count(v), 3);
	assert_true(st_variants_get(v, 0)->compile_s > 0);
	st_variants_free(v);
	o.stock_ptxas = NULL;
	assert_int_equal(st_variants_compile((const char *)ptx, len, NULL, 0, NULL, &o, &v, &err), ST_ETOOL);
	assert_null(v);
	free(ptx);
	free(ptxas);
}

static void test_ptx_mismatch(void **state)
{
	(void)state;
	char *ptxas = triton_ptxas();
	st_variants_opts o;
	st_variants_opts_init(&o);
	o.discover = false;
	o.stock_ptxas = ptxas;
	o.jobs = 2;
	o.base_options = "-O0"; /* not what made the cubin: other code */
	st_variants *v = compile("add_f32_1M", "add_f32_1M", &o);
	assert_true(st_variants_count(v) > 1);
	for (size_t i = 1; i < st_variants_count(v); i++)
		assert_string_equal(st_variants_get(v, i)->reason, "PTX does not match the cubin");
	st_variants_free(v);

	/* a PTX without the cubin's kernel: stock only, and the note says why */
	o.base_options = NULL;
	v = compile("add_f32_1M", "layernorm_f16_1024x1024", &o);
	assert_int_equal(st_variants_count(v), 1);
	assert_non_null(strstr(st_variants_note(v), "PTX does not match the cubin"));
	assert_string_equal(st_variants_kernel(v), "layernorm_kernel");
	st_variants_free(v);
	free(ptxas);
}

/* A cubin of add_kernel with other code (-O0), made here with Triton's ptxas. */
static char *alt_cubin(void)
{
	char *ptxas = triton_ptxas(), *ptx = st_test_fixture("triton-sm90/add_f32_1M/sm_90.ptx");
	char path[] = "/tmp/st-variants-alt-XXXXXX", cmd[8192];
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	snprintf(cmd, sizeof cmd, "'%s' -O0 --gpu-name=sm_90a -o '%s' '%s'", ptxas, path, ptx);
	assert_int_equal(system(cmd), 0);
	free(ptxas);
	free(ptx);
	return strdup(path);
}

static void test_fake_ptxas(void **state)
{
	(void)state;
	char *copy = fake("ptxas-copy"), *crash = fake("ptxas-crash"), *hang = fake("ptxas-hang"),
	     *error = fake("ptxas-error"), *stock = st_test_fixture("triton-sm90/add_f32_1M/sm_90.cubin"),
	     *alt = alt_cubin();
	setenv("FAKE_CUBIN", stock, 1);
	setenv("FAKE_CUBIN_ALT", alt, 1);
	const char *bins[] = {copy, crash, hang, error, "/nonexistent/ptxas"};
	st_variants_opts o;
	st_variants_opts_init(&o);
	o.ptxas = bins;
	o.n_ptxas = 5;
	o.compile_timeout_s = 1;
	o.jobs = 4;
	st_variants *v = compile("add_f32_1M", "add_f32_1M", &o);
	assert_int_equal(st_variants_count(v), 1 + 3 + 4);
	assert_int_equal(find(v, "90.0.1")->duplicate_of, 0);
	assert_string_equal(find(v, "90.0.1")->reason, "same code as stock");
	const st_variant *other = find(v, "90.0.1 --register-usage-level 0");
	assert_true(other->compiled);
	assert_int_equal(other->duplicate_of, -1);
	assert_string_equal(other->reason, "");
	assert_int_equal(find(v, "90.0.1 --register-usage-level 10")->duplicate_of, 0);
	assert_false(find(v, "90.0.2")->compiled);
	assert_string_equal(find(v, "90.0.2")->reason, "crashed (signal 11)");
	assert_string_equal(find(v, "90.0.3")->reason, "timed out after 1 s");
	assert_string_equal(find(v, "90.0.4")->reason, "ptxas fatal   : Unresolved extern function 'no_such_function'");
	assert_non_null(strstr(find(v, "ptxas")->reason, "No such file or directory"));
	st_variants_free(v);

	/* the fake as the stock binary: it reproduces the cubin, so the check passes ... */
	o.stock_ptxas = copy;
	o.n_ptxas = 0;
	v = compile("add_f32_1M", "add_f32_1M", &o);
	assert_int_equal(st_variants_count(v), 4);
	assert_string_equal(find(v, "90.0.1 --register-usage-level 0")->reason, "");
	st_variants_free(v);
	/* ... and when it gives other code, every variant is rejected */
	setenv("FAKE_CUBIN", alt, 1);
	v = compile("add_f32_1M", "add_f32_1M", &o);
	for (size_t i = 1; i < st_variants_count(v); i++)
		assert_string_equal(st_variants_get(v, i)->reason, "PTX does not match the cubin");
	st_variants_free(v);

	/* $SASSTUNE_PTXAS adds binaries with discover on */
	setenv("SASSTUNE_PTXAS", error, 1);
	v = compile("add_f32_1M", "add_f32_1M", &o);
	assert_string_equal(find(v, "90.0.4")->reason, "PTX does not match the cubin");
	st_variants_free(v);
	unsetenv("SASSTUNE_PTXAS");
	unlink(alt);
	free(alt);
	free(copy);
	free(crash);
	free(hang);
	free(error);
	free(stock);
}

/* --apply-controls files: one variant per (file, binary that lists the option), a rejected row
 * for a binary without it or a path with white space; real ptxas 13.5 rejects a foreign file at
 * compile time (a rejected row with its message). */
static void test_controls(void **state)
{
	(void)state;
	char *acf = fake("ptxas-acf"), *copy = fake("ptxas-copy"), *stock = st_test_fixture("triton-sm90/add_f32_1M/sm_90.cubin"),
	     *alt = alt_cubin();
	char file[] = "/tmp/st-variants-acf-XXXXXX";
	int fd = mkstemp(file);
	assert_true(fd >= 0 && write(fd, "not an acf\n", 11) == 11);
	close(fd);
	setenv("FAKE_CUBIN", stock, 1);
	setenv("FAKE_CUBIN_ALT", alt, 1);
	const char *bins[] = {acf, copy}, *files[] = {file, "/tmp/with space.acf"};
	st_variants_opts o;
	st_variants_opts_init(&o);
	o.discover = false;
	o.ptxas = bins;
	o.n_ptxas = 2;
	o.controls = files;
	o.n_controls = 1;
	o.jobs = 2;
	st_variants *v = compile("add_f32_1M", "add_f32_1M", &o);
	const char *base = strrchr(file, '/') + 1;
	char lab[256], opt[256];
	snprintf(lab, sizeof lab, "90.0.5 --apply-controls=%s", base);
	snprintf(opt, sizeof opt, "--apply-controls=%s", file);
	const st_variant *c = find(v, lab);
	assert_string_equal(c->options, opt);
	assert_true(c->compiled);
	assert_int_equal(c->duplicate_of, -1); /* the fake gave other code for it */
	assert_string_equal(c->reason, "");
	assert_int_equal(find(v, "90.0.5")->duplicate_of, 0);
	snprintf(lab, sizeof lab, "90.0.1 --apply-controls=%s", base);
	assert_false(find(v, lab)->compiled);
	assert_string_equal(find(v, lab)->reason, "ptxas 90.0.1 does not know --apply-controls (13.3 on)");
	assert_int_equal(st_variants_count(v), 1 + 2 + 4); /* stock; 90.0.5: 2; 90.0.1: plain, ul 0/10, acf */
	st_variants_free(v);
	o.controls = files + 1;
	o.n_ptxas = 1;
	v = compile("add_f32_1M", "add_f32_1M", &o);
	assert_string_equal(find(v, "90.0.5 --apply-controls=with space.acf")->reason,
			    "controls path too long or with white space: /tmp/with space.acf");
	st_variants_free(v);

	const char *p135 = "/tmp/nvcc/x/nvidia/cu13/bin/ptxas";
	char *ptxas = triton_ptxas();
	bins[0] = p135;
	o.stock_ptxas = ptxas;
	o.controls = files;
	o.n_ptxas = access(p135, X_OK) == 0;
	v = compile("add_f32_1M", "add_f32_1M", &o);
	snprintf(lab, sizeof lab, "12.8.93 --apply-controls=%s", base);
	assert_string_equal(find(v, lab)->reason, "ptxas 12.8.93 does not know --apply-controls (13.3 on)");
	snprintf(lab, sizeof lab, "13.5.37 --apply-controls=%s", base);
	if (o.n_ptxas) {
		assert_false(find(v, lab)->compiled);
		assert_non_null(strstr(find(v, lab)->reason, "Payload is not valid"));
	}
	st_variants_free(v);
	unlink(file);
	unlink(alt);
	free(alt);
	free(ptxas);
	free(acf);
	free(copy);
	free(stock);
}

/* Next to a Triton ptxas: its ptxas-blackwell and the nvidia-cuda-nvcc wheel's ptxas. */
static void test_discovery(void **state)
{
	(void)state;
	char root[] = "/tmp/st-variants-site-XXXXXX", path[512];
	assert_non_null(mkdtemp(root));
	char *copy = fake("ptxas-copy"), *error = fake("ptxas-error"), *stock = st_test_fixture("triton-sm90/add_f32_1M/sm_90.cubin");
	char cmd[2048];
	snprintf(cmd, sizeof cmd, "mkdir -p %s/triton/backends/nvidia/bin %s/nvidia/cu13/bin && ln -s '%s' %s/triton/backends/nvidia/bin/ptxas"
		 " && ln -s '%s' %s/nvidia/cu13/bin/ptxas", root, root, copy, root, error, root);
	assert_int_equal(system(cmd), 0);
	setenv("FAKE_CUBIN", stock, 1);
	snprintf(path, sizeof path, "%s/triton/backends/nvidia/bin/ptxas", root);
	st_variants_opts o;
	st_variants_opts_init(&o);
	o.stock_ptxas = path;
	o.compile_timeout_s = 5;
	st_variants *v = compile("add_f32_1M", "add_f32_1M", &o);
	assert_int_equal(find(v, "90.0.1")->duplicate_of, 0);
	assert_non_null(strstr(find(v, "90.0.4")->ptxas, "/nvidia/cu13/bin/ptxas"));
	assert_int_equal(st_variants_count(v), 5); /* stock, the fake's three, the wheel's one */
	st_variants_free(v);
	o.discover = false;
	v = compile("add_f32_1M", "add_f32_1M", &o);
	assert_int_equal(st_variants_count(v), 4);
	st_variants_free(v);
	/* the real one: Triton's ptxas-blackwell (12.9) is found next to its ptxas */
	char *ptxas = triton_ptxas();
	o.stock_ptxas = ptxas;
	o.discover = true;
	o.jobs = 2;
	v = compile("add_f32_1M", "add_f32_1M", &o);
	assert_true(find(v, "12.9.86")->compiled);
	st_variants_free(v);
	snprintf(cmd, sizeof cmd, "rm -r '%s'", root);
	assert_int_equal(system(cmd), 0);
	free(ptxas);
	free(copy);
	free(error);
	free(stock);
}

/* The remembered probes: a memo is used for the same file, ignored once the file changes or
 * when it is garbage, and written after a successful probe. */
static void test_probe_memo(void **state)
{
	(void)state;
	char dir[] = "/tmp/st-variants-memo-XXXXXX", bin[600], memo[600], cmd[2048];
	assert_non_null(mkdtemp(dir));
	char *copy = fake("ptxas-copy");
	snprintf(bin, sizeof bin, "%s/ptxas", dir);
	snprintf(memo, sizeof memo, "%s/probes", dir);
	snprintf(cmd, sizeof cmd, "cp '%s' '%s'", copy, bin);
	assert_int_equal(system(cmd), 0);
	st_vr_binary b = {0};
	snprintf(b.path, sizeof b.path, "%s", bin);
	st_vr_probe(&b, 5, memo);
	assert_string_equal(b.version, "90.0.1");
	assert_true(b.usage_level && b.maxrreg);
	/* the one memo file names this binary; rewrite its version: the next probe must believe it */
	snprintf(cmd, sizeof cmd, "f=$(ls '%s'/*) && [ $(ls '%s' | wc -l) = 1 ] && head -1 \"$f\" | grep -q '^%s|'"
		 " && sed -i '2s/.*/77.7.7/' \"$f\"", memo, memo, bin);
	assert_int_equal(system(cmd), 0);
	memset(&b, 0, sizeof b);
	snprintf(b.path, sizeof b.path, "%s", bin);
	st_vr_probe(&b, 5, memo);
	assert_string_equal(b.version, "77.7.7");
	/* the binary changes (mtime): asked again, the memo replaced */
	snprintf(cmd, sizeof cmd, "touch -d '2001-01-01' '%s'", bin);
	assert_int_equal(system(cmd), 0);
	st_vr_probe(&b, 5, memo);
	assert_string_equal(b.version, "90.0.1");
	/* a memo of the older format (two knobs, no --apply-controls): asked again */
	snprintf(cmd, sizeof cmd, "for f in '%s'/*; do sed -i -e '2s/.*/77.7.7/' -e '3s/.*/1 1/' \"$f\"; done", memo);
	assert_int_equal(system(cmd), 0);
	memset(&b, 0, sizeof b);
	snprintf(b.path, sizeof b.path, "%s", bin);
	st_vr_probe(&b, 5, memo);
	assert_string_equal(b.version, "90.0.1");
	assert_false(b.controls);
	/* garbage in the memo: asked again */
	snprintf(cmd, sizeof cmd, "for f in '%s'/*; do echo junk > \"$f\"; done", memo);
	assert_int_equal(system(cmd), 0);
	memset(&b, 0, sizeof b);
	snprintf(b.path, sizeof b.path, "%s", bin);
	st_vr_probe(&b, 5, memo);
	assert_string_equal(b.version, "90.0.1");
	snprintf(cmd, sizeof cmd, "rm -r '%s'", dir);
	assert_int_equal(system(cmd), 0);
	free(copy);
}

static void test_helpers(void **state)
{
	(void)state;
	int v[2];
	assert_int_equal(st_vr_maxrreg_values(208, 128, v), 2); /* 2 blocks of 4 warps down to 176 */
	assert_int_equal(v[0], 200);
	assert_int_equal(v[1], 176);
	assert_int_equal(st_vr_maxrreg_values(32, 256, v), 1); /* 8 blocks (the warp limit) at 24 too */
	assert_int_equal(v[0], 24);
	assert_int_equal(st_vr_maxrreg_values(40, 128, v), 0); /* 32 would raise blocks/SM 12 -> 16 */
	assert_int_equal(st_vr_maxrreg_values(16, 128, v), 0);
	assert_int_equal(st_vr_maxrreg_values(64, 0, v), 0); /* block size unknown */
	const char *ptx = ".visible .entry k_a(\n.param .u32 p\n)\n.maxntid 16, 4, 2\n{\n}\n"
			  ".visible .entry k(\n)\n.reqntid 96\n{\n}\n.visible .entry k_b()\n{\n}\n";
	assert_int_equal(st_vr_ptx_threads(ptx, strlen(ptx), "k_a"), 128);
	assert_int_equal(st_vr_ptx_threads(ptx, strlen(ptx), "k"), 96);
	assert_int_equal(st_vr_ptx_threads(ptx, strlen(ptx), "k_b"), 0);
	/* ".entryk" is not the directive followed by k (found by fuzz_variants_ptx) */
	const char *glued = ".entryk\n.reqntid 64, 1, 1\n{\n}\n";
	assert_int_equal(st_vr_ptx_threads(glued, strlen(glued), "k"), 0);
	assert_false(st_vr_ptx_has_entry(glued, strlen(glued), "k"));
	assert_int_equal(st_vr_ptx_threads(ptx, strlen(ptx), "missing"), 0);
}

/* ---- measuring, through the mock CUDA driver (test/mock/cuda_mock.c) ---- */
static const char spec_json[] =
	"{\"kernel\":\"add_kernel\",\"grid\":[8],\"block\":[128],\"params\":["
	"{\"kind\":\"ptr\",\"dtype\":\"fp32\",\"bytes\":16384,\"init\":\"randn\"},"
	"{\"kind\":\"ptr\",\"dtype\":\"fp32\",\"bytes\":16384,\"init\":\"randn\"},"
	"{\"kind\":\"ptr\",\"dtype\":\"fp32\",\"bytes\":16384,\"init\":\"randn\"},"
	"{\"kind\":\"i32\",\"value\":4096},{\"kind\":\"ptr\",\"bytes\":0},{\"kind\":\"ptr\",\"bytes\":0}]}";

#define MOCK(body) "MOCKCUBIN\nkernel add_kernel\n" body "end\n"

/* A set of mock cubins (the stage itself needs ELF cubins: these rows are made by hand). */
static st_variants *mock_set(const char *const *bodies, size_t n)
{
	st_variants *s = calloc(1, sizeof *s);
	assert_non_null(s);
	snprintf(s->kernel, sizeof s->kernel, "add_kernel");
	for (size_t i = 0; i < n; i++) {
		st_variant v = {.stock = i == 0, .compiled = true, .regs = -1, .duplicate_of = -1, .verified = -1};
		snprintf(v.label, sizeof v.label, i ? "mock %zu" : "stock", i);
		st_error err = {0};
		assert_int_equal(st_vr_push(s, &v, (const uint8_t *)bodies[i], strlen(bodies[i]), &err), ST_OK);
		s->items[i].pub.reason[0] = 0; /* not ELF: the code-bytes reader objected */
	}
	return s;
}

static void mock_opts(st_variants_opts *o)
{
	static char worker[4096], mock[4096];
	const char *b = getenv("ST_BUILD_DIR");
	if (!b || !*b)
		b = ST_SOURCE_DIR "/build";
	snprintf(worker, sizeof worker, "%s/sasstune-worker", b);
	snprintf(mock, sizeof mock, "%s/test/libcuda_mock.so", b);
	st_variants_opts_init(o);
	o->runtime.worker = worker;
	o->runtime.libcuda = mock;
	o->runtime.warmup_ms = 1;
	o->runtime.timeout_s = 0.5;
	o->pairs = 40;
}

static void test_measure_mock(void **state)
{
	(void)state;
	const char *bodies[] = {MOCK("op add\n"), MOCK("op add\ntime_us 8\n"), MOCK("op wrong\n"),
				MOCK("op add\ntime_us 20\n"), MOCK("op fault\n")};
	st_variants *s = mock_set(bodies, 5);
	st_variants_opts o;
	mock_opts(&o);
	st_launch *l = NULL;
	st_error err = {0};
	assert_int_equal(st_launch_parse(spec_json, strlen(spec_json), NULL, &l, &err), ST_OK);
	if (st_variants_measure(s, l, &o, &err) != ST_OK)
		fail_msg("measure: %s", err.msg);
	const st_variant *fast = st_variants_get(s, 1), *wrong = st_variants_get(s, 2), *slow = st_variants_get(s, 3),
			 *fault = st_variants_get(s, 4);
	assert_int_equal(st_variants_get(s, 0)->verified, 1);
	assert_int_equal(fast->verified, 1);
	assert_true(fast->speedup > 1.15 && fast->speedup < 1.35); /* 10 us / 8 us */
	assert_true(fast->speedup_lo <= fast->speedup && fast->speedup <= fast->speedup_hi);
	assert_true(fast->timing.n >= 200); /* confirmed with the confirmation's pairs */
	assert_true(fast->confirmed);
	assert_int_equal(wrong->verified, 0);
	assert_non_null(strstr(wrong->reason, "outputs differ from stock"));
	assert_true(wrong->speedup == 0);
	assert_true(slow->speedup > 0.4 && slow->speedup < 0.6);
	assert_false(slow->confirmed);
	assert_int_equal(fault->verified, 0);
	assert_non_null(strstr(fault->reason, "crashed"));
	assert_int_equal(st_variants_best(s), 1);
	assert_string_equal(st_variants_note(s), "");
	char *json = st_variants_json(s);
	assert_non_null(strstr(json, "\"best_label\":\"mock 1\""));
	assert_non_null(strstr(json, "\"measured\":true"));
	free(json);
	st_variants_free(s);

	/* nothing faster: stock stays the choice */
	const char *same[] = {MOCK("op add\n"), MOCK("op add\n# another build\n")};
	s = mock_set(same, 2);
	assert_int_equal(st_variants_measure(s, l, &o, &err), ST_OK);
	assert_false(st_variants_get(s, 1)->confirmed);
	assert_int_equal(st_variants_best(s), 0);
	st_variants_free(s);

	/* no driver: ST_EDEVICE, the set untouched but for the note */
	s = mock_set(bodies, 2);
	o.runtime.libcuda = "/nonexistent/libcuda.so.1";
	assert_int_equal(st_variants_measure(s, l, &o, &err), ST_EDEVICE);
	assert_non_null(strstr(st_variants_note(s), "GPU steps skipped"));
	assert_int_equal(st_variants_get(s, 1)->verified, -1);
	st_variants_free(s);
	st_launch_free(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_helpers),
		cmocka_unit_test(test_real_ptxas),
		cmocka_unit_test(test_ptx_mismatch),
		cmocka_unit_test(test_fake_ptxas),
		cmocka_unit_test(test_controls),
		cmocka_unit_test(test_discovery),
		cmocka_unit_test(test_probe_memo),
		cmocka_unit_test(test_measure_mock),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
