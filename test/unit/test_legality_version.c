/* The cache key carries ST_LEGALITY_VERSION (sched.h), so that a schedule found under other
 * legality or checker rules is never served.  This test holds the SHA-256 of the files that hold
 * those rules, recorded together with the version they were recorded for: when the files change,
 * it fails until someone decides whether the rules changed (then bumps ST_LEGALITY_VERSION) and
 * records the new hash.  A comment-only edit needs only the new hash. */
#include "testutil.h"
#include "cache/sha256.h"
#include "sasstune/sched.h"
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef ST_SOURCE_DIR
#error "ST_SOURCE_DIR must name the source tree (test/CMakeLists.txt sets it)"
#endif

/* What holds the rules: the model, its state and fix-ups, the checker, and the latency tables
 * both use.  Keep in step with the comment at ST_LEGALITY_VERSION. */
static const char *const rule_files[] = {
	"plugin/sched/model.c",	    "plugin/sched/state.c",	"plugin/sched/check.c",
	"plugin/sched/check_move.c", "plugin/sched/sched_internal.h", "plugin/sched/hoist.c", "plugin/sched/group.c",
	"plugin/sched/wait.c", "plugin/sched/sb.c", "plugin/sched/xblock.c", "plugin/sched/check_xblock.c",
	"plugin/sched/check_internal.h", "plugin/sched/rename.c", "plugin/sched/rename_enc.c",
	"plugin/sched/check_rename.c", "plugin/sched/rename_internal.h", "plugin/sched/rename_regs.c",
	"plugin/sched/check_regs.c", "plugin/sched/occupancy.c", "plugin/sass/latency.c",
	"plugin/sass/latency_tables.c", "plugin/sass/operands.c", "plugin/sass/groups.c",
	"plugin/sched/pipe.c", "plugin/sched/pipe_internal.h", "plugin/sched/pipe_live.c", "plugin/sched/pipe_find.c",
	"plugin/sched/pipe_apply.c", "plugin/sched/pipe_seq.c", "plugin/sched/pipe_timing.c", "plugin/sched/pipe_timing.h",
	"plugin/sched/pipe_enc.c", "plugin/cubin/preds.c",
	"plugin/sched/check_pipe.h", "plugin/sched/check_pipe.c", "plugin/sched/check_pipe_match.c",
	"plugin/sched/check_pipe_rules.c", "plugin/sched/check_pipe_live.c", "plugin/sched/check_pipe_time.c",
	"plugin/sched/check_pipe2.h", "plugin/sched/check_pipe2.c", "plugin/sched/check_pipe2_words.c",
	"plugin/sched/check_pipe2_rules.c", "plugin/sched/check_pipe2_fresh.c", "plugin/sched/check_pipe2_ctrl.c",
	"plugin/sched/pipe2_internal.h", "plugin/sched/pipe2.c", "plugin/sched/pipe2_phi.c", "plugin/sched/pipe2_words.c",
	"plugin/sched/pipe2_find.c", "plugin/sched/pipe2_apply.c", "plugin/sched/pipe2_seq.c",
};

#define RECORDED_VERSION 9
#define RECORDED_HASH "1b7e79f1e697ab3f2b4fbb9be02e8278dc9656d350981d90bd2b2455002c8e52"

/* SHA-256 over "<path>\n<SHA-256 of the file>\n" for each file, in order. */
static void rules_hash(char out[65])
{
	st_sha256 all;
	st_sha256_init(&all);
	for (size_t i = 0; i < sizeof rule_files / sizeof rule_files[0]; i++) {
		char path[4096], hex[65];
		snprintf(path, sizeof path, "%s/%s", ST_SOURCE_DIR, rule_files[i]);
		uint8_t *data = NULL, d[ST_SHA256_SIZE];
		size_t n = 0;
		if (st_read_file(path, &data, &n, NULL) != ST_OK)
			fail_msg("cannot read %s", path);
		st_sha256 s;
		st_sha256_init(&s);
		st_sha256_update(&s, data, n);
		st_sha256_final(&s, d);
		st_sha256_hex(d, hex);
		free(data);
		st_sha256_update(&all, rule_files[i], strlen(rule_files[i]));
		st_sha256_update(&all, "\n", 1);
		st_sha256_update(&all, hex, 64);
		st_sha256_update(&all, "\n", 1);
	}
	uint8_t d[ST_SHA256_SIZE];
	st_sha256_final(&all, d);
	st_sha256_hex(d, out);
}

static void test_legality_version__rules_unchanged_or_version_bumped(void **state)
{
	(void)state;
	char now[65];
	rules_hash(now);
	if (strcmp(now, RECORDED_HASH) != 0)
		fail_msg("legality rules changed: bump ST_LEGALITY_VERSION and update this hash (test/unit/"
			 "test_legality_version.c: RECORDED_HASH \"%s\", RECORDED_VERSION %d); if only comments "
			 "changed, update the hash alone",
			 now, ST_LEGALITY_VERSION == RECORDED_VERSION ? RECORDED_VERSION + 1 : ST_LEGALITY_VERSION);
	if (ST_LEGALITY_VERSION != RECORDED_VERSION)
		fail_msg("ST_LEGALITY_VERSION is %d but this test recorded the rules for %d: update RECORDED_VERSION",
			 ST_LEGALITY_VERSION, RECORDED_VERSION);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_legality_version__rules_unchanged_or_version_bumped),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
