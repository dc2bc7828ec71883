// SPDX-License-Identifier: MIT
/*
 * wafer run -m chat: a conversation, as llama2.c's chat mode and
 * llama-cli's conversation mode hold one.  Each user turn (-i for the
 * first, then a line of stdin after "User: "; --single-turn: -i alone) is
 * added to the messages (a -y system prompt first), the messages go through
 * the chat template wafer serve uses (cli_serve_template.c: story by
 * default, or --chat-template), and the model answers after "Assistant: "
 * until it samples EOS or BOS or the -n positions are used.  Every turn
 * runs the whole conversation again from position 0, so a reply is the one
 * wafer serve's /v1/chat/completions gives for the same messages.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_serve.h"

/**
 * struct chat_msgs - the conversation so far
 * @role: each message's role
 * @text: its content
 * @n: messages
 * @cap: allocated
 */
struct chat_msgs {
	const char **role;
	struct cli_srv_text *text;
	size_t n;
	size_t cap;
};

static int push(struct chat_msgs *m, const char *role, const char *s, size_t len)
{
	struct cli_srv_text *t;
	const char **r;

	if (m->n == m->cap) {
		m->cap = m->cap ? m->cap * 2 : 8;
		r = realloc(m->role, m->cap * sizeof(*r));
		if (r)
			m->role = r;
		t = realloc(m->text, m->cap * sizeof(*t));
		if (t)
			m->text = t;
		if (!r || !t)
			return -1;
	}
	t = &m->text[m->n];
	t->p = malloc(len + 1);
	if (!t->p)
		return -1;
	memcpy(t->p, s, len);
	t->p[len] = '\0';
	t->len = len;
	t->cap = len + 1;
	m->role[m->n++] = role;
	return 0;
}

static void msgs_free(struct chat_msgs *m)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		free(m->text[i].p);
	free(m->text);
	free(m->role);
}

int cli_chat_template(struct cli_chat *c, const char *src)
{
	char err[160];

	free(c->tmpl);
	c->tmpl = malloc(sizeof(*c->tmpl));
	if (!c->tmpl) {
		fprintf(stderr, "wafer run: out of memory\n");
		return 2;
	}
	if (!cli_srv_template_parse(src, c->tmpl, err, sizeof(err)))
		return 0;
	fprintf(stderr, "wafer run: --chat-template does not parse: %s\n", err);
	return 2;
}

void cli_chat_free(struct cli_chat *c)
{
	free(c->tmpl);
	c->tmpl = NULL;
}

/* The reply being generated: printed and kept for the next turn's messages. */
static int on_piece(void *arg, int token, const char *piece, int from_prompt)
{
	struct cli_srv_text *reply = arg;
	size_t n = strlen(piece);
	char *p;

	if (from_prompt)
		return 0;
	if (token == WAFER_TOKEN_EOS)
		return 1;	/* the end of the assistant's turn (llama2.c's chat) */
	if (!wafer_piece_printable(piece))
		return 0;
	fputs(piece, stdout);
	fflush(stdout);
	if (reply->len + n + 1 > reply->cap) {
		reply->cap = (reply->len + n + 1) * 2;
		p = realloc(reply->p, reply->cap);
		if (!p)
			return 1;
		reply->p = p;
	}
	memcpy(reply->p + reply->len, piece, n + 1);
	reply->len += n;
	return 0;
}

/* The next user turn: -i first, else a line of stdin; NULL at the end. */
static char *user_turn(const char *prompt, unsigned int turn, const struct cli_chat *c,
		       char **line, size_t *cap)
{
	ssize_t n;

	if (!turn && prompt)
		return (char *)prompt;
	if (turn && c->single_turn)
		return NULL;
	printf("User: ");
	fflush(stdout);
	n = getline(line, cap, stdin);
	if (n < 0) {
		printf("\n");
		return NULL;
	}
	while (n && ((*line)[n - 1] == '\n' || (*line)[n - 1] == '\r'))
		(*line)[--n] = '\0';
	return *line;
}

int cli_run_chat(struct wafer_ctx *ctx, const struct wafer_tokenizer *tok, const char *prompt,
		 const struct cli_chat *c, const struct wafer_gen_opts *go)
{
	static const struct cli_srv_template story = { .kind = CLI_SRV_TPL_STORY };
	struct cli_srv_text conv = { 0 }, reply = { 0 };
	struct chat_msgs m = { 0 };
	struct wafer_gen_opts o = *go;
	struct wafer_gen_stats st;
	char *line = NULL, *user;
	unsigned int turn;
	size_t cap = 0;
	int ret = 0;

	if (c->system && push(&m, "system", c->system, strlen(c->system)))
		ret = -1;
	for (turn = 0; !ret && (user = user_turn(prompt, turn, c, &line, &cap)); turn++) {
		conv.len = 0;
		reply.len = 0;
		if (push(&m, "user", user, strlen(user)) ||
		    cli_srv_template_apply(c->tmpl ? c->tmpl : &story, m.role, m.text, m.n, &conv)) {
			ret = -1;
			break;
		}
		printf("Assistant: ");
		fflush(stdout);
		o.on_piece = on_piece;
		o.arg = &reply;
		o.seed = go->seed + turn;
		ret = wafer_generate(ctx, tok, conv.p, &o, &st);
		printf("\n");
		fflush(stdout);
		if (ret) {
			fprintf(stderr, "wafer run: generating: %s\n", wafer_last_error());
			ret = 1;
			break;
		}
		fprintf(stderr, "wafer: turn %u: %u prompt tokens, %u generated, time to first "
			"token %.3f ms\n", turn + 1, st.prompt_tokens, st.generated_tokens,
			st.ttft_ns / 1e6);
		if (st.prompt_tokens + st.generated_tokens >= o.steps) {
			fprintf(stderr, "wafer run: the conversation fills the %u positions of -n: "
				"it ends here\n", o.steps);
			break;
		}
		if (push(&m, "assistant", reply.p ? reply.p : "", reply.len))
			ret = -1;
	}
	if (ret < 0) {
		fprintf(stderr, "wafer run: out of memory\n");
		ret = 1;
	}
	free(line);
	free(conv.p);
	free(reply.p);
	msgs_free(&m);
	return ret;
}
