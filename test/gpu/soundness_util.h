/* What the GPU soundness drivers share (soundness.c, soundness_pipe.c): the walks' xorshift
 * generator, the clock, and a fresh session per input-set rotation. */
#ifndef ST_SOUNDNESS_UTIL_H
#define ST_SOUNDNESS_UTIL_H
#include "sasstune/runtime.h"

#include <stdint.h>
#include <stdio.h>
#include <time.h>

static inline uint64_t sg_xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static inline double sg_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Close *sess and open a fresh one for walk w (input sets seeded by seed and w / rotate, the
 * reference integrity check on); the device's name into device, *deterministic ANDed with the
 * session's, *sessions counted. */
static inline st_status sg_open_session(st_session **sess, const uint8_t *data, size_t size, const st_launch *spec,
					unsigned long long seed, unsigned w, unsigned rotate, char device[128],
					int *deterministic, unsigned *sessions, st_error *err)
{
	st_session_close(*sess);
	*sess = NULL;
	st_runtime_options ro;
	st_runtime_options_init(&ro);
	ro.seed = seed * 1000 + w / rotate + 1;
	ro.check_reference = true;
	st_status rc = st_session_open(data, size, spec, &ro, sess, err);
	if (rc)
		return rc;
	st_session_info info;
	st_session_get_info(*sess, &info);
	snprintf(device, 128, "%s", info.device);
	*deterministic = *deterministic && info.deterministic;
	(*sessions)++;
	return ST_OK;
}
#endif
