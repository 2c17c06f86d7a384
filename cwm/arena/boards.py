"""Boards drawn as SVG, in the browser, for the pages of ``cwm view`` and ``cwm serve`` (one renderer, used by
both): a script that turns a game's rendering of a state (or a seat's observation) into a drawing.

``SCRIPT`` defines ``cwmBoard(game, text)``: an ``<svg>`` element for the registered board and card games
(tic-tac-toe, connect four, generalized tic-tac-toe, Quadranto, backgammon, Leduc poker, gin rummy, hand of
war, Hanabi: tokens, fireworks, every hand with a seat's own cards face down under its hints, the discards),
or ``null`` when the game has no drawing or the text is not in the shape its drawing reads; the page
then shows the text itself. The text is untrusted (a results folder may come from anyone): the drawing is
built with DOM calls only, every string from the text set through ``textContent``, so nothing in it can
become markup or script. ``STYLE`` holds the drawing's CSS (the element right after a ``.drawn`` holder that
holds a drawing, the text, is hidden). Cards are drawn as cards (rank and suit), with
a card that is not known to the viewer (Leduc's ``-10000``) face down.
"""

from __future__ import annotations

DRAWN = ("tic_tac_toe", "connect_four", "gen_tic_tac_toe", "quadranto", "backgammon", "leduc_poker", "gin_rummy",
         "hand_of_war", "hanabi")

STYLE = """
.drawn svg{max-width:100%;height:auto;display:block}.drawn{max-width:100%}.drawn:not(:empty)+*{display:none}
"""

SCRIPT = r"""
const SVGNS = 'http://www.w3.org/2000/svg';
function svgEl(tag, attrs) {
  const e = document.createElementNS(SVGNS, tag);
  Object.entries(attrs || {}).forEach(([k, v]) => e.setAttribute(k, String(v)));
  return e;
}
function svgText(parent, x, y, text, attrs) {
  const e = svgEl('text', Object.assign({x: x, y: y, 'font-family': 'system-ui,sans-serif', 'font-size': 14}, attrs));
  e.textContent = String(text); parent.appendChild(e); return e;
}
function svgRoot(w, h) {
  const s = svgEl('svg', {viewBox: '0 0 ' + w + ' ' + h, width: w, height: h, role: 'img'});
  s.appendChild(svgEl('rect', {x: 0, y: 0, width: w, height: h, fill: '#f6f6f0'}));
  return s;
}
const SUITS = {s: '\u2660', c: '\u2663', d: '\u2666', h: '\u2665'};
// One card at (x, y): `rank` and suit letter (s c d h), or face down when rank is null.
function drawCard(parent, x, y, rank, suit) {
  const g = svgEl('g', {class: 'card'}); parent.appendChild(g);
  g.appendChild(svgEl('rect', {x: x, y: y, width: 34, height: 48, rx: 4, fill: rank === null ? '#4a6fa5' : '#fff',
                                stroke: '#333'}));
  if (rank === null) { svgText(g, x + 17, y + 30, '?', {'text-anchor': 'middle', fill: '#fff'}); return g; }
  const red = suit === 'h' || suit === 'd', colour = red ? '#c0202a' : '#111';
  svgText(g, x + 17, y + 20, rank, {'text-anchor': 'middle', fill: colour, 'font-weight': 'bold'});
  svgText(g, x + 17, y + 40, SUITS[suit] || suit, {'text-anchor': 'middle', fill: colour, 'font-size': 16});
  return g;
}
// Cards written as rank+suit ("Ts", "QD", "10h"): returns [rank, suit letter] or null.
function cardOf(code) {
  const m = /^(10|[A2-9TJQK])([SCDHscdh])$/.exec(String(code));
  return m ? [m[1] === 'T' ? '10' : m[1], m[2].toLowerCase()] : null;
}
function drawRow(parent, x, y, label, cards) {
  svgText(parent, x, y + 28, label, {'font-size': 13});
  cards.forEach((c, i) => { const k = c === null ? null : cardOf(c);
    drawCard(parent, x + 110 + i * 38, y, k ? k[0] : null, k ? k[1] : null); });
}
function drawLines(parent, x, y, lines) {
  lines.forEach((l, i) => svgText(parent, x, y + i * 18, l, {'font-size': 13}));
}
// x/o grids: tic-tac-toe, generalized tic-tac-toe, connect four.
function drawGrid(text, discs) {
  const rows = text.replace(/\n+$/, '').split('\n');
  if (!rows.length || rows.some(r => r.length !== rows[0].length || !/^[xo.]+$/.test(r))) return null;
  const c = 44, s = svgRoot(rows[0].length * c + 8, rows.length * c + 8);
  rows.forEach((row, i) => [...row].forEach((ch, j) => {
    const x = 4 + j * c, y = 4 + i * c, cx = x + c / 2, cy = y + c / 2;
    s.appendChild(svgEl('rect', {x: x, y: y, width: c, height: c, fill: discs ? '#2b57a8' : '#fff', stroke: '#555'}));
    if (discs) s.appendChild(svgEl('circle', {cx: cx, cy: cy, r: 17, class: 'piece-' + ch,
      fill: ch === 'x' ? '#d33' : ch === 'o' ? '#fc3' : '#eef'}));
    else if (ch === 'x') { s.appendChild(svgEl('path', {d: `M${x + 10} ${y + 10}L${x + c - 10} ${y + c - 10}M${x + c - 10} ${y + 10}L${x + 10} ${y + c - 10}`,
      stroke: '#c22', 'stroke-width': 5, class: 'piece-x'})); }
    else if (ch === 'o') s.appendChild(svgEl('circle', {cx: cx, cy: cy, r: 14, fill: 'none', stroke: '#23c',
      'stroke-width': 5, class: 'piece-o'}));
  }));
  return s;
}
const LEDUC_RANKS = ['J', 'Q', 'K'], LEDUC_SUITS = ['s', 'h'];
function leducCard(n) { n = +n; return n >= 0 && n < 6 ? [LEDUC_RANKS[Math.floor(n / 2)], LEDUC_SUITS[n % 2]] : null; }
// Leduc poker: the state ("Cards (public player_0 player_1): -10000 1 5") or a seat's observation
// ("[Private: 1]...[Public: 3]").
function drawLeduc(text) {
  const full = /Cards \(public player_0 player_1\): (-?\d+) (-?\d+) (-?\d+)/.exec(text);
  const priv = /\[Private: (-?\d+)\]/.exec(text);
  if (!full && !priv) return null;
  const rows = full ? [['public', full[1]], ['player 0', full[2]], ['player 1', full[3]]]
    : [['your card', priv[1]], ['public', (/\[Public: (-?\d+)\]/.exec(text) || [0, -1])[1]]];
  const info = text.split(/\n|\]\[|\[|\]/).map(l => l.trim()).filter(l => l && !/^Cards|^Private|^Public/.test(l));
  const s = svgRoot(300, 20 + rows.length * 56 + info.length * 18);
  rows.forEach(([label, n], i) => { const k = leducCard(n);
    svgText(s, 10, 40 + i * 56, label, {'font-size': 13}); drawCard(s, 110, 12 + i * 56, k ? k[0] : null, k ? k[1] : null); });
  drawLines(s, 10, 30 + rows.length * 56, info);
  return s;
}
// Backgammon: the 12 columns of the text board, top and bottom halves, one checker per letter.
function drawBackgammon(text) {
  const lines = text.split('\n'), top = lines.indexOf('+------|------+');
  if (top < 0 || lines[top + 12] !== '+------|------+') return null;
  const board = lines.slice(top + 1, top + 12), info = lines.slice(top + 13).filter(l => l.trim());
  if (board.some(r => r.length !== 15)) return null;
  const w = 30, s = svgRoot(12 * w + 60, 360 + info.length * 18);
  s.appendChild(svgEl('rect', {x: 10, y: 10, width: 12 * w + 40, height: 330, fill: '#e8d4a8', stroke: '#6b4a1e'}));
  for (let j = 0; j < 12; j++) {
    const x = 20 + j * w + (j >= 6 ? 20 : 0), fill = j % 2 ? '#8b3a2a' : '#3a5a40';
    s.appendChild(svgEl('path', {d: `M${x} 15L${x + w} 15L${x + w / 2} 150Z`, fill: fill}));
    s.appendChild(svgEl('path', {d: `M${x} 335L${x + w} 335L${x + w / 2} 200Z`, fill: fill}));
    board.forEach((row, i) => {
      const ch = row[1 + j + (j >= 6 ? 1 : 0)];
      if (ch !== 'x' && ch !== 'o') return;
      const cy = i < 5 ? 30 + i * 28 : i > 5 ? 320 - (10 - i) * 28 : 175;
      s.appendChild(svgEl('circle', {cx: x + w / 2, cy: cy, r: 13, class: 'piece-' + ch,
        fill: ch === 'x' ? '#222' : '#f4f4f4', stroke: '#555'}));
    });
  }
  s.appendChild(svgEl('rect', {x: 20 + 6 * w, y: 10, width: 20, height: 330, fill: '#6b4a1e'}));
  drawLines(s, 10, 360, info);
  return s;
}
// Gin rummy: each player's 4x13 hand box read as cards, with the lines around them kept as text.
function drawGin(text) {
  const lines = text.split('\n'), hands = [], info = [];
  for (let i = 0; i < lines.length; i++) {
    const m = /^Player(\d): (.*)$|^Player(\d):$/.exec(lines[i]);
    if (m && /^\+-+\+$/.test(lines[i + 1] || '')) {
      const cards = [];
      for (let r = i + 2; r < i + 6 && r < lines.length; r++)
        (lines[r].match(/[A2-9TJQK][scdh]/g) || []).forEach(c => cards.push(c));
      hands.push(['player ' + (m[1] || m[3]) + (m[2] ? ' ' + m[2] : ''), cards]); i += 6;
    } else if (lines[i].trim()) info.push(lines[i].trim());
  }
  if (!hands.length) return null;
  const discard = info.find(l => l.startsWith('Discard pile:')), pile = discard ? discard.match(/[A2-9TJQK][scdh]/g) || [] : [];
  const widest = Math.max(11, pile.length, ...hands.map(h => h[1].length));
  const s = svgRoot(130 + widest * 38, 20 + (hands.length * 2 + (pile.length ? 2 : 0)) * 38 + info.length * 18);
  let y = 10;
  hands.forEach(([label, cards]) => { svgText(s, 10, y + 14, label, {'font-size': 13});
    cards.forEach((c, i) => { const k = cardOf(c); drawCard(s, 10 + i * 38, y + 22, k[0], k[1]); }); y += 76; });
  if (pile.length) { drawRow(s, 10, y, 'discard pile', pile); y += 76; }
  drawLines(s, 10, y + 14, info.filter(l => l !== discard));
  return s;
}
function parseJson(text) { try { return JSON.parse(text); } catch (e) { return null; } }
// Hand of war: every pile and hand of the JSON state (or observation) as a row of cards.
function drawWar(text) {
  const st = parseJson(text);
  if (!st || typeof st !== 'object' || Array.isArray(st)) return null;
  const rows = [], info = [];
  Object.entries(st).forEach(([k, v]) => {
    if (Array.isArray(v) && v.length && v.every(Array.isArray))
      v.forEach((p, i) => rows.push([k.replace(/_/g, ' ') + ' ' + i, p.map(c => cardOf(c) ? c : null)]));
    else if (Array.isArray(v) && v.every(c => typeof c === 'string')) rows.push([k.replace(/_/g, ' '), v.map(c => cardOf(c) ? c : null)]);
    else info.push(k + ': ' + JSON.stringify(v));
  });
  if (!rows.length) return null;
  const widest = Math.max(4, ...rows.map(r => r[1].length));
  const s = svgRoot(130 + widest * 38, 20 + rows.length * 56 + info.length * 18);
  rows.forEach(([label, cards], i) => drawRow(s, 10, 10 + i * 56, label, cards));
  drawLines(s, 10, 30 + rows.length * 56, info);
  return s;
}
// Quadranto: the 4x4 board with each square the JSON says is known: the state's `squares` ([row, col] per
// player), or a seat's observation (`my_square`, and the quadrant its opponent is in, shaded).
function drawQuadranto(text) {
  const st = parseJson(text);
  if (!st || (!Array.isArray(st.squares) && !Array.isArray(st.my_square))) return null;
  const c = 50, s = svgRoot(4 * c + 10, 4 * c + 80), quads = ['top-left', 'top-right', 'bottom-left', 'bottom-right'];
  const shaded = quads.indexOf(st.opponent_quadrant);
  for (let i = 0; i < 4; i++) for (let j = 0; j < 4; j++) {
    const q = (i < 2 ? 0 : 2) + (j < 2 ? 0 : 1);
    s.appendChild(svgEl('rect', {x: 5 + j * c, y: 5 + i * c, width: c, height: c, stroke: '#555',
      fill: q === shaded ? '#f3d9a0' : (i < 2) === (j < 2) ? '#fff' : '#e4e8f0'}));
  }
  const pieces = Array.isArray(st.squares) ? st.squares.map((sq, p) => [sq, p, String(p)]) : [[st.my_square, 0, 'you']];
  pieces.forEach(([sq, p, label]) => { if (!Array.isArray(sq) || sq.length !== 2) return;
    const [r, q] = sq.map(Number); if (!(r >= 0 && r < 4 && q >= 0 && q < 4)) return;
    s.appendChild(svgEl('circle', {cx: 5 + q * c + c / 2, cy: 5 + r * c + c / 2, r: 18, class: 'piece-' + p,
      fill: p ? '#fc3' : '#d33'}));
    svgText(s, 5 + q * c + c / 2, 5 + r * c + c / 2 + 5, label, {'text-anchor': 'middle', 'font-size': 12}); });
  drawLines(s, 5, 4 * c + 25, Object.entries(st).filter(([k]) => k !== 'squares' && k !== 'my_square')
    .map(([k, v]) => k + ': ' + JSON.stringify(v)));
  return s;
}
const HANABI_FILL = {R: '#d9343a', Y: '#e8c21c', G: '#2f9a4a', W: '#f4f4f4', B: '#2c6fd1'};
// One Hanabi card at (x, y): colour letter and rank, or face down (`null`) with what hints told (`hint`).
function drawHanabiCard(parent, x, y, code, hint) {
  const g = svgEl('g', {class: 'card'}); parent.appendChild(g);
  const known = code !== null && HANABI_FILL[code[0]];
  g.appendChild(svgEl('rect', {x: x, y: y, width: 34, height: 48, rx: 4, stroke: '#333',
                                fill: known ? HANABI_FILL[code[0]] : code === null ? '#555b66' : '#fff'}));
  const ink = known && code[0] !== 'W' && code[0] !== 'Y' ? '#fff' : '#111';
  svgText(g, x + 17, y + 31, code === null ? '?' : code.slice(1), {'text-anchor': 'middle', 'font-weight': 'bold',
    fill: code === null ? '#fff' : ink, 'font-size': 18});
  if (hint) svgText(g, x + 17, y + 62, hint, {'text-anchor': 'middle', 'font-size': 11});
  return g;
}
// Hanabi (the state or a seat's observation): tokens, fireworks, every hand (the viewer's own face down,
// with its hints), the deck size and the discard pile.
function drawHanabi(text) {
  const lines = text.split('\n'), num = k => { const l = lines.find(x => x.startsWith(k));
    return l ? +l.slice(k.length) : NaN; };
  const lives = num('Life tokens: '), infos = num('Info tokens: '), deck = num('Deck size: ');
  const fw = (lines.find(l => l.startsWith('Fireworks: ')) || '').slice(11).trim().split(/\s+/);
  const start = lines.indexOf('Hands:'), end = lines.findIndex(l => l.startsWith('Deck size: '));
  if ([lives, infos, deck].some(isNaN) || fw.length !== 5 || start < 0 || end < start) return null;
  const hands = [[]]; let acting = -1;
  for (const l of lines.slice(start + 1, end)) {
    if (l === '-----') { hands.push([]); continue; }
    if (l === 'Cur player') { acting = hands.length - 1; continue; }
    const m = /^(XX|[RYGWB][1-5]) \|\| (\S+)$/.exec(l);
    if (!m) return null;
    hands[hands.length - 1].push([m[1] === 'XX' ? null : m[1], m[2]]);
  }
  const pile = ((lines.find(l => l.startsWith('Discards:')) || '').slice(9).trim().match(/[RYGWB][1-5]/g)) || [];
  const own = hands[0].length > 0 && hands[0].every(c => c[0] === null);  // a seat's observation: its own unseen
  const widest = Math.max(5, pile.length, ...hands.map(h => h.length));
  const s = svgRoot(150 + widest * 38, 150 + hands.length * 80 + (pile.length ? 60 : 0));
  svgText(s, 10, 22, 'hints', {'font-size': 13});
  for (let i = 0; i < 8; i++) s.appendChild(svgEl('circle', {cx: 70 + i * 18, cy: 17, r: 7, class: 'token',
    fill: i < infos ? '#2c6fd1' : 'none', stroke: '#2c6fd1'}));
  svgText(s, 230, 22, 'lives', {'font-size': 13});
  for (let i = 0; i < 3; i++) s.appendChild(svgEl('circle', {cx: 280 + i * 18, cy: 17, r: 7, class: 'token',
    fill: i < lives ? '#d9343a' : 'none', stroke: '#d9343a'}));
  svgText(s, 10, 62, 'fireworks', {'font-size': 13});
  fw.forEach((f, i) => drawHanabiCard(s, 110 + i * 38, 36, +f.slice(1) > 0 ? f : f[0] + '-', ''));
  hands.forEach((hand, k) => { const y = 100 + k * 80;
    const who = own ? (k === 0 ? 'your hand' : 'seat +' + k) : 'player ' + k;
    svgText(s, 10, y + 28, (k === acting ? '\u25b6 ' : '') + who, {'font-size': 13});
    hand.forEach(([code, hint], i) => { const told = hint.split('|')[0];  // 'XX': nothing told yet
      drawHanabiCard(s, 110 + i * 38, y, code, told === 'XX' ? '' : told); }); });
  let y = 100 + hands.length * 80;
  svgText(s, 10, y + 14, 'deck: ' + deck + ' cards', {'font-size': 13});
  if (pile.length) { svgText(s, 10, y + 52, 'discards', {'font-size': 13});
    pile.forEach((c, i) => drawHanabiCard(s, 110 + i * 38, y + 26, c, '')); }
  return s;
}
const BOARDS = {tic_tac_toe: t => drawGrid(t, false), gen_tic_tac_toe: t => drawGrid(t, false),
  connect_four: t => drawGrid(t, true), leduc_poker: drawLeduc, backgammon: drawBackgammon, gin_rummy: drawGin,
  hand_of_war: drawWar, quadranto: drawQuadranto, hanabi: drawHanabi};
// The drawing of `text` (a state or an observation of `game`), or null (the page shows the text).
function cwmBoard(game, text) {
  const draw = BOARDS[String(game).split('(')[0]];
  if (!draw || typeof text !== 'string') return null;
  try { return draw(text); } catch (e) { return null; }
}
// Puts `text` in `pre` and its drawing (if any) in `holder`; the text stays in the page, and STYLE hides it
// while a drawing is shown (`pre` is the element right after `holder`).
function cwmShow(holder, pre, game, text) {
  pre.textContent = text == null ? '' : String(text);
  holder.textContent = '';
  const drawn = cwmBoard(game, text);
  if (drawn) holder.appendChild(drawn);
  return drawn;
}
"""
