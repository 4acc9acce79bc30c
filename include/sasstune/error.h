/* sasstune: status codes and error messages.
 *
 * Every fallible function in the library returns an st_status and takes an
 * `st_error *err` as its last argument (which may be NULL).  On failure the
 * function fills err->msg with one printable line naming the problem.  There
 * is no global error state; the library never calls exit() or abort().
 */
#ifndef SASSTUNE_ERROR_H
#define SASSTUNE_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum st_status {
	ST_OK = 0,
	ST_EINVAL = -1,       /* bad argument from the caller */
	ST_ENOMEM = -2,       /* out of memory */
	ST_EIO = -3,          /* a file could not be read or written */
	ST_EFORMAT = -4,      /* malformed input (ELF, listing, JSON, ...) */
	ST_EUNSUPPORTED = -5, /* well-formed input we refuse to touch */
	ST_ENOTFOUND = -6,    /* a named thing (kernel, tool, entry) is missing */
	ST_EILLEGAL = -7,     /* a move or schedule breaks a dependence */
	ST_EDEVICE = -8,      /* no GPU, no driver, or a driver call failed */
	ST_ECRASH = -9,       /* a candidate kernel faulted */
	ST_ETIMEOUT = -10,    /* a candidate kernel hung or a tool timed out */
	ST_EMISMATCH = -11,   /* a candidate's outputs differ from the reference */
	ST_ETOOL = -12,       /* an external tool (nvdisasm, ptxas) failed */
	ST_ECONTAMINATED = -13, /* a session's reference no longer reproduces (a stray write) */
} st_status;

#define ST_ERROR_MSG_MAX 512

typedef struct st_error {
	st_status code;
	char msg[ST_ERROR_MSG_MAX];
} st_error;

/* Short, stable name of a status ("ok", "invalid argument", ...). */
const char *st_status_str(st_status code);

/* Record an error (if err is not NULL) and return code, so that callers can
 * write `return st_error_set(err, ST_EFORMAT, "...", ...);`. */
st_status st_error_set(st_error *err, st_status code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Prefix the message already in err with "what: ", keeping its code, and return
 * that code.  It never returns ST_OK: with err NULL (or holding no code) it
 * cannot know the failure and returns ST_EINVAL, so a caller that has the
 * status in hand returns its own: `return st_error_wrap(err, "ctx"), rc;`. */
st_status st_error_wrap(st_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

void st_error_clear(st_error *err);

#ifdef __cplusplus
}
#endif
#endif
