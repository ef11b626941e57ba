/*
 * netlibs.c — libmicrohttpd and libcurl, opened on first use (see netlibs.h).
 *
 * The sonames are those of the libraries the headers come from, Debian's
 * libmicrohttpd12 and libcurl4 (the -dev packages the build installs pull
 * them in).
 */
#include "serve/netlibs.h"

#include "base/dynlib.h"

#include <stddef.h>

struct vt_mhd_api vt_mhd;
struct vt_curl_api vt_curl;

#define MHD_SYM(member, name) { name, offsetof(struct vt_mhd_api, member) }
static const struct vt_dynsym mhd_syms[] = {
	MHD_SYM(start_daemon, "MHD_start_daemon"),
	MHD_SYM(stop_daemon, "MHD_stop_daemon"),
	MHD_SYM(is_feature_supported, "MHD_is_feature_supported"),
	MHD_SYM(create_response_from_buffer, "MHD_create_response_from_buffer"),
	MHD_SYM(add_response_header, "MHD_add_response_header"),
	MHD_SYM(queue_response, "MHD_queue_response"),
	MHD_SYM(queue_basic_auth_fail_response, "MHD_queue_basic_auth_fail_response"),
	MHD_SYM(destroy_response, "MHD_destroy_response"),
	MHD_SYM(basic_auth_get_username_password, "MHD_basic_auth_get_username_password"),
	MHD_SYM(lookup_connection_value, "MHD_lookup_connection_value"),
	MHD_SYM(free, "MHD_free"),
	MHD_SYM(get_connection_info, "MHD_get_connection_info"),
	MHD_SYM(suspend_connection, "MHD_suspend_connection"),
	MHD_SYM(resume_connection, "MHD_resume_connection"),
};
#undef MHD_SYM

#define CURL_SYM(member, name) { name, offsetof(struct vt_curl_api, member) }
static const struct vt_dynsym curl_syms[] = {
	CURL_SYM(global_init, "curl_global_init"),
	CURL_SYM(global_cleanup, "curl_global_cleanup"),
	CURL_SYM(easy_init, "curl_easy_init"),
	CURL_SYM(easy_setopt, "curl_easy_setopt"),
	CURL_SYM(easy_perform, "curl_easy_perform"),
	CURL_SYM(easy_getinfo, "curl_easy_getinfo"),
	CURL_SYM(easy_cleanup, "curl_easy_cleanup"),
	CURL_SYM(easy_strerror, "curl_easy_strerror"),
	CURL_SYM(easy_escape, "curl_easy_escape"),
	CURL_SYM(free, "curl_free"),
};
#undef CURL_SYM

static struct vt_dynlib mhd_lib = VT_DYNLIB("libmicrohttpd.so.12", "libmicrohttpd12", "vitals serve",
					mhd_syms, &vt_mhd);
static struct vt_dynlib curl_lib = VT_DYNLIB("libcurl.so.4", "libcurl4", "--prometheus",
					curl_syms, &vt_curl);

int vt_mhd_load(struct vt_err *err)
{
	return vt_dynlib_load(&mhd_lib, err);
}

int vt_curl_load(struct vt_err *err)
{
	return vt_dynlib_load(&curl_lib, err);
}
