/*
 * netlibs.h — libmicrohttpd (vitals serve) and libcurl (--prometheus),
 * opened when one of them is first needed (base/dynlib.h says why).
 *
 * Each is a table of the functions vitals calls, typed from the library's
 * own header, so a call through it is checked like a direct call:
 *     if ((rc = vt_mhd_load(err)) != VT_OK) return rc;
 *     d = vt_mhd.start_daemon(flags, ...);
 * Only src/serve includes this (and with it <microhttpd.h> and <curl/curl.h>).
 */
#ifndef VT_SERVE_NETLIBS_H
#define VT_SERVE_NETLIBS_H

#include <curl/curl.h>
#include <microhttpd.h>

#include "base/error.h"

struct vt_mhd_api {
	__typeof__(&MHD_start_daemon) start_daemon;
	__typeof__(&MHD_stop_daemon) stop_daemon;
	__typeof__(&MHD_is_feature_supported) is_feature_supported;
	__typeof__(&MHD_create_response_from_buffer) create_response_from_buffer;
	__typeof__(&MHD_add_response_header) add_response_header;
	__typeof__(&MHD_queue_response) queue_response;
	__typeof__(&MHD_queue_basic_auth_fail_response) queue_basic_auth_fail_response;
	__typeof__(&MHD_destroy_response) destroy_response;
	__typeof__(&MHD_basic_auth_get_username_password) basic_auth_get_username_password;
	__typeof__(&MHD_lookup_connection_value) lookup_connection_value;
	__typeof__(&MHD_free) free;
	__typeof__(&MHD_get_connection_info) get_connection_info;
	__typeof__(&MHD_suspend_connection) suspend_connection;
	__typeof__(&MHD_resume_connection) resume_connection;
};

struct vt_curl_api {
	__typeof__(&curl_global_init) global_init;
	__typeof__(&curl_global_cleanup) global_cleanup;
	__typeof__(&curl_easy_init) easy_init;
	__typeof__(&curl_easy_setopt) easy_setopt;
	__typeof__(&curl_easy_perform) easy_perform;
	__typeof__(&curl_easy_getinfo) easy_getinfo;
	__typeof__(&curl_easy_cleanup) easy_cleanup;
	__typeof__(&curl_easy_strerror) easy_strerror;
	__typeof__(&curl_easy_escape) easy_escape;
	__typeof__(&curl_free) free;
};

/* Filled by the loads below; call nothing in them before a load returned VT_OK. */
extern struct vt_mhd_api vt_mhd;
extern struct vt_curl_api vt_curl;

/* Open the library (once) and fill its table; VT_E_UNSUPPORTED naming the package when it is missing. */
int vt_mhd_load(struct vt_err *err);
int vt_curl_load(struct vt_err *err);

#endif
