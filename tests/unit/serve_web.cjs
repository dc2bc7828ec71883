// SPDX-License-Identifier: MIT
// Drives wafer serve's web page in headless Chromium over the DevTools
// protocol (--remote-debugging-pipe: no port, no network beyond loopback):
// types a prompt, sends it, waits for the streamed answer, reads what the
// page shows, saves a screenshot.  Prints one JSON object.
//   node serve_web.cjs PORT SCREENSHOT.png PROMPT MAX_TOKENS
'use strict';
const { spawn } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const [port, shot, prompt, maxTokens] = process.argv.slice(2);
const base = 'http://127.0.0.1:' + port;
const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'wafer-chromium-'));
const chrome = spawn('chromium', ['--headless', '--no-sandbox', '--disable-gpu',
	'--remote-debugging-pipe', '--no-first-run', '--no-default-browser-check',
	'--disable-extensions', '--disable-background-networking', '--disable-sync',
	'--user-data-dir=' + profile, 'about:blank'],
	{ stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] });
let stderr = '';
chrome.stderr.on('data', (d) => { stderr += d; });

let nextId = 1, inbuf = '';
const pending = new Map();
chrome.stdio[4].on('data', (d) => {
	inbuf += d;
	let i;
	while ((i = inbuf.indexOf('\0')) >= 0) {
		const msg = JSON.parse(inbuf.slice(0, i));
		inbuf = inbuf.slice(i + 1);
		const p = pending.get(msg.id);
		if (p) {
			pending.delete(msg.id);
			if (msg.error)
				p.reject(new Error(JSON.stringify(msg.error)));
			else
				p.resolve(msg.result);
		}
	}
});
function send(method, params, sessionId) {
	const id = nextId++;
	chrome.stdio[3].write(JSON.stringify({ id, method, params: params || {}, sessionId }) + '\0');
	return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function main() {
	const { targetId } = await send('Target.createTarget', { url: 'about:blank' });
	const { sessionId } = await send('Target.attachToTarget', { targetId, flatten: true });
	const s = (m, p) => send(m, p, sessionId);
	const js = async (expr) => {
		const r = await s('Runtime.evaluate', { expression: expr, awaitPromise: true,
							returnByValue: true });
		if (r.exceptionDetails)
			throw new Error(expr + ': ' + JSON.stringify(r.exceptionDetails));
		return r.result.value;
	};
	const until = async (expr, what) => {
		for (let i = 0; i < 300; i++) {
			if (await js(expr))
				return;
			await sleep(50);
		}
		throw new Error('the page never showed ' + what);
	};
	await s('Emulation.setDeviceMetricsOverride', { width: 1280, height: 860,
						       deviceScaleFactor: 1, mobile: false });
	await s('Page.enable');
	await s('Page.navigate', { url: base + '/' });
	await until('document.readyState === "complete" && ' +
		    '/^model /.test(document.getElementById("model").textContent) && ' +
		    'Number(document.body.dataset.polls) >= 2', 'its model and two polls');
	await js(`(() => {
		document.getElementById('prompt').value = ${JSON.stringify(prompt)};
		document.getElementById('max-tokens').value = ${Number(maxTokens)};
		document.getElementById('temperature').value = 0;
		document.getElementById('send').click();
	})()`);
	await until('document.getElementById("answer").dataset.state !== "streaming" && ' +
		    'document.getElementById("answer").dataset.state !== "idle"', 'the answer end');
	// two more polls: the interval that holds the completion is drawn
	await js('window.__polls = Number(document.body.dataset.polls)');
	await until('Number(document.body.dataset.polls) >= window.__polls + 2', 'later polls');
	const seen = await js(`(() => {
		const $ = (id) => document.getElementById(id);
		return {
			model: $('model').textContent,
			answer: $('answer').textContent,
			state: $('answer').dataset.state,
			tokens_answer: Number($('answer').dataset.tokens),
			stats: $('answer-stats').textContent,
			inflight: $('inflight').textContent,
			tokens: $('tokens').textContent,
			tps: $('tps').textContent,
			tps_peak: Number($('tps').dataset.peak),
			modelled: $('modelled').textContent,
			modelled_peak: Number($('modelled').dataset.peak),
			slots: Number($('slots').dataset.slots),
			slot_cells: $('slots').children.length,
			stages: [...document.querySelectorAll('.stage')].map((c) => ({
				stage: Number(c.dataset.stage), layers: Number(c.dataset.layers),
				peak: Number(c.dataset.peak) })),
			device: document.querySelector('.device .name') ?
				document.querySelector('.device .name').textContent : '',
		};
	})()`);
	const png = await s('Page.captureScreenshot', { format: 'png' });
	fs.writeFileSync(shot, Buffer.from(png.data, 'base64'));
	// the same completion, not streamed, from here
	const r = await fetch(base + '/v1/completions', { method: 'POST',
		headers: { 'Content-Type': 'application/json' },
		body: JSON.stringify({ model: seen.model.replace(/^model /, ''), prompt,
				       max_tokens: Number(maxTokens), temperature: 0 }) });
	seen.reference = (await r.json()).choices[0].text;
	process.stdout.write(JSON.stringify(seen) + '\n');
}

const timer = setTimeout(() => { console.error('timed out'); chrome.kill('SIGKILL'); process.exit(2); },
			 60000);
main().then(() => 0, (e) => { console.error(String(e.stack || e)); console.error(stderr.slice(-2000)); return 1; })
	.then(async (rc) => {
		clearTimeout(timer);
		const exited = new Promise((r) => chrome.once('exit', r));
		send('Browser.close').catch(() => {});
		await Promise.race([exited, sleep(3000)]);
		chrome.kill('SIGKILL');
		await Promise.race([exited, sleep(3000)]);
		fs.rmSync(profile, { recursive: true, force: true, maxRetries: 5 });
		process.exit(rc);
	});
