// SPDX-License-Identifier: MIT
/*
 * wafer serve's web page: the files of userlib/web/, compiled into the
 * binary (.incbin: no build step, nothing fetched from elsewhere), served
 * at / with a policy that lets the page load only from this server.
 */
#include <microhttpd.h>
#include <string.h>

#include "cli_serve_web.h"

/* WEB_FILE(sym, path): sym[] .. sym_end[] hold the file's bytes. */
#define WEB_FILE(sym, path)							\
	__asm__(".section .rodata\n"						\
		".balign 16\n"							\
		#sym ":\n"							\
		".incbin \"" path "\"\n"					\
		#sym "_end:\n"							\
		".previous\n");							\
	extern const char sym[], sym ## _end[]

WEB_FILE(cli_web_index, "userlib/web/index.html");
WEB_FILE(cli_web_app, "userlib/web/app.js");
WEB_FILE(cli_web_style, "userlib/web/style.css");

static const struct {
	const char *url;
	const char *type;
	const char *start;
	const char *end;
} files[] = {
	{ "/", "text/html; charset=utf-8", cli_web_index, cli_web_index_end },
	{ "/index.html", "text/html; charset=utf-8", cli_web_index, cli_web_index_end },
	{ "/app.js", "text/javascript; charset=utf-8", cli_web_app, cli_web_app_end },
	{ "/style.css", "text/css; charset=utf-8", cli_web_style, cli_web_style_end },
};

int cli_srv_web_has(const char *url)
{
	unsigned int i;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		if (!strcmp(url, files[i].url))
			return 1;
	return 0;
}

enum MHD_Result cli_srv_web_reply(struct MHD_Connection *c, const char *url)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;
	unsigned int i;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		if (!strcmp(url, files[i].url))
			break;
	if (i == sizeof(files) / sizeof(files[0]))
		return MHD_NO;
	resp = MHD_create_response_from_buffer((size_t)(files[i].end - files[i].start),
					       (void *)files[i].start, MHD_RESPMEM_PERSISTENT);
	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, "Content-Type", files[i].type);
	MHD_add_response_header(resp, "Content-Security-Policy",
				"default-src 'self'; style-src 'self'; script-src 'self'; "
				"connect-src 'self'; frame-ancestors 'none'");
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(resp, "Cache-Control", "no-cache");
	ret = MHD_queue_response(c, MHD_HTTP_OK, resp);
	MHD_destroy_response(resp);
	return ret;
}
