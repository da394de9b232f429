"""``cubebench view``: a self-contained HTML trajectory viewer of a run.

One file, no network: the episodes' steps are embedded as JSON, images as
base64 PNG data URIs.  Pick an episode (filter by key or status), step
through it with the buttons or the arrow keys, and see at each step the
image or text the model saw, its reply, the action, the tool calls and
their results, the reward and the true distance (when it was computed).
A question item shows, per question, the image and text asked, the raw
reply, the parsed answer, the gold and whether it was right, then the
item's score and data. A multi-agent game shows its seats side by side: at each seat turn, the latest
turn of every seat (what it was shown, its reply and action; the seat on turn highlighted) and the
messages delivered up to that cycle.
"""

from __future__ import annotations

import html
import json
from typing import Any, Iterable

from cubebench.agents.records import EpisodeRecord
from cubebench.engine.facelets import COLOUR_LETTERS, COLOUR_RGB, FACES

from .protocols import PROTOCOLS
from .store import UNNAMED_PROTOCOL, RunStore

DEFAULT_MAX_EPISODES = 200
"""Episodes embedded by default (a visual-tier episode with images is ~100 kB)."""

_STYLE = """
body{font-family:system-ui,sans-serif;margin:0;color:#222;display:flex;height:100vh}
#side{width:330px;border-right:1px solid #ccc;overflow:auto;padding:8px;box-sizing:border-box}
#main{flex:1;overflow:auto;padding:12px 18px}
#side input{width:100%;box-sizing:border-box;margin-bottom:6px}
.ep{font-family:monospace;font-size:12px;padding:2px 4px;cursor:pointer;border-radius:3px}
.ep:hover{background:#eef} .ep.sel{background:#cde}
.solved,.passed{color:#17803d} .failed{color:#b42318} .error{color:#b54708} .uncounted{color:#667085}
#obs img{width:320px;height:320px;image-rendering:pixelated;border:1px solid #ccc}
pre{background:#f6f6f6;padding:8px;white-space:pre-wrap;max-width:900px;font-size:12px}
table.step td{padding:2px 10px 2px 0;font-size:13px;vertical-align:top} table.step td:first-child{font-weight:600}
button{font-size:14px;margin-right:6px}
.st{color:#000;padding:0 1px;border-radius:2px;box-shadow:inset 0 0 0 1px #777}
.seats{display:flex;gap:14px;align-items:flex-start} .seat{flex:1;border:1px solid #ccc;padding:6px;border-radius:4px}
.seat.cur{border:2px solid #2563eb} .seat img{width:240px;height:240px;image-rendering:pixelated}
"""

_SCRIPT = r"""
const DATA = JSON.parse(document.getElementById('data').textContent);
const FACELETS = new RegExp(`^\\s*[${DATA.faces}]{54}\\s*$`), FACE_LETTER = new RegExp(`[${DATA.faces}]`, 'g');
let cur = 0, step = 0;
const $ = (id) => document.getElementById(id);
function esc(s){return String(s ?? '').replace(/[&<>]/g, c => ({'&':'&amp;','<':'&lt;','>':'&gt;'}[c]));}
function paint(text){  // sticker letters of text observations in their colours
  return esc(text).split('\n').map(line => {
    if (/^\s*[WRGYOB](?: +[WRGYOB])*\s*$/.test(line))
      return line.replace(/[WRGYOB]/g, c => `<span class="st" style="background:${DATA.colours[c]}">${c}</span>`);
    if (FACELETS.test(line))
      return line.replace(FACE_LETTER, c => `<span class="st" style="background:${DATA.colours[DATA.faces.indexOf(c)]}">${c}</span>`);
    return line;
  }).join('\n');
}
function list(){
  const f = $('filter').value.toLowerCase();
  $('eps').innerHTML = DATA.episodes.map((e, i) =>
    (e.key + ' ' + e.status).toLowerCase().includes(f)
      ? `<div class="ep ${e.status} ${i === cur ? 'sel' : ''}" data-i="${i}">${esc(e.key)} · ${esc(e.status)}</div>` : ''
  ).join('');
  document.querySelectorAll('.ep').forEach(el => el.onclick = () => { cur = +el.dataset.i; step = 0; show(); });
}
function showSeats(e){  // a multi-agent game: every seat's latest turn side by side, then the messages
  const t = e.multi.turns, at = t[step] || {cycle: 0}, latest = {};
  for (let i = 0; i <= step && i < e.steps.length; i++) latest[(t[i] || {}).seat] = i;
  $('pos').textContent = e.steps.length ? `seat turn ${step + 1} / ${e.steps.length} (cycle ${at.cycle})` : 'no turns';
  $('obs').innerHTML = '<div class="seats">' + e.multi.seats.map(seat => {
    const i = latest[seat], s = e.steps[i];
    if (s === undefined) return `<div class="seat"><h4>${esc(seat)}</h4><p>(no turn yet)</p></div>`;
    return `<div class="seat ${i === step ? 'cur' : ''}"><h4>${esc(seat)} · ${esc(e.multi.players[seat])} · turn ${i + 1}</h4>` +
      (s.png ? `<img alt="what ${esc(seat)} saw" src="data:image/png;base64,${s.png}">` : '') +
      `<pre>${paint(s.text)}</pre><b>action</b> <code>${esc(s.action) || '—'}</code>` +
      (s.parse_error ? `<div class="failed">malformed reply: ${esc(s.parse_error)}</div>` : '') +
      (s.error ? `<div class="error">error: ${esc(s.error)}</div>` : '') +
      `<pre>${esc(s.reply) || '(no model call: scripted seat, or no choice this turn)'}</pre></div>`;
  }).join('') + '</div>';
  const said = e.multi.messages.filter(m => m.cycle <= at.cycle).map(m => `[cycle ${m.cycle}] ${m.sender}: ${m.text}`);
  $('stepinfo').innerHTML = `<h3>messages up to cycle ${at.cycle}</h3><pre>${esc(said.join('\n')) || '(none)'}</pre>` +
    (e.multi.error ? `<h3>the game stopped</h3><pre class="error">${esc(e.multi.error)}</pre>` : '');
}
function show(){
  list();
  const e = DATA.episodes[cur];
  if (!e) { $('main').innerHTML = '<p>No episodes in this run.</p>'; return; }
  if (e.multi) { $('title').textContent = `${e.key} — ${e.status}, ${e.n_steps} seat turns, ${e.n_moves} face turns`;
    showSeats(e); return; }
  const s = e.steps[step];
  $('title').textContent = e.question ? `${e.key} — ${e.question.summary}` :
    `${e.key} — ${e.status}, ${e.n_steps} steps, ${e.n_moves} moves` +
    (e.distance_start !== null ? `, start distance ${e.distance_start}` : '');
  $('pos').textContent = e.steps.length ? `${e.question ? 'question' : 'step'} ${step + 1} / ${e.steps.length}` :
    (e.question ? 'no questions' : 'no steps');
  if (!s) { $('obs').innerHTML = ''; $('stepinfo').innerHTML = e.question && e.question.error
    ? `<h3>the test failed</h3><pre class="error">${esc(e.question.error)}</pre>` : ''; return; }
  $('obs').innerHTML = (s.png ? `<img id="obsimg" alt="observation" src="data:image/png;base64,${s.png}">` : '') +
    `<pre id="obstext">${paint(s.text)}</pre>`;
  const calls = s.calls.map(c => `${esc(c.name)}(${c.args.map(a => JSON.stringify(a)).map(esc).join(', ')}) → ${esc(c.result)}`).join('\n');
  const q = e.question, row = (k, v) => `<tr><td>${k}</td><td>${v}</td></tr>`;
  const judged = q ? row('question', esc(s.question)) + row('parsed answer', `<code>${esc(s.action) || '— (none)'}</code>`) +
      row('gold', `<code>${s.gold === null ? '— (not scored)' : esc(s.gold)}</code>`) +
      row('correct', s.correct === null ? '—' : `<span class="${s.correct ? 'solved' : 'failed'}">${s.correct}</span>`)
    : row('action', `<code>${esc(s.action) || '—'}</code>`) + row('reward', s.reward);
  const after = q ? `<h3>item score</h3><pre>${esc(JSON.stringify(q.score))}</pre>` +
      (q.error ? `<h3>the test failed</h3><pre class="error">${esc(q.error)}</pre>` : '') +
      `<h3>item (gold labels included)</h3><pre>${esc(JSON.stringify(q.item, null, 1))}</pre>`
    : `<h3>tool calls</h3><pre>${calls || '(none)'}</pre>`;
  $('stepinfo').innerHTML = `<table class="step">${judged}
    ${!q || s.distance !== null ? row('true distance after', s.distance === null ? 'not computed' : s.distance) : ''}
    <tr><td>tokens</td><td>${s.tokens}</td></tr>
    ${s.parse_error ? `<tr><td>malformed reply</td><td class="failed">${esc(s.parse_error)}</td></tr>` : ''}
    ${s.reply_cut ? `<tr><td>reply cut</td><td class="failed">${esc(s.reply_cut)}</td></tr>` : ''}
    ${s.error ? `<tr><td>error</td><td class="error">${esc(s.error)}</td></tr>` : ''}
    </table><h3>reply</h3><pre>${esc(s.reply) || (q ? '(empty reply)' : '(no model reply: scripted agent)')}</pre>${after}`;
}
function go(d){ const n = DATA.episodes[cur].steps.length; step = Math.max(0, Math.min(n - 1, step + d)); show(); }
$('prev').onclick = () => go(-1); $('next').onclick = () => go(1);
$('filter').oninput = list;
document.addEventListener('keydown', ev => { if (ev.key === 'ArrowLeft') go(-1); if (ev.key === 'ArrowRight') go(1); });
show();
"""


def sticker_colours() -> dict[str, str]:
    """CSS colours of the six stickers, by colour letter (WRGYOB) and by face index (0-5, in ``FACES`` order)."""
    css = [f"rgb({r},{g},{b})" for r, g, b in (tuple(int(v) for v in rgb) for rgb in COLOUR_RGB)]
    return {**dict(zip(COLOUR_LETTERS, css)), **{str(i): c for i, c in enumerate(css)}}


def episode_view(key: str, record: EpisodeRecord) -> dict[str, Any]:
    """What the viewer needs of one episode (no model logs: they can be large and hold request bodies);
    for a question item also its score, its data (gold labels) and each question's name, gold and judgement."""
    view: dict[str, Any] = {
        "key": key, "status": record.status, "n_steps": record.n_steps, "n_moves": record.n_moves,
        "distance_start": record.distance_start,
        "steps": [{
            "text": s.observation_text, "png": s.observation_png_b64, "reply": s.reply, "action": s.action,
            "reward": s.reward, "distance": s.distance, "error": s.error,
            "parse_error": s.parse_error, "reply_cut": s.reply_cut,
            "tokens": s.input_tokens + s.output_tokens,
            "calls": [{"name": c.name, "args": c.args, "result": c.result} for c in s.tool_calls],
        } for s in record.steps],
    }
    protocol = PROTOCOLS.get(str(record.config.get("protocol", UNNAMED_PROTOCOL)))
    if protocol is not None:  # a damaged record's unknown protocol: its steps, as any episode's
        protocol.view(record.config, view)
    return view


def select(store: RunStore, contains: str | None, max_episodes: int | None) -> Iterable[tuple[str, EpisodeRecord]]:
    """Stored episodes whose key contains ``contains``, at most ``max_episodes``."""
    count = 0
    for key, record in store.records():
        if contains and contains not in key:
            continue
        if max_episodes is not None and count >= max_episodes:
            return
        count += 1
        yield key, record


def script_json(value: Any) -> str:
    """``value`` as JSON safe inside a ``<script>`` element: every ``<``, ``>`` and ``&`` escaped, so no model
    reply (``</script>``, ``<!--<script>``) can end or re-open the element."""
    return json.dumps(value).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def viewer_html(store: RunStore, contains: str | None = None, max_episodes: int | None = DEFAULT_MAX_EPISODES) -> str:
    """The viewer page for a run."""
    episodes = [episode_view(k, r) for k, r in select(store, contains, max_episodes)]
    data = script_json({"run": str(store.path), "episodes": episodes, "colours": sticker_colours(), "faces": FACES})
    name = html.escape(store.get_meta("suite")["name"])
    agent = html.escape(store.get_meta("config")["agent"]["spec"])
    return (
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>CubeBench viewer: {name}</title>"
        f"<style>{_STYLE}</style></head><body>"
        f"<div id='side'><b>{name} · {agent}</b><br><input id='filter' placeholder='filter: key or status'>"
        f"<div id='eps'></div></div>"
        f"<div id='main'><h2 id='title'></h2><div><button id='prev'>&larr; prev</button>"
        f"<button id='next'>next &rarr;</button><span id='pos'></span></div>"
        f"<h3>what the agent saw</h3><div id='obs'></div><div id='stepinfo'></div></div>"
        f"<script type='application/json' id='data'>{data}</script><script>{_SCRIPT}</script></body></html>"
    )
