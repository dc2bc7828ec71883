// SPDX-License-Identifier: MIT
// The `openai` npm client against `wafer serve` (run by userlib_serve):
//   node serve_openai.cjs PORT PROMPT MAX_TOKENS
// prints one JSON line: the model list, completions and chat, streamed and
// not, and the error an unknown model gets. The module comes from
// $WAFER_NPM/node_modules (tests/setup/setup installs it there).
'use strict';

const OpenAI = require(`${process.env.WAFER_NPM}/node_modules/openai`);

async function main() {
	const [port, prompt, maxTokens] = process.argv.slice(2);
	const client = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: 'unused',
				    maxRetries: 0, timeout: 30000 });
	const out = {};
	const model = 'stories260K';
	const max_tokens = Number(maxTokens);

	out.models = (await client.models.list()).data.map((m) => m.id);
	const c = await client.completions.create({ model, prompt, max_tokens, temperature: 0 });
	out.completion = { text: c.choices[0].text, finish: c.choices[0].finish_reason,
			   usage: c.usage };
	let text = '';
	let finish = null;
	let usage = null;
	const s = await client.completions.create({ model, prompt, max_tokens, temperature: 0,
						    stream: true,
						    stream_options: { include_usage: true } });
	for await (const ch of s) {
		if (ch.choices.length) {
			text += ch.choices[0].text;
			finish = ch.choices[0].finish_reason || finish;
		}
		if (ch.usage)
			usage = ch.usage;
	}
	out.completion_stream = { text, finish, usage };
	const messages = [{ role: 'user', content: prompt }];
	const cc = await client.chat.completions.create({ model, messages, max_tokens,
							   temperature: 0 });
	out.chat = { text: cc.choices[0].message.content, role: cc.choices[0].message.role,
		     finish: cc.choices[0].finish_reason };
	text = '';
	finish = null;
	let role = null;
	const cs = await client.chat.completions.create({ model, messages, max_tokens,
							   temperature: 0, stream: true });
	for await (const ch of cs) {
		const d = ch.choices[0].delta;
		role = d.role || role;
		text += d.content || '';
		finish = ch.choices[0].finish_reason || finish;
	}
	out.chat_stream = { text, role, finish };
	try {
		await client.completions.create({ model: 'no-such-model', prompt: 'a' });
		out.error = null;
	} catch (e) {
		out.error = { status: e.status, code: e.code, param: e.param, type: e.type };
	}
	console.log(JSON.stringify(out));
}

main().catch((e) => {
	console.log(JSON.stringify({ failed: String(e) }));
	process.exit(1);
});
