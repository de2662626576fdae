/* error.c: error messages for libseed's return codes. */
#include "seed/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int seed_err_set(seed_err *err, int code, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof err->msg, fmt, ap);
		va_end(ap);
	}
	return code;
}

const char *seed_strerror(int code)
{
	switch (-code) {
	case 0:
		return "success";
	case SEED_EFRAME:
		return "malformed frame";
	case SEED_ETYPE:
		return "unknown frame type";
	case SEED_EVERSION:
		return "unsupported protocol version";
	case SEED_EOPTION:
		return "bad option";
	case SEED_EEOF:
		return "end of stream";
	default:
		return code < 0 ? strerror(-code) : "unknown error";
	}
}
