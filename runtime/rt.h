/* Internal pieces of the runtime module (not public API). */
#ifndef ST_RT_H
#define ST_RT_H

#include "sasstune/runtime.h"
#include "util/util.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- data types ---- */
typedef enum st_dtype {
	ST_DT_NONE = 0,
	ST_DT_I1, ST_DT_I8, ST_DT_I16, ST_DT_I32, ST_DT_I64,
	ST_DT_U8, ST_DT_U16, ST_DT_U32, ST_DT_U64,
	ST_DT_F16, ST_DT_BF16, ST_DT_F32, ST_DT_F64,
} st_dtype;

unsigned st_rt_dtype_size(st_dtype t);     /* bytes per element; 0 for NONE */
bool st_rt_dtype_is_float(st_dtype t);
const char *st_rt_dtype_name(st_dtype t);
st_dtype st_rt_dtype_parse(const char *s); /* "fp16", "f16", "i32", ...; NONE if unknown */

uint16_t st_rt_f32_to_f16(float f);        /* round to nearest even */
float st_rt_f16_to_f32(uint16_t h);
uint16_t st_rt_f32_to_bf16(float f);       /* round to nearest even */
float st_rt_bf16_to_f32(uint16_t h);

/* ---- launch specs ---- */
typedef enum st_pkind { ST_P_PTR, ST_P_SCALAR, ST_P_BYTES, ST_P_TENSORMAP } st_pkind;

typedef enum st_init {
	ST_INIT_ZEROS, ST_INIT_ONES, ST_INIT_FILL, ST_INIT_RANDN, ST_INIT_UNIFORM,
	ST_INIT_RANDINT, ST_INIT_ARANGE, ST_INIT_RANDBYTES, ST_INIT_FILE,
} st_init;

#define ST_TMAP_MAX_RANK 5

typedef struct st_param {
	st_pkind kind;
	st_dtype dtype;
	/* ST_P_SCALAR and ST_P_BYTES: the bytes passed by value */
	uint32_t size;
	uint8_t *value;
	/* ST_P_PTR: a device buffer (bytes 0: a null pointer) */
	uint64_t bytes;
	st_init init;
	double a, b;    /* mean/std, low/high, fill value, arange start/step */
	char *file;     /* ST_INIT_FILE: resolved path */
	bool verify;    /* compare this buffer with the reference (default true) */
	char *name;     /* a buffer's "name" (printable), or NULL */
	/* ST_P_TENSORMAP: a CUtensorMap (128 bytes) over ptr param `tensor`, or, when
	 * in_buffers, over hidden buffer `tensor` (an index into st_launch.buffers) */
	bool in_buffers;
	uint32_t tensor, rank, swizzle, interleave, l2_promotion, oob_fill;
	uint64_t shape[ST_TMAP_MAX_RANK], strides[ST_TMAP_MAX_RANK]; /* outermost first, elements */
	uint32_t box[ST_TMAP_MAX_RANK], elem_strides[ST_TMAP_MAX_RANK];
} st_param;

struct st_launch {
	char *kernel;
	unsigned grid[3], block[3], shared_bytes;
	size_t nparams;
	st_param *params;
	/* "buffers": device buffers that are not kernel parameters (the tensors behind
	 * host TMA descriptors); kind ST_P_PTR, bytes > 0.  Allocated, filled, guarded
	 * and verified like ptr params, but not passed to the kernel. */
	size_t nbuffers;
	st_param *buffers;
	char *text;     /* the JSON it was parsed from (sent to the worker) */
	size_t text_len;
	char *base_dir; /* where relative "file" paths start, or NULL */
};

/* ---- random data ---- */
typedef struct st_rt_rng { uint64_t s[4]; } st_rt_rng;
void st_rt_rng_seed(st_rt_rng *r, uint64_t seed);
uint64_t st_rt_rng_next(st_rt_rng *r);
double st_rt_rng_uniform(st_rt_rng *r); /* [0, 1) */
double st_rt_rng_normal(st_rt_rng *r);
uint64_t st_rt_mix64(uint64_t x);

/* Fill a buffer param's host bytes for input set `set` (files are read here). */
st_status st_rt_param_fill(const st_param *p, uint64_t seed, unsigned set, unsigned index, uint8_t *dst,
			st_error *err);
/* The same for any buffer: `stream` picks its random stream (a param's index;
 * nparams + j for buffers[j]), `label` names it in errors ("buffers[0]"). */
st_status st_rt_buffer_fill(const st_param *p, uint64_t seed, unsigned set, unsigned stream, const char *label,
			 uint8_t *dst, st_error *err);

/* Compare a candidate buffer with the reference.  exact: bit for bit; else the
 * relative L2 error over dtype elements must be <= tol (NaN only where the
 * reference has NaN).  On mismatch, writes a one-line description to why. */
bool st_rt_buffers_match(const uint8_t *ref, const uint8_t *got, uint64_t bytes, st_dtype dt, bool exact,
		      double tol, char *why, size_t why_len);

/* 64-bit FNV-1a */
uint64_t st_rt_hash64(const void *data, size_t n, uint64_t h);
double st_rt_now_ms(void); /* monotonic clock */

/* ---- worker protocol: framed messages over a stream socket ---- */
enum {
	ST_MSG_INIT = 1,
	ST_MSG_VERIFY = 2,
	ST_MSG_TIME = 3,
	ST_MSG_QUIT = 4,
	ST_MSG_PROGRESS = 5, /* worker -> caller during INIT: f64 expected GPU ms still to come */
	ST_MSG_PROFILE = 6,  /* CUPTI PC sampling of one cubin (docs/profile.md) */
	ST_MSG_CHECK = 7,    /* the reference integrity check (st_session_check_reference) */
	ST_MSG_REPLY = 0x100,
};
#define ST_PROTO_MAGIC 0x31575453u /* "STW1" */
#define ST_PROTO_VERSION 2
#define ST_TIME_B_IS_COPY 1u /* TIME flag: B is a second, separately loaded module of A */
#define ST_INIT_NONDET 1u    /* INIT flag: an earlier worker found the reference not deterministic */
/* Requests and replies (fields in this order):
 *   INIT   u32 version, u32 sets, u64 seed, u32 flush, u32 device, f64 sample_us, f64 warmup_ms,
 *          f64 tolerance, u32 flags (ST_INIT_NONDET), str libcuda, str spec_json, str base_dir,
 *          blob cubin
 *   VERIFY blob cubin
 *   TIME   u32 pairs, u32 flags, blob a, blob b (empty: the reference)
 *   PROFILE u32 period (log2 cycles, 0 default), u32 max_launches, f64 target_ms, blob cubin
 *          (empty: the reference)
 *   CHECK  (nothing)
 *   REPLY  u32 status (st_status), str message, then for
 *     INIT   str device, u32 cc_major, u32 cc_minor, u32 driver, u32 sms, u32 l2_bytes,
 *            u32 deterministic, f64 kernel_ms, u32 reps, u32 regs, u32 local_bytes, u64 ref_digest,
 *            f64 init_ms, u32 verify_on_gpu
 *     VERIFY f64 load_ms, f64 verify_ms, u32 regs, u32 local_bytes
 *     TIME   u32 n, u32 reps, f64 wall_ms, f64 a_ms[n], f64 b_ms[n]   (per launch)
 *     PROFILE str samples (the samples file, schema sasstune-samples-1)
 *     CHECK  f64 check_ms (status ST_ECONTAMINATED: the reference no longer reproduces) */
#define ST_PROTO_MAX (1ull << 32)

typedef struct st_rt_reader {
	const uint8_t *p;
	size_t left;
	bool bad;
} st_rt_reader;

typedef struct st_rt_writer {
	st_buf b;
	bool failed; /* an allocation failed; the message must not be sent */
} st_rt_writer;

void st_rt_put_u32(st_rt_writer *w, uint32_t v);
void st_rt_put_u64(st_rt_writer *w, uint64_t v);
void st_rt_put_f64(st_rt_writer *w, double v);
void st_rt_put_blob(st_rt_writer *w, const void *data, size_t n); /* u64 length + bytes */
void st_rt_put_str(st_rt_writer *w, const char *s);              /* NULL is sent as "" */
void st_rt_put_raw(st_rt_writer *w, const void *data, size_t n);  /* bytes, no length */
uint32_t st_rt_get_u32(st_rt_reader *r);
uint64_t st_rt_get_u64(st_rt_reader *r);
double st_rt_get_f64(st_rt_reader *r);
const uint8_t *st_rt_get_blob(st_rt_reader *r, size_t *n);
char *st_rt_get_str(st_rt_reader *r); /* malloc'ed, NUL-terminated; NULL on error */

/* Send/receive one message.  st_rt_msg_recv waits until deadline_ms (st_rt_now_ms()
 * clock; <= 0: forever); returns ST_ETIMEOUT when it passes, ST_EIO on EOF. */
st_status st_rt_msg_send(int fd, uint32_t type, const st_rt_writer *payload, st_error *err);
st_status st_rt_msg_recv(int fd, double deadline_ms, uint32_t *type, uint8_t **payload, size_t *len,
		      st_error *err);

#endif
