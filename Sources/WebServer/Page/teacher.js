// The teacher's dashboard: one tile per robot in a grid sized so that the whole class fits the
// screen, kept by /teacher/ws, which pushes what changed (looked at four times a second): the
// rows that changed, the order of the tiles when it changed (the server orders them: the roster's
// robots first, then names in natural order), and `now`, the timeline of each row's `heard` and
// `sentAt`; the page shows the ages from it, moving on by its own clock between pushes. Each tile (.row) carries data-id (the hub's id),
// data-robot (the receiver's name as a message signed with the teacher key gave it; the address it
// is reached at, or the label the teacher typed, while it has proven nothing) and data-state: Protocol.md §7.9's names (driving, failsafe,
// teacher-stop, board-missing, free), "offline" (silent for 2 s while watched, or never heard),
// "not-watched" (no signed answer: no teacher key on the robot, or another key) or "asking"
// (watched for less than 2 s, no answer yet). A robot's buttons are off, with the reason as their
// title, when the server says they cannot work (r.off); a keyless robot keeps Stop. The summary's
// counts are #summary [data-count=STATE] b. A tile's menu button opens #detail: everything else
// about that robot and its other actions. The button game's scores: #scores li with data-player
// and data-points; #game has data-playing. The robots' round: #robot-standings li with data-robot
// (its robot id) and data-result (playing, won, done, out, lost); #robot-game has data-playing.
// Glyphs are inline SVG: no font needs to have them.
"use strict";
const gridEl = document.getElementById("rows");
const linkEl = document.getElementById("link");
const summaryEl = document.getElementById("summary");
const detailEl = document.getElementById("detail");
const attentionEl = document.getElementById("attention");
const tiles = new Map();
let socket = null;
let latest = [];
let selected = null;
let lastMissing, lastDropped;
// The rows as pushed (by id), the order of the tiles, and the server's timeline: `now` when the
// last push came, and then (performance.now()).
const rowsById = new Map();
let order = [];
let clock = { now: 0, at: 0 };
let renderedAt = 0;

const STATE_TEXT = {
  "driving": "DRIVING", "failsafe": "FAILSAFE", "teacher-stop": "STOPPED BY TEACHER", "board-missing": "BOARD MISSING",
  "free": "FREE", "offline": "OFFLINE", "not-watched": "NOT WATCHED", "owned": "OWNED", "refused": "REFUSED", "asking": "ASKING…",
};
const SHORT_TEXT = { "teacher-stop": "STOPPED", "board-missing": "NO BOARD", "not-watched": "NOT WATCHED" };
const CAUSE_TEXT = {
  "startup": "ready", "silence": "silence", "board-link": "board link", "released": "driver left",
  "teacher-release": "released by teacher",
};
// The summary, in this order.
const COUNTS = [["driving", "driving"], ["free", "free"], ["teacher-stop", "stopped by teacher"], ["failsafe", "failsafe"],
                ["board-missing", "board missing"], ["offline", "offline"], ["not-watched", "not watched"], ["asking", "not answered yet"]];
// Shown only when there is one.
const RARE = new Set(["board-missing", "asking"]);

const SVG = "http://www.w3.org/2000/svg";
const ICONS = {
  stop: [["rect", { x: 6, y: 6, width: 12, height: 12, rx: 1.5 }]],
  menu: [["circle", { cx: 5, cy: 12, r: 2 }], ["circle", { cx: 12, cy: 12, r: 2 }], ["circle", { cx: 19, cy: 12, r: 2 }]],
  close: [["path", { d: "M6 6l12 12M18 6L6 18", fill: "none", stroke: "currentColor", "stroke-width": 2.5, "stroke-linecap": "round" }]],
  lock: [["path", { d: "M8 11V8a4 4 0 0 1 8 0v3", fill: "none", stroke: "currentColor", "stroke-width": 2.2 }],
         ["rect", { x: 5, y: 11, width: 14, height: 10, rx: 2 }]],
  warn: [["path", { d: "M12 3L1.5 21h21z" }], ["path", { d: "M12 10v5M12 17.5v.5", stroke: "#000", "stroke-width": 2.2, "stroke-linecap": "round" }]],
  person: [["circle", { cx: 12, cy: 8, r: 4 }], ["path", { d: "M4 21c0-4.4 3.6-7 8-7s8 2.6 8 7z" }]],
};

function icon(name, cls) {
  const s = document.createElementNS(SVG, "svg");
  s.setAttribute("viewBox", "0 0 24 24");
  s.setAttribute("class", "icon " + (cls || name));
  s.setAttribute("aria-hidden", "true");
  s.setAttribute("fill", "currentColor");
  for (const [tag, attrs] of ICONS[name]) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
    s.appendChild(e);
  }
  return s;
}

// Link quality as 1–4 bars, like a radio's: from the driver's round trip and loss.
function bars() {
  const s = document.createElementNS(SVG, "svg");
  s.setAttribute("viewBox", "0 0 20 16");
  s.setAttribute("class", "icon bars");
  s.setAttribute("aria-hidden", "true");
  for (let i = 0; i < 4; i++) {
    const r = document.createElementNS(SVG, "rect");
    r.setAttribute("x", 1 + i * 5); r.setAttribute("y", 12 - i * 4); r.setAttribute("width", 3.5); r.setAttribute("height", 4 + i * 4);
    r.setAttribute("rx", 0.8);
    s.appendChild(r);
  }
  return s;
}

function quality(r) {
  if (r.rttMean === undefined) return 0;
  const loss = r.loss || 0;
  if (r.rttMean < 20 && loss < 1) return 4;
  if (r.rttMean < 50 && loss < 5) return 3;
  if (r.rttMean < 100 && loss < 15) return 2;
  return 1;
}

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function set(e, text) { if (e.textContent !== text) e.textContent = text; }
// A line that may end in an ellipsis (the games' info): its whole text is its tooltip.
function setLine(e, text) { set(e, text); if (e.title !== text) e.title = text; }

function button(action, id, label, cls, glyph) {
  const b = el("button", cls || "");
  if (glyph) b.appendChild(icon(glyph));
  b.appendChild(el("span", "label", label));
  b.dataset.action = action;
  b.dataset.robotId = id;
  return b;
}

function makeTile(id) {
  const t = el("div", "row");
  t.dataset.id = id;
  const p = {};
  const top = el("div", "top");
  p.name = el("strong", "name");
  p.dismiss = button("dismiss", id, "Dismiss", "dismiss", "close");
  p.dismiss.title = "Dismiss: forget this robot until it answers again";
  p.menu = el("button", "menu");
  p.menu.appendChild(icon("menu"));
  p.menu.dataset.menu = id;
  p.menu.title = "More about this robot, and its other actions";
  p.menu.setAttribute("aria-label", "More");
  top.append(p.name, p.dismiss, p.menu);
  const state = el("div", "state");
  p.badge = el("span", "badge");
  p.cause = el("span", "cause");
  state.append(p.badge, p.cause);
  const driver = el("div", "driver");
  p.driverName = el("strong");
  p.sub = el("span", "sub");
  p.lock = icon("lock");
  p.lockName = el("span");
  p.roster = el("span", "roster");
  p.sub.append(p.lock, p.lockName, p.roster);
  driver.append(p.driverName, p.sub);
  p.sensors = el("div", "sensors");
  p.sensors.hidden = true;
  const bottom = el("div", "bottom");
  p.link = el("span", "link");
  p.bars = bars();
  p.linkText = el("span");
  p.link.append(p.bars, p.linkText);
  p.stop = button("stop", id, "Stop", "stop", "stop");
  bottom.append(p.link, p.stop);
  p.note = el("div", "note");
  t.append(top, state, driver, p.sensors, bottom, p.note);
  const tile = { el: t, p, data: null };
  tiles.set(id, tile);
  return tile;
}

function uptime(s) {
  if (s === undefined) return "";
  if (s < 60) return s + " s";
  if (s < 3600) return Math.floor(s / 60) + " min";
  return Math.floor(s / 3600) + " h " + Math.floor((s % 3600) / 60) + " min";
}

function seconds(ms) { return ms < 1000 ? "just now" : (ms / 1000).toFixed(ms < 10000 ? 1 : 0) + " s ago"; }

// What a row is: the state the tile shows, and the words for it.
function view(r) {
  // Only a signed name names a row; an unproven robot is its address, else the typed label.
  const name = r.name || r.address || r.label;
  const heardOnce = r.state !== undefined || r.keyless || (r.unverified && r.age !== undefined);
  let state;
  if (r.offline) state = "offline";
  else if (r.keyless || (r.state === undefined && (r.refusal || r.unverified))) state = "not-watched";
  else state = r.state || "asking";
  let cause = "";
  let note = "";
  if (state === "offline") {
    if (r.age === undefined) cause = "no answer yet";
    else cause = "silent " + (r.age / 1000).toFixed(r.age < 10000 ? 1 : 0) + " s";
    if (r.gone) cause += " · no longer announced";
    if (heardOnce && r.state && r.state !== "free" && r.state !== "teacher-stop") {
      note = `Was ${STATE_TEXT[r.state] || r.state}${r.driver ? " (" + r.driver + ")" : ""}: it may still be moving. Stop it by hand, or dismiss once it is safe.`;
    } else if (heardOnce) {
      note = "Not answering. Dismiss it once you know where it is.";
    }
  } else if (state === "not-watched") {
    cause = r.keyless ? "no teacher key" : r.unverified ? "not proven" : "";
    note = [r.refusal, r.unverified, r.off].filter(Boolean).join(" · ");
  } else if (r.identifying) {
    cause = "identifying…";
  } else if (state === "failsafe") {
    cause = CAUSE_TEXT[r.cause] || r.cause || "";
  } else if (state === "board-missing") {
    cause = r.text || "";
  }
  if (!note && r.stop && r.stop.startsWith("refused")) note = "Stop " + r.stop;
  if (!note && r.off) note = r.off;
  const tone = state === "driving" ? "good" : state === "free" ? "idle" : state === "teacher-stop" ? "stopped"
    : state === "failsafe" ? "warn" : state === "not-watched" || state === "asking" ? "none" : "bad";
  return { name, state, cause, note, tone, lost: state === "offline" && heardOnce };
}

// A keyless robot: all the teacher can know is what was sent and whether it answered.
function keylessText(r) {
  if (!r.sent) return "Stop only";
  const answered = r.stop ? "answered " + r.stop.replace(" (unsigned)", "") : "no answer";
  return `${r.sent} sent ${seconds(r.sentAge)} · ${answered}`;
}

// The robot's senses in one short line: switch (● pressed, ○ not), sensors 1–4, °C, %RH.
function sensorsText(s) {
  return `${s.switch ? "●" : "○"} ${[s.sensor1, s.sensor2, s.sensor3, s.sensor4].join(" ")} · ${s.temperature} °C ${s.humidity} %`;
}

function renderTile(tile, r) {
  const p = tile.p;
  const v = view(r);
  tile.data = r;
  tile.view = v;
  const e = tile.el;
  if (e.dataset.robot !== v.name) e.dataset.robot = v.name;
  if (e.dataset.state !== v.state) e.dataset.state = v.state;
  if (e.dataset.tone !== v.tone) e.dataset.tone = v.tone;
  e.classList.toggle("lost", v.lost);
  e.classList.toggle("identifying", !!r.identifying);
  e.classList.toggle("keyless", !!r.keyless);
  set(p.name, v.name);
  p.name.title = r.robotId ? `${v.name} · id ${r.robotId}` : r.label;
  set(p.badge, SHORT_TEXT[v.state] && gridEl.dataset.size === "small" ? SHORT_TEXT[v.state] : STATE_TEXT[v.state] || v.state.toUpperCase());
  p.badge.title = STATE_TEXT[v.state] || v.state;
  set(p.cause, v.cause);
  if (r.keyless) {
    set(p.driverName, "driver unknown");
    p.driverName.className = "free";
  } else {
    set(p.driverName, r.driver ? r.driver : r.state === undefined ? "—" : "FREE");
    p.driverName.className = r.driver ? "" : "free";
  }
  p.lock.classList.toggle("shown", !!r.locked);
  set(p.lockName, r.locked || "");
  // The roster note only when someone drives who is not on this robot's roster line.
  const off = r.students && r.driver && !r.students.some((s) => s.toLowerCase() === r.driver.toLowerCase());
  set(p.roster, off ? "roster: " + r.students.join(", ") : "");
  p.sub.hidden = !r.locked && !off;
  if (r.keyless) {
    set(p.linkText, keylessText(r));
    p.bars.dataset.q = "0";
  } else {
    const q = v.state === "offline" ? 0 : quality(r);
    p.bars.dataset.q = String(q);
    set(p.linkText, v.state !== "offline" && r.rttMean !== undefined ? r.rttMean + " ms" + (r.loss ? " · " + r.loss + " %" : "") : "no link");
    p.link.title = r.rttMean !== undefined ? `round trip ${r.rttMean} / ${r.rttMax} ms (mean / max), loss ${r.loss ?? "?"} %, ${r.sps ?? 0} states/s` : "";
  }
  set(p.sensors, r.sensors ? sensorsText(r.sensors) : "");
  p.sensors.hidden = !r.sensors;
  p.sensors.title = r.sensors ? `switch ${r.sensors.switch ? "pressed" : "not pressed"}, sensors 1–4 ${[r.sensors.sensor1, r.sensors.sensor2, r.sensors.sensor3, r.sensors.sensor4].join(", ")} (0–255), ${r.sensors.temperature} °C, ${r.sensors.humidity} %RH` : "";
  set(p.note, v.note);
  p.note.hidden = !v.note;
  // Stop works on a proven robot, and on a keyless one (a stop for the session, to its address).
  const stopOff = r.keyless ? "" : r.off || "";
  if (p.stop.disabled !== !!stopOff) p.stop.disabled = !!stopOff;
  if (p.stop.title !== stopOff) p.stop.title = stopOff;
  p.dismiss.hidden = v.state !== "offline";
}

function visible(r, v) {
  if (!attentionEl.checked) return true;
  return !(v.state === "driving" || v.state === "free") || !!r.identifying;
}

// The grid: the column count that gives the largest tiles with every visible tile on screen.
// Tiles never get smaller than MIN_W × MIN_H; past that (more than about 70 robots on a laptop)
// the page scrolls, and "Needs attention" leaves only the robots that need the teacher.
const MIN_W = 128, MIN_H = 78, MAX_W = 360, MAX_H = 150, GAP = 6;
function layout() {
  const n = [...tiles.values()].filter((t) => !t.el.hidden).length;
  if (!n) return;
  const style = getComputedStyle(gridEl);
  const W = gridEl.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  const H = window.innerHeight - gridEl.getBoundingClientRect().top - window.scrollY
    - parseFloat(style.paddingTop) - parseFloat(style.paddingBottom) - 2;
  let best = null;
  for (let cols = 1; cols <= n; cols++) {
    const rowsN = Math.ceil(n / cols);
    const w = Math.min(MAX_W, (W - GAP * (cols - 1)) / cols);
    const h = Math.min(MAX_H, (H - GAP * (rowsN - 1)) / rowsN, w * 0.75);
    if (w < MIN_W || h < MIN_H) continue;
    // The largest tiles win; of equal ones, more columns (a few robots do not stretch across).
    const score = Math.min(w / 1.9, h);
    if (!best || score >= best.score) best = { cols, w, h, score };
  }
  if (!best) {
    const cols = Math.max(1, Math.floor((W + GAP) / (MIN_W + GAP)));
    best = { cols, w: (W - GAP * (cols - 1)) / cols, h: MIN_H };
  }
  const size = best.h >= 112 ? "large" : best.h >= 92 ? "medium" : "small";
  gridEl.style.setProperty("--cols", best.cols);
  gridEl.style.setProperty("--tile-w", Math.floor(best.w) + "px");
  gridEl.style.setProperty("--tile-h", Math.floor(best.h) + "px");
  if (gridEl.dataset.size !== size) gridEl.dataset.size = size;
}

// A push: the rows that changed replace theirs; a new order drops the rows not in it.
function apply(m) {
  clock = { now: m.now, at: performance.now() };
  for (const r of m.rows) rowsById.set(r.id, r);
  if (m.order) {
    order = m.order;
    const kept = new Set(order);
    for (const id of [...rowsById.keys()]) if (!kept.has(id)) rowsById.delete(id);
  }
  if (m.missing !== undefined) lastMissing = m.missing;
  if (m.dropped !== undefined) lastDropped = m.dropped;
}

// The rows in the tiles' order, with their ages (ms) as of now on the server's timeline.
function current() {
  const now = clock.now + (performance.now() - clock.at);
  const list = [];
  for (const id of order) {
    const r = rowsById.get(id);
    if (!r) continue;
    r.age = r.heard === undefined ? undefined : Math.max(0, Math.round(now - r.heard));
    r.sentAge = r.sentAt === undefined ? undefined : Math.max(0, Math.round(now - r.sentAt));
    list.push(r);
  }
  return list;
}

function render(list, missing, dropped) {
  latest = list; lastMissing = missing; lastDropped = dropped;
  renderedAt = performance.now();
  const seen = new Set();
  const counts = {};
  for (const [k] of COUNTS) counts[k] = 0;
  let i = 0;
  let shown = 0;
  for (const r of list) {
    seen.add(r.id);
    const tile = tiles.get(r.id) || makeTile(r.id);
    renderTile(tile, r);
    counts[tile.view.state] = (counts[tile.view.state] || 0) + 1;
    const show = visible(r, tile.view);
    if (tile.el.hidden === show) tile.el.hidden = !show;
    if (show) shown++;
    // The server's order: move a tile only when it is out of place.
    if (gridEl.children[i] !== tile.el) gridEl.insertBefore(tile.el, gridEl.children[i] || null);
    i++;
  }
  for (const [id, tile] of tiles) if (!seen.has(id)) { tile.el.remove(); tiles.delete(id); }
  renderSummary(list.length, counts, missing, dropped, shown);
  layout();
  if (selected) renderDetail();
}

function renderSummary(total, counts, missing, dropped, shown) {
  if (!summaryEl.firstChild) {
    summaryEl.appendChild(el("span", "total"));
    for (const [k, label] of COUNTS) {
      const c = el("span", "count");
      c.dataset.count = k;
      c.append(el("b"), document.createTextNode(" " + label));
      summaryEl.appendChild(c);
    }
    summaryEl.appendChild(el("span", "extra"));
  }
  set(summaryEl.querySelector(".total"), `${total} robot${total === 1 ? "" : "s"}` + (shown < total ? ` (${shown} shown)` : ""));
  for (const [k] of COUNTS) {
    const c = summaryEl.querySelector(`[data-count="${k}"]`);
    set(c.querySelector("b"), String(counts[k]));
    c.classList.toggle("zero", counts[k] === 0);
    c.hidden = RARE.has(k) && counts[k] === 0;
  }
  set(summaryEl.querySelector(".extra"),
    (missing && missing.length ? `missing: ${missing.join(", ")}` : (missing ? "every student is here" : ""))
    + (dropped ? ` · forged or stale reports dropped: ${dropped}` : ""));
}

// The detail pane: every figure of one robot, and the actions that can work on it. Its buttons
// are rebuilt only when the actions change, never under the teacher's pointer at each push.
function renderDetail() {
  const tile = tiles.get(selected);
  if (!tile) { closeDetail(); return; }
  const r = tile.data, v = tile.view;
  if (detailEl.dataset.id !== r.id) {
    detailEl.textContent = "";
    detailEl.dataset.id = r.id;
    const head = el("div", "head");
    const close = el("button", "close");
    close.appendChild(icon("close"));
    close.dataset.close = "1";
    close.setAttribute("aria-label", "Close");
    head.append(el("h2"), el("span", "badge"), close);
    detailEl.append(head, el("dl"), el("p", "note"), el("div", "actions"));
  }
  detailEl.dataset.name = v.name;
  detailEl.dataset.tone = v.tone;
  set(detailEl.querySelector("h2"), v.name);
  set(detailEl.querySelector(".head .badge"), STATE_TEXT[v.state] || v.state);
  const dl = detailEl.querySelector("dl");
  const rowsOut = [];
  const add = (k, val) => { if (val) rowsOut.push([k, val]); };
  add("state", [STATE_TEXT[v.state], v.cause].filter(Boolean).join(" · "));
  add("robot id", r.robotId ? r.robotId : "");
  add("instance", r.label !== v.name ? r.label : "");
  add("address", r.address && r.address !== v.name ? r.address : "");
  add("driver", r.keyless ? "unknown (no teacher key)" : r.driver || (r.state ? "nobody" : ""));
  add("locked to", r.locked || "");
  add("roster", r.students ? r.students.join(", ") : "");
  if (r.rttMean !== undefined) add("link", `${r.rttMean} / ${r.rttMax} ms round trip (mean / max)`);
  add("traffic", [r.sps !== undefined ? r.sps + " states/s" : "", r.loss !== undefined ? "loss " + r.loss + " %" : ""].filter(Boolean).join(" · "));
  add("failsafes", r.failsafes ? String(r.failsafes) : "");
  add("sensors", r.sensors ? sensorsText(r.sensors) : "");
  add("board", [r.board, r.transport].filter(Boolean).join(" · "));
  add("receiver", r.version ? "v" + r.version + " · up " + uptime(r.uptime) : "");
  add("heard", r.age === undefined ? "never" : seconds(r.age));
  if (r.gone) add("DNS-SD", "no longer announced (kept until it is back or dismissed)");
  if (r.sent) add("last sent", `${r.sent} ${seconds(r.sentAge)}` + (r.stop ? ` · answer: ${r.stop}` : " · no answer"));
  else if (r.stop) add("last stop", r.stop);
  dl.textContent = "";
  for (const [k, val] of rowsOut) dl.append(el("dt", "", k), el("dd", "", val));
  const note = detailEl.querySelector(".note");
  set(note, v.note);
  note.hidden = !v.note;
  const actions = detailEl.querySelector(".actions");
  const key = [r.keyless, r.locked, v.state === "offline", r.driver, r.off].join("|");
  if (actions.dataset.key !== key) {
    actions.dataset.key = key;
    actions.textContent = "";
    const off = (b, why) => { if (why) { b.disabled = true; b.title = why; } return b; };
    actions.appendChild(off(button("stop", r.id, "Stop", "stop", "stop"), r.keyless ? "" : r.off));
    if (!r.keyless) {
      actions.appendChild(off(button("release", r.id, "Release"), r.off));
      actions.appendChild(off(button("identify", r.id, "Identify"), r.off));
      actions.appendChild(off(button("kick", r.id, "Kick"), r.off));
      const lock = off(button(r.locked ? "unlock" : "lock", r.id, r.locked ? "Unlock" : "Lock", "", "lock"), r.off);
      lock.dataset.driver = r.driver || "";
      actions.appendChild(lock);
    } else {
      actions.appendChild(el("p", "hint", "Release, Identify, Kick and Lock need the teacher key on the robot."));
    }
    if (v.state === "offline") actions.appendChild(button("dismiss", r.id, "Dismiss", "", "close"));
  }
  detailEl.hidden = false;
}

function openDetail(id) { selected = id; renderDetail(); }
function closeDetail() { selected = null; detailEl.hidden = true; delete detailEl.dataset.id; }

function renderGame(g) {
  if (!g) return;
  const box = document.getElementById("game");
  box.dataset.playing = g.playing ? "true" : "false";
  document.getElementById("game-start").hidden = g.playing;
  document.getElementById("game-end").hidden = !g.playing;
  const host = location.hostname;
  setLine(document.getElementById("game-info"), g.problem ? g.problem
    : g.port === undefined ? "Start a round: every controller that sends to the game's port is a player; each press of A scores."
    : (g.playing ? `Round ${g.round} on: ` : `Round ${g.round} over. `)
      + `players send to ${host}:${g.port} (control --peer ${host}:${g.port} --name NAME); each press of A scores.`);
  const list = document.getElementById("scores");
  const text = g.scores.map((s) => `${s.rank}. ${s.name}${s.points}`).join("\n");
  if (list.dataset.text === text) return;
  list.dataset.text = text;
  list.textContent = "";
  for (const s of g.scores) {
    const li = el("li", "", `${s.rank}. ${s.name}`);
    li.dataset.player = s.name;
    li.dataset.points = s.points;
    li.appendChild(el("b", "", String(s.points)));
    list.appendChild(li);
  }
}

// The robots' round: the rule's fields, the standings as chips (data-robot, data-result), the
// notice (a refused Start, robots left out).
function renderRobotGame(g) {
  if (!g) return;
  const box = document.getElementById("robot-game");
  box.dataset.playing = g.playing ? "true" : "false";
  document.getElementById("robot-game-start").hidden = g.playing;
  document.getElementById("robot-game-end").hidden = !g.playing;
  for (const id of ["rg-rule", "rg-sensor", "rg-side", "rg-threshold", "rg-seconds"]) document.getElementById(id).disabled = g.playing;
  // g.round (its number), g.task and g.standings come once a round has started.
  const state = g.round === undefined ? "Start a round the robots judge from their own signed reports: "
      + "the robots on the dashboard now play; a robot whose reports stop is out."
    : (g.playing ? `Round ${g.round}: ${g.task}.` : `Round ${g.round} over (${g.task}).`);
  setLine(document.getElementById("robot-game-info"), g.notice ? `${g.notice}. ${state}` : state);
  const list = document.getElementById("robot-standings");
  const rows = g.standings || [];
  const text = JSON.stringify(rows);
  if (list.dataset.text === text) return;
  list.dataset.text = text;
  list.textContent = "";
  for (const s of rows) {
    const what = s.result === "won" ? `won ${s.seconds} s`
      : s.result === "done" ? `done, place ${s.place} (${s.seconds} s)`
      : s.result === "out" ? "out (reports stopped)"
      : s.hold !== undefined ? `${s.result}, held ${s.hold} s` : s.result;
    const li = el("li", "", `${s.rank === undefined ? "–" : s.rank}. ${s.name}`);
    li.dataset.robot = s.robot;
    li.dataset.result = s.result;
    li.appendChild(el("b", "", what));
    list.appendChild(li);
  }
}
document.getElementById("rg-rule").addEventListener("change", (ev) => {
  document.getElementById("rg-hold").hidden = ev.target.value !== "hold";
});

document.addEventListener("click", (ev) => {
  const m = ev.target.closest("button[data-menu]");
  if (m) { if (selected === m.dataset.menu) closeDetail(); else openDetail(m.dataset.menu); return; }
  if (ev.target.closest("button[data-close]")) { closeDetail(); return; }
  const open = socket && socket.readyState === WebSocket.OPEN;
  const g = ev.target.closest("button[data-game]");
  if (g && open) { socket.send(JSON.stringify({ t: "game-" + g.dataset.game })); return; }
  const rg = ev.target.closest("button[data-robot-game]");
  if (rg && open) {
    const msg = { t: "robot-game-" + rg.dataset.robotGame };
    if (msg.t === "robot-game-start") {
      msg.rule = document.getElementById("rg-rule").value;
      if (msg.rule === "hold") {
        // Numbers as typed: the server checks each field and says which one is wrong.
        msg.sensor = Number(document.getElementById("rg-sensor").value);
        msg.side = document.getElementById("rg-side").value;
        msg.threshold = Number(document.getElementById("rg-threshold").value);
        msg.seconds = Number(document.getElementById("rg-seconds").value);
      }
    }
    socket.send(JSON.stringify(msg));
    return;
  }
  const b = ev.target.closest("button[data-action]");
  if (!b) { if (selected && !ev.target.closest("#detail")) closeDetail(); return; }
  if (!open) return;
  const msg = { t: b.dataset.action, robot: b.dataset.robotId };
  if (msg.t === "lock") {
    const name = window.prompt("Lock this robot to which student (display name)?", b.dataset.driver || "");
    if (!name) return;
    msg.arg = name;
  }
  socket.send(JSON.stringify(msg));
  if (msg.t === "dismiss" && selected === msg.robot) closeDetail();
});
document.addEventListener("keydown", (ev) => { if (ev.key === "Escape") closeDetail(); });
attentionEl.addEventListener("change", () => render(current(), lastMissing, lastDropped));
// Between pushes (none comes while nothing changes) the ages move on: "silent 3.2 s", "heard".
setInterval(() => { if (order.length && performance.now() - renderedAt >= 200) render(current(), lastMissing, lastDropped); }, 250);
window.addEventListener("resize", layout);
// Whatever changes above the grid (a banner, the game's scores) changes the room for the tiles.
const above = new ResizeObserver(() => layout());
for (const id of ["plain", "link", "game", "robot-game"]) above.observe(document.getElementById(id));
above.observe(document.querySelector("header"));
if (location.protocol === "http:") document.getElementById("plain").hidden = false;

function connect() {
  socket = new WebSocket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/teacher/ws`);
  socket.onopen = () => { linkEl.hidden = true; };
  socket.onmessage = (ev) => {
    const m = JSON.parse(ev.data);
    if (m.t === "rows") {
      apply(m);
      render(current(), lastMissing, lastDropped);
      renderGame(m.game);
      renderRobotGame(m.robotGame);
      window.dashboardUpdates = (window.dashboardUpdates || 0) + 1;
    }
  };
  socket.onclose = (ev) => {
    // The session ended (logged out here or in another tab, or expired): back to the login form.
    if (ev.code === 4401) { location.href = "/teacher"; return; }
    linkEl.hidden = false;
    linkEl.textContent = "Connection to the server lost: reconnecting…";
    setTimeout(connect, 1000);
  };
}
connect();
