// The teacher's dashboard: one row per robot, pushed by /teacher/ws four times a second.
// Each row carries data-robot (the receiver's name as a message signed with the teacher key gave
// it; the address it is reached at while it has proven nothing) and data-state (Protocol.md §7.9's
// state names, plus "offline" for a robot silent for 2 s or never heard). A row's buttons are off
// when the server says they cannot work (r.off, shown as the row's note). The button game's
// scores: #scores li with data-player (name) and data-points; #game has data-playing.
"use strict";
const rowsEl = document.getElementById("rows");
const linkEl = document.getElementById("link");
const summaryEl = document.getElementById("summary");
const rows = new Map();
let socket = null;

const STATE_TEXT = {
  "driving": "DRIVING", "failsafe": "FAILSAFE", "owned": "OWNED", "refused": "REFUSED",
  "teacher-stop": "STOPPED BY TEACHER", "board-missing": "BOARD MISSING", "free": "FREE", "offline": "OFFLINE",
};
const CAUSE_TEXT = {
  "startup": "ready", "silence": "silence", "board-link": "board link", "released": "driver left",
  "teacher-release": "released by teacher",
};

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function makeRow(id) {
  const r = el("div", "row");
  r.dataset.id = id;
  r.innerHTML = "";
  const parts = {};
  for (const k of ["state", "robot", "driver", "link", "board", "receiver"]) {
    parts[k] = el("div", "cell " + k);
    r.appendChild(parts[k]);
  }
  parts.stateBadge = el("span", "badge");
  parts.stateCause = el("span", "cause");
  parts.state.append(parts.stateBadge, parts.stateCause);
  parts.name = el("strong", "name");
  parts.rid = el("span", "sub");
  parts.robot.append(parts.name, parts.rid);
  parts.driverName = el("strong");
  parts.lock = el("span", "sub");
  parts.driver.append(parts.driverName, parts.lock);
  parts.rtt = el("strong");
  parts.rate = el("span", "sub");
  parts.link.append(parts.rtt, parts.rate);
  parts.boardName = el("span");
  parts.boardSub = el("span", "sub");
  parts.board.append(parts.boardName, parts.boardSub);
  parts.version = el("span");
  parts.heard = el("span", "sub");
  parts.receiver.append(parts.version, parts.heard);
  const actions = el("div", "cell actions");
  for (const [action, label, cls] of [["stop", "Stop", "stop"], ["release", "Release", ""], ["identify", "Identify", ""],
                                      ["kick", "Kick", ""], ["lock", "Lock", ""]]) {
    const b = el("button", cls, label);
    b.dataset.action = action;
    b.dataset.robotId = id;
    actions.appendChild(b);
    parts["b_" + action] = b;
  }
  r.appendChild(actions);
  parts.note = el("div", "note");
  r.appendChild(parts.note);
  rows.set(id, { el: r, parts });
  rowsEl.appendChild(r);
  return rows.get(id);
}

function uptime(s) {
  if (s === undefined) return "";
  if (s < 60) return s + " s";
  if (s < 3600) return Math.floor(s / 60) + " min";
  return Math.floor(s / 3600) + " h " + Math.floor((s % 3600) / 60) + " min";
}

function render(list, missing, dropped) {
  const seen = new Set();
  let counts = { driving: 0, waiting: 0, missing: 0 };
  for (const r of list) {
    seen.add(r.id);
    const row = rows.get(r.id) || makeRow(r.id);
    const p = row.parts;
    const silent = r.age === undefined || r.age > 2000;
    const state = r.state === undefined || silent ? "offline" : r.state;
    // Only a signed name names a row; an unproven robot is its address (r.label may be an
    // unsigned announcement).
    const shown = r.name || r.address || r.label;
    row.el.dataset.robot = shown;
    row.el.dataset.state = state;
    row.el.classList.toggle("stale", silent);
    row.el.classList.toggle("identifying", !!r.identifying);
    const tone = state === "driving" ? "good" : (state === "board-missing" || state === "offline") ? "bad" : "warn";
    row.el.dataset.tone = tone;
    if (tone === "good") counts.driving++; else if (tone === "bad") counts.missing++; else counts.waiting++;
    p.stateBadge.textContent = (r.refusal || r.unverified) && r.state === undefined ? "NOT WATCHED" : STATE_TEXT[state] || state.toUpperCase();
    p.stateCause.textContent = r.identifying ? "identifying…" : state === "failsafe" ? (CAUSE_TEXT[r.cause] || r.cause || "")
      : state === "board-missing" ? (r.text || "") : "";
    p.name.textContent = shown;
    p.rid.textContent = r.robotId ? "id " + r.robotId : r.label !== shown ? r.label : "";
    p.robot.title = r.label;
    p.driverName.textContent = r.driver ? r.driver : "FREE";
    p.driverName.className = r.driver ? "" : "free";
    const roster = r.students && !r.students.includes(r.driver) ? "roster: " + r.students.join(", ") : "";
    p.lock.textContent = [r.locked ? "🔒 " + r.locked : "", roster].filter(Boolean).join(" · ");
    p.rtt.textContent = r.rttMean !== undefined ? r.rttMean + " / " + r.rttMax + " ms" : "— ms";
    p.rate.textContent = (r.sps !== undefined ? r.sps + " states/s" : "") + (r.loss !== undefined ? " · loss " + r.loss + " %" : "");
    const board = (r.board || "").split(", ");
    p.boardName.textContent = board[0];
    p.boardSub.textContent = [r.transport, board.slice(1).join(", ")].filter(Boolean).join(" · ");
    p.board.title = r.board || "";
    p.version.textContent = r.version ? "v" + r.version + " · up " + uptime(r.uptime) : "";
    const verb = r.state === undefined ? "answered" : "heard";
    const heard = r.age === undefined ? "never heard" : r.age < 1000 ? verb + " just now" : verb + " " + (r.age / 1000).toFixed(1) + " s ago";
    p.heard.textContent = heard + (r.failsafes ? " · " + r.failsafes + " failsafe" + (r.failsafes === 1 ? "" : "s") : "");
    p.note.textContent = [r.refusal, r.unverified, r.off, r.stop && r.stop.startsWith("refused") ? "Stop " + r.stop : ""]
      .filter(Boolean).join(" · ");
    p.note.hidden = !p.note.textContent;
    p.b_lock.textContent = r.locked ? "Unlock" : "Lock";
    p.b_lock.dataset.action = r.locked ? "unlock" : "lock";
    p.b_lock.dataset.driver = r.driver || "";
    for (const a of ["stop", "release", "identify", "kick", "lock"]) {
      p["b_" + a].disabled = !!r.off;
      p["b_" + a].title = r.off || "";
    }
  }
  for (const [id, row] of rows) if (!seen.has(id)) { row.el.remove(); rows.delete(id); }
  summaryEl.textContent = `${list.length} robot${list.length === 1 ? "" : "s"} · ${counts.driving} driving · ${counts.waiting} waiting · ${counts.missing} offline`
    + (missing && missing.length ? ` · missing: ${missing.join(", ")}` : (missing ? " · every student is here" : ""))
    + (dropped ? ` · forged or stale reports dropped: ${dropped}` : "");
}

function renderGame(g) {
  if (!g) return;
  const box = document.getElementById("game");
  box.dataset.playing = g.playing ? "true" : "false";
  document.getElementById("game-start").hidden = g.playing;
  document.getElementById("game-end").hidden = !g.playing;
  const host = location.hostname;
  document.getElementById("game-info").textContent = g.problem ? g.problem
    : g.port === undefined ? "Start a round: every controller that sends to the game's port is a player; each press of A scores."
    : (g.playing ? `Round ${g.round} on: ` : `Round ${g.round} over. `)
      + `players send to ${host}:${g.port} (control --peer ${host}:${g.port} --name NAME); each press of A scores.`;
  const list = document.getElementById("scores");
  list.textContent = "";
  for (const s of g.scores) {
    const li = el("li", "", `${s.rank}. ${s.name}`);
    li.dataset.player = s.name;
    li.dataset.points = s.points;
    li.appendChild(el("b", "", String(s.points)));
    list.appendChild(li);
  }
}

document.addEventListener("click", (ev) => {
  const g = ev.target.closest("button[data-game]");
  if (g && socket && socket.readyState === WebSocket.OPEN) { socket.send(JSON.stringify({ t: "game-" + g.dataset.game })); return; }
  const b = ev.target.closest("button[data-action]");
  if (!b || !socket || socket.readyState !== WebSocket.OPEN) return;
  const msg = { t: b.dataset.action, robot: b.dataset.robotId };
  if (msg.t === "lock") {
    const name = window.prompt("Lock this robot to which student (display name)?", b.dataset.driver || "");
    if (!name) return;
    msg.arg = name;
  }
  socket.send(JSON.stringify(msg));
});

function connect() {
  socket = new WebSocket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/teacher/ws`);
  socket.onopen = () => { linkEl.hidden = true; };
  socket.onmessage = (ev) => {
    const m = JSON.parse(ev.data);
    if (m.t === "rows") { render(m.rows, m.missing, m.dropped); renderGame(m.game); window.dashboardUpdates = (window.dashboardUpdates || 0) + 1; }
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
