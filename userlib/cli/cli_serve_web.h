/* SPDX-License-Identifier: MIT */
/* wafer serve's web page (cli_serve_web.c): the files served at /. */
#ifndef CLI_SERVE_WEB_H
#define CLI_SERVE_WEB_H

#include <microhttpd.h>

/* 1 if @url is one of the page's files (/, /index.html, /app.js, /style.css). */
int cli_srv_web_has(const char *url);
/* Queues the file @url names (cli_srv_web_has()) on @c. */
enum MHD_Result cli_srv_web_reply(struct MHD_Connection *c, const char *url);

#endif /* CLI_SERVE_WEB_H */
