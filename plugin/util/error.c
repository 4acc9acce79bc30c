/* Status strings and the st_error helpers. */
#include "sasstune/error.h"
#include "sasstune/version.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *st_version(void) { return ST_VERSION_STRING; }

const char *st_status_str(st_status code)
{
	switch (code) {
	case ST_OK: return "ok";
	case ST_EINVAL: return "invalid argument";
	case ST_ENOMEM: return "out of memory";
	case ST_EIO: return "i/o error";
	case ST_EFORMAT: return "malformed input";
	case ST_EUNSUPPORTED: return "unsupported input";
	case ST_ENOTFOUND: return "not found";
	case ST_EILLEGAL: return "illegal move";
	case ST_EDEVICE: return "device error";
	case ST_ECRASH: return "kernel crashed";
	case ST_ETIMEOUT: return "timed out";
	case ST_EMISMATCH: return "output mismatch";
	case ST_ETOOL: return "external tool failed";
	case ST_ECONTAMINATED: return "the session's reference no longer reproduces: a candidate wrote outside its buffers";
	}
	return "unknown status";
}

st_status st_error_set(st_error *err, st_status code, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		err->code = code;
		vsnprintf(err->msg, sizeof err->msg, fmt, ap);
		va_end(ap);
	}
	return code;
}

st_status st_error_wrap(st_error *err, const char *fmt, ...)
{
	if (!err)
		return ST_EINVAL; /* the code is unknown here; callers holding one return it instead */
	char joined[2 * ST_ERROR_MSG_MAX + 2];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(joined, ST_ERROR_MSG_MAX, fmt, ap);
	va_end(ap);
	size_t len = n < 0 ? 0 : (size_t)n >= ST_ERROR_MSG_MAX ? ST_ERROR_MSG_MAX - 1 : (size_t)n;
	size_t old = strnlen(err->msg, ST_ERROR_MSG_MAX - 1);
	if (old) {
		joined[len++] = ':';
		joined[len++] = ' ';
	}
	memcpy(joined + len, err->msg, old);
	len += old;
	if (len >= ST_ERROR_MSG_MAX)
		len = ST_ERROR_MSG_MAX - 1;
	memcpy(err->msg, joined, len);
	err->msg[len] = '\0';
	if (err->code == ST_OK) /* wrapping an error nobody set: still a failure */
		err->code = ST_EINVAL;
	return err->code;
}

void st_error_clear(st_error *err)
{
	if (err) {
		err->code = ST_OK;
		err->msg[0] = '\0';
	}
}
