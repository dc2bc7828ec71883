// SPDX-License-Identifier: MIT
// wafer serve's page: streams a completion from /v1/completions (SSE) and
// draws the server's own /metrics, polled: sequences in flight, KV slots,
// tok/s, modelled device time against host time, per-stage occupancy.
'use strict';

const $ = (id) => document.getElementById(id);

// The server's key (wafer serve --api-key), if one is typed: every request sends it.
function auth() {
	const key = $('api-key').value.trim();
	return key ? { Authorization: 'Bearer ' + key } : {};
}
const POLL_MS = 500;
let modelId = null;
let abort = null;

// ---- the prompt ------------------------------------------------------------

async function loadModel() {
	try {
		const r = await fetch('/v1/models', { headers: auth() });
		const j = await r.json();
		if (!r.ok)
			throw new Error(j.error ? j.error.message : r.status);
		modelId = j.data && j.data[0] ? j.data[0].id : null;
		$('model').textContent = modelId ? 'model ' + modelId : 'no model';
	} catch (e) {
		$('model').textContent = 'models: ' + e.message;
	}
}

// Reads the SSE body: every "data: {...}" event's text appended as it comes.
async function streamCompletion(body, onText, onUsage) {
	abort = new AbortController();
	const r = await fetch('/v1/completions', {
		method: 'POST',
		headers: { 'Content-Type': 'application/json', ...auth() },
		body: JSON.stringify(body),
		signal: abort.signal,
	});
	if (!r.ok) {
		let msg = r.status + ' ' + r.statusText;
		try { msg = (await r.json()).error.message; } catch (e) { /* keep the status */ }
		throw new Error(msg);
	}
	const reader = r.body.getReader();
	const dec = new TextDecoder();
	let buf = '';
	for (;;) {
		const { value, done } = await reader.read();
		if (done)
			break;
		buf += dec.decode(value, { stream: true });
		let i;
		while ((i = buf.indexOf('\n\n')) >= 0) {
			const event = buf.slice(0, i);
			buf = buf.slice(i + 2);
			for (const line of event.split('\n')) {
				if (!line.startsWith('data: '))
					continue;
				const data = line.slice(6);
				if (data === '[DONE]')
					return;
				const j = JSON.parse(data);
				if (j.error)
					throw new Error(j.error.message);
				if (j.choices && j.choices[0] && j.choices[0].text)
					onText(j.choices[0].text);
				if (j.usage)
					onUsage(j.usage);
			}
		}
	}
}

async function send(ev) {
	ev.preventDefault();
	const out = $('answer');
	const t0 = performance.now();
	let first = 0, usage = null;
	out.textContent = '';
	out.dataset.state = 'streaming';
	$('answer-stats').textContent = '';
	$('send').disabled = true;
	$('stop').disabled = false;
	try {
		await streamCompletion({
			model: modelId,
			prompt: $('prompt').value,
			max_tokens: Number($('max-tokens').value) || 64,
			temperature: Number($('temperature').value) || 0,
			stream: true,
			stream_options: { include_usage: true },
		}, (text) => {
			if (!first)
				first = performance.now();
			out.textContent += text;
		}, (u) => { usage = u; });
		out.dataset.state = 'done';
		const ms = performance.now() - t0;
		$('answer-stats').textContent = (usage ? usage.completion_tokens + ' tokens, ' : '') +
			'first after ' + (first ? (first - t0).toFixed(0) : '–') + ' ms, ' +
			ms.toFixed(0) + ' ms in all';
		if (usage)
			out.dataset.tokens = usage.completion_tokens;
	} catch (e) {
		out.dataset.state = e.name === 'AbortError' ? 'stopped' : 'error';
		$('answer-stats').textContent = e.name === 'AbortError' ? 'stopped' : 'error: ' + e.message;
	}
	$('send').disabled = false;
	$('stop').disabled = true;
	abort = null;
}

// ---- the machine -----------------------------------------------------------

// Prometheus text into { 'name{labels}': value }.
function parseMetrics(text) {
	const m = {};
	for (const line of text.split('\n')) {
		if (!line || line[0] === '#')
			continue;
		const sp = line.lastIndexOf(' ');
		m[line.slice(0, sp)] = Number(line.slice(sp + 1));
	}
	return m;
}

const fmt = (v, d) => (isFinite(v) ? v.toFixed(d) : '–');
let prev = null;

// Seconds in the unit that suits them (modelled times are ns to ms).
function secs(v) {
	if (v < 1e-6)
		return (v * 1e9).toFixed(0) + ' ns';
	if (v < 1e-3)
		return (v * 1e6).toFixed(1) + ' µs';
	return (v * 1e3).toFixed(1) + ' ms';
}

// Shows @text in element @id, and the largest @v seen so far beside it.
function figure(id, v, text, peakText) {
	const el = $(id);
	el.textContent = text;
	if (!(v > (Number(el.dataset.peak) || 0)))
		return;
	el.dataset.peak = v;
	let p = $(id + '-peak');
	if (!p) {
		p = document.createElement('div');
		p.id = id + '-peak';
		p.className = 'peak-text dim';
		el.after(p);
	}
	p.textContent = 'peak ' + peakText;
}

function gain(cur, key) {
	const a = prev.m[key], b = cur.m[key];
	return a === undefined || b === undefined || b < a ? 0 : b - a;
}

function drawSlots(m) {
	const n = m['wafer_serve_slots'] || 0, used = m['wafer_serve_slots_in_use'] || 0;
	const box = $('slots');
	if (box.children.length !== n) {
		box.textContent = '';
		for (let i = 0; i < n; i++) {
			const d = document.createElement('div');
			d.className = 'slot';
			box.appendChild(d);
		}
	}
	for (let i = 0; i < n; i++)
		box.children[i].classList.toggle('busy', i < used);
	$('slots-label').textContent = used + ' of ' + n + ' in use';
	box.dataset.used = used;
	box.dataset.slots = n;
}

// Per member: a cell per stage, filled to its occupancy over the interval.
function drawStages(cur) {
	const re = /^wafer_serve_stage_busy_seconds_total\{member="(\d+)",stage="(\d+)"\}$/;
	const members = new Map();
	for (const key of Object.keys(cur.m)) {
		const x = re.exec(key);
		if (!x)
			continue;
		if (!members.has(+x[1]))
			members.set(+x[1], []);
		members.get(+x[1]).push(+x[2]);
	}
	const box = $('devices');
	if (!members.size) {
		$('metrics-note').textContent = 'No per-stage counters yet (a kernel device ' +
			'reports the server\'s own stages once a job has completed; some backends ' +
			'report none).';
		return;
	}
	$('metrics-note').textContent = '';
	const multi = Object.keys(cur.m).some((k) =>
		k.startsWith('wafer_serve_member_makespan_seconds_total'));
	for (const [k, stages] of [...members].sort((a, b) => a[0] - b[0])) {
		let dev = document.getElementById('dev-' + k);
		if (!dev) {
			dev = document.createElement('div');
			dev.className = 'device';
			dev.id = 'dev-' + k;
			dev.innerHTML = '<div class="name"></div><div class="stages"></div>';
			box.appendChild(dev);
		}
		// the member's modelled clock: its own in a pipeline, else the device's
		let span = gain(cur, 'wafer_serve_device_makespan_seconds_total');
		let name = 'device';
		if (multi) {
			const mk = Object.keys(cur.m).find((key) => key.startsWith(
				'wafer_serve_member_makespan_seconds_total{member="' + k + '"'));
			if (mk) {
				span = gain(cur, mk);
				name = 'member ' + k + ' (' + /device="([^"]*)"/.exec(mk)[1] + ')';
			}
		}
		const cells = dev.querySelector('.stages');
		stages.sort((a, b) => a - b);
		let total = 0;
		stages.forEach((s, i) => {
			const key = '{member="' + k + '",stage="' + s + '"}';
			const occ = span > 0 ? Math.min(1, gain(cur, 'wafer_serve_stage_busy_seconds_total' + key) / span) : 0;
			// absent where the backend does not say (a kernel device)
			const layers = cur.m['wafer_serve_stage_layers' + key];
			let c = cells.children[i];
			if (!c) {
				c = document.createElement('div');
				c.className = 'stage';
				c.innerHTML = '<div class="fill"></div><div class="peak"></div>' +
					'<div class="tag"></div>';
				cells.appendChild(c);
			}
			c.classList.toggle('empty', layers === 0);
			c.dataset.stage = s;
			c.dataset.layers = layers ?? '';
			c.dataset.occupancy = occ.toFixed(4);
			c.dataset.peak = Math.max(Number(c.dataset.peak) || 0, occ).toFixed(4);
			c.title = 'stage ' + s + ': ' +
				(layers === undefined ? '' : layers + ' layer(s), ') + (occ * 100).toFixed(1) +
				' % busy, peak ' + (c.dataset.peak * 100).toFixed(1) + ' %';
			c.querySelector('.peak').style.bottom = (c.dataset.peak * 100).toFixed(1) + '%';
			c.querySelector('.fill').style.height = (occ * 100).toFixed(1) + '%';
			c.querySelector('.tag').textContent = s;
			total += occ;
		});
		dev.querySelector('.name').textContent = name + ': ' + stages.length + ' stages, mean ' +
			(total / stages.length * 100).toFixed(1) + ' % busy';
	}
}

function draw(cur) {
	const m = cur.m;
	const inflight = m['wafer_serve_slots_in_use'] ?? NaN;
	figure('inflight', inflight, isFinite(inflight) ? String(inflight) : '–', String(inflight));
	$('queued').textContent = m['wafer_serve_queue_depth'] ?? '–';
	$('tokens').textContent = m['wafer_serve_completion_tokens_total'] ?? '–';
	drawSlots(m);
	if (!prev)
		return;
	const dt = (cur.t - prev.t) / 1000;
	const gen = gain(cur, 'wafer_serve_completion_tokens_total');
	const modelled = gain(cur, 'wafer_serve_device_modelled_seconds_total');
	const span = gain(cur, 'wafer_serve_device_makespan_seconds_total');
	figure('tps', gen / dt, fmt(gen / dt, 1), fmt(gen / dt, 1));
	figure('modelled', modelled / dt, secs(modelled) + ' in ' + (dt * 1e3).toFixed(0) + ' ms',
	       secs(modelled / dt) + ' per s');
	figure('mtps', span > 0 ? gen / span : 0, span > 0 ? fmt(gen / span, 0) : '–',
	       fmt(gen / span, 0));
	drawStages(cur);
}

async function poll() {
	try {
		const r = await fetch('/metrics', { cache: 'no-store', headers: auth() });
		if (!r.ok)
			throw new Error(r.status);
		const cur = { t: performance.now(), m: parseMetrics(await r.text()) };
		draw(cur);
		prev = cur;
		$('conn').textContent = 'live';
		document.body.dataset.polls = (Number(document.body.dataset.polls) || 0) + 1;
	} catch (e) {
		$('conn').textContent = 'metrics unreachable';
	}
	setTimeout(poll, POLL_MS);
}

$('form').addEventListener('submit', send);
$('api-key').addEventListener('change', loadModel);
$('stop').addEventListener('click', () => abort && abort.abort());
loadModel();
poll();
