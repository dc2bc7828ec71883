// SPDX-License-Identifier: MIT
// The `openai` npm client against `wafer serve --api-key KEY` (run by
// userlib_serve_access):
//   node serve_openai_surface.cjs PORT KEY
// prints one JSON line: what a wrong key and the right one get, models.retrieve(),
// completions with logprobs, echo and n, streamed and not, chat with logprobs
// streamed and not, chat through a template (chat_template, an extra field),
// /tokenize and /detokenize (llama-server's, through fetch with the key), and
// the errors n above the slots and top_logprobs above the device's k get.
'use strict';

const OpenAI = require(`${process.env.WAFER_NPM}/node_modules/openai`);

function err(e) {
	return { status: e.status, code: e.code, param: e.param };
}

async function main() {
	const [port, key] = process.argv.slice(2);
	const baseURL = `http://127.0.0.1:${port}/v1`;
	const client = new OpenAI({ baseURL, apiKey: key, maxRetries: 0, timeout: 30000 });
	const wrong = new OpenAI({ baseURL, apiKey: `${key}x`, maxRetries: 0, timeout: 30000 });
	const model = 'stories260K';
	const prompt = 'Once upon a time';
	const out = {};

	try {
		await wrong.models.list();
		out.wrong_key = null;
	} catch (e) {
		out.wrong_key = err(e);
	}
	out.model = (await client.models.retrieve(model)).id;
	const c = await client.completions.create({ model, prompt, max_tokens: 8, temperature: 0,
						    logprobs: 3, n: 2 });
	out.completion = c.choices.map((x) => ({ text: x.text, index: x.index,
						 tokens: x.logprobs.tokens,
						 logprobs: x.logprobs.token_logprobs,
						 top: x.logprobs.top_logprobs.map((t) => Object.keys(t).length) }));
	const texts = ['', ''];
	const lps = [[], []];
	const s = await client.completions.create({ model, prompt, max_tokens: 8, temperature: 0,
						    logprobs: 3, n: 2, stream: true });
	for await (const ch of s) {
		for (const x of ch.choices) {
			texts[x.index] += x.text;
			if (x.logprobs)
				lps[x.index].push(...x.logprobs.token_logprobs);
		}
	}
	out.completion_stream = { texts, logprobs: lps };
	const e = await client.completions.create({ model, prompt, max_tokens: 0, echo: true,
						    logprobs: 1 });
	out.echo = { text: e.choices[0].text, tokens: e.choices[0].logprobs.tokens,
		     logprobs: e.choices[0].logprobs.token_logprobs };
	const cc = await client.chat.completions.create({
		model, messages: [{ role: 'user', content: prompt }], max_tokens: 8, temperature: 0,
		logprobs: true, top_logprobs: 2 });
	out.chat = { text: cc.choices[0].message.content,
		     tokens: cc.choices[0].logprobs.content.map((x) => x.token),
		     logprobs: cc.choices[0].logprobs.content.map((x) => x.logprob),
		     top: cc.choices[0].logprobs.content.map((x) => x.top_logprobs.length) };
	let stext = '';
	const slps = [];
	const cs = await client.chat.completions.create({
		model, messages: [{ role: 'user', content: prompt }], max_tokens: 8, temperature: 0,
		logprobs: true, top_logprobs: 2, stream: true });
	for await (const ch of cs) {
		for (const x of ch.choices) {
			stext += x.delta.content || '';
			if (x.logprobs)
				slps.push(...x.logprobs.content.map((y) => y.logprob));
		}
	}
	out.chat_stream = { text: stext, logprobs: slps };
	const ct = await client.chat.completions.create({
		model, messages: [{ role: 'system', content: 'Be kind' },
				  { role: 'user', content: prompt }],
		max_tokens: 1, temperature: 0, chat_template: 'chatml' });
	out.chat_template_usage = ct.usage;
	const hdr = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' };
	const t = await fetch(`http://127.0.0.1:${port}/tokenize`,
			      { method: 'POST', headers: hdr, body: JSON.stringify({ content: prompt }) });
	out.tokenize = await t.json();
	const d = await fetch(`http://127.0.0.1:${port}/detokenize`,
			      { method: 'POST', headers: hdr,
				body: JSON.stringify({ tokens: out.tokenize.tokens }) });
	out.detokenize = await d.json();
	try {
		await client.completions.create({ model, prompt, n: 999 });
		out.n_error = null;
	} catch (e2) {
		out.n_error = err(e2);
	}
	try {
		await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'a' }],
						       logprobs: true, top_logprobs: 33 });
		out.top_error = null;
	} catch (e3) {
		out.top_error = err(e3);
	}
	console.log(JSON.stringify(out));
}

main().catch((e) => {
	console.log(JSON.stringify({ failed: String(e) }));
	process.exit(1);
});
