// The phone page of `analog-remote web`. The server turns this page into one controller on the
// UDP side; this script only reads the phone (tilt, touches, keys) and sends its whole state.
//
// Contract with the server (PageMessage / PageReport in the PhoneLink module):
//   → {"t":"join","robot":ID,"name":NAME,"code":CODE}   → {"t":"s","a":RADIANS,"b":BITS}
//   → {"t":"stop","why":WHY}
//   ← {"t":"robots"…} {"t":"joined"…} {"t":"status"…} {"t":"ended"…} {"t":"error"…}
// Safety: the state goes out on every change and at least every 50 ms while driving; hidden,
// frozen, closed or offline → one stop message and the socket is closed (the server sends
// neutral three times at once). The server also goes neutral by itself if the page falls silent.
"use strict";
(() => {
  const MAX = Math.PI / 2;                 // Protocol.md §2.3: the angle is clamped to ±π/2
  const HEARTBEAT_MS = 50;
  const KEY_TILT = Math.PI / 4;            // a held arrow key = full lock
  const $ = (id) => document.getElementById(id);
  const NAME_KEY = "analog-remote-name";

  let ws = null, joinedRobot = null, robots = [], wantDrive = null;
  let zero = 0, rollDeg = null, lastOrientation = 0, sensorSeen = false;
  const touchButtons = new Set(), keyButtons = new Set(), mouseButtons = new Set();
  let keyTilt = 0, lastSent = "", lastSendAt = 0, heartbeat = null, wakeLock = null;

  $("name").value = localStorage.getItem(NAME_KEY) || "";

  // MARK: connection
  function connect() {
    const url = (location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws";
    ws = new WebSocket(url);
    setChip($("conn"), "connecting…", "");
    ws.onopen = () => {
      setChip($("conn"), "connected", "ok");
      if (wantDrive) join(wantDrive);
    };
    ws.onmessage = (ev) => { try { receive(JSON.parse(ev.data)); } catch (e) { showError("bad message from the server"); } };
    ws.onclose = (ev) => {
      setChip($("conn"), "disconnected" + (ev.code === 1009 ? " (message too big)" : ev.code === 1008 ? " (too many messages)" : ""), "bad");
      ws = null;
      stopHeartbeat();
      if (joinedRobot) pause("The connection was lost: the robot got the neutral state.");
      joinedRobot = null;
    };
  }

  function send(obj) {
    if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(obj));
  }

  function receive(m) {
    switch (m.t) {
      case "robots": robots = m.robots || []; drawRobots(); break;
      case "joined":
        joinedRobot = m.robot;
        $("robotname").textContent = m.name;
        $("join").hidden = true; $("drive").hidden = false; $("paused").hidden = true;
        setChip($("state"), "saying hello…", "warn");
        startHeartbeat();
        keepAwake();
        break;
      case "status": drawStatus(m); break;
      case "robot": drawRobotState(m); break;
      case "ended":
        stopHeartbeat();
        if (joinedRobot) { joinedRobot = null; showJoin(); }
        showError(m.text);
        break;
      case "error": showError(m.text); break;
    }
  }

  // MARK: picking a robot
  function drawRobots() {
    const box = $("robots");
    box.textContent = "";
    if (robots.length === 0) {
      const p = document.createElement("p"); p.className = "hint"; p.textContent = "No robot found yet: is its receiver running?";
      box.appendChild(p); return;
    }
    for (const r of robots) {
      const b = document.createElement("button");
      b.type = "button"; b.className = "robot" + (r.driver ? " busy" : ""); b.dataset.id = r.id;
      b.textContent = r.name;
      const s = document.createElement("small");
      s.textContent = r.driver ? "driven by " + r.driver : "free · " + r.address;
      b.appendChild(s);
      b.addEventListener("click", () => pick(r.id));
      box.appendChild(b);
    }
  }

  async function pick(id) {
    const name = $("name").value.trim();
    if (!name) { showError("Type your name first."); $("name").focus(); return; }
    localStorage.setItem(NAME_KEY, name);
    hideError();
    // iOS asks for motion access only from a tap: this is that tap.
    if (typeof DeviceOrientationEvent !== "undefined" && typeof DeviceOrientationEvent.requestPermission === "function") {
      try {
        const answer = await DeviceOrientationEvent.requestPermission();
        if (answer !== "granted") showError("Motion access was refused: steer with the arrow keys, or allow it in Settings › Safari.");
      } catch (e) { /* not from a gesture: the keys still work */ }
    }
    wantDrive = id;
    if (!ws) connect(); else join(id);
  }

  function join(id) {
    send({ t: "join", robot: id, name: $("name").value.trim(), code: $("code").value.trim() });
  }

  function showJoin() { $("drive").hidden = true; $("join").hidden = false; releaseWake(); }

  // MARK: tilt
  // The angle the original app sent: rotation about the phone's long axis. Portrait: gamma
  // (tilt right = positive). Landscape: the long axis is across the screen, so beta, with the
  // sign by which way the phone was turned.
  function roll(e) {
    const turned = ((screen.orientation && screen.orientation.angle) ?? window.orientation ?? 0);
    switch ((turned + 360) % 360) {
      case 90: return e.beta;
      case 270: return -e.beta;
      case 180: return -e.gamma;
      default: return e.gamma;
    }
  }

  window.addEventListener("deviceorientation", (e) => {
    if (e.beta === null || e.gamma === null) return;
    rollDeg = roll(e);
    lastOrientation = performance.now();
    if (!sensorSeen) { sensorSeen = true; zero = 0; }
    update();
  });

  $("zero").addEventListener("click", () => { zero = rollDeg ?? 0; update(); });

  function angle() {
    let a;
    if (keyTilt !== 0 || !sensorSeen) a = keyTilt;
    else a = ((rollDeg ?? 0) - zero) * Math.PI / 180;
    if (!Number.isFinite(a)) a = 0;
    return Math.max(-MAX, Math.min(MAX, a));
  }

  // MARK: buttons: multi-touch (every finger counts), mouse, keys
  function buttonAt(x, y) {
    const el = document.elementFromPoint(x, y);
    const b = el && el.closest("[data-button]");
    return b ? Number(b.dataset.button) : 0;
  }
  function touches(e) {
    touchButtons.clear();
    for (const t of e.touches) { const b = buttonAt(t.clientX, t.clientY); if (b) touchButtons.add(b); }
    if (e.cancelable && e.target.closest && e.target.closest("#pad")) e.preventDefault();
    update();
  }
  for (const type of ["touchstart", "touchmove", "touchend", "touchcancel"]) document.addEventListener(type, touches, { passive: false });
  document.addEventListener("mousedown", (e) => { const b = buttonAt(e.clientX, e.clientY); if (b) { mouseButtons.add(b); update(); } });
  document.addEventListener("mouseup", () => { if (mouseButtons.size) { mouseButtons.clear(); update(); } });

  const KEYS = { ArrowUp: 1, KeyW: 1, ArrowDown: 2, KeyS: 2, KeyJ: 4, KeyK: 8 };
  document.addEventListener("keydown", (e) => {
    if (e.target.tagName === "INPUT" || !joinedRobot) return;
    if (KEYS[e.code]) keyButtons.add(KEYS[e.code]);
    else if (e.code === "ArrowLeft") keyTilt = -KEY_TILT;
    else if (e.code === "ArrowRight") keyTilt = KEY_TILT;
    else if (e.code === "Space") { zero = rollDeg ?? 0; }
    else return;
    e.preventDefault(); update();
  });
  document.addEventListener("keyup", (e) => {
    if (KEYS[e.code]) keyButtons.delete(KEYS[e.code]);
    else if (e.code === "ArrowLeft" || e.code === "ArrowRight") keyTilt = 0;
    else return;
    update();
  });

  function buttons() {
    let bits = 0;
    for (const set of [touchButtons, keyButtons, mouseButtons]) for (const b of set) bits |= b;
    return bits;
  }

  // MARK: sending
  function update(force) {
    const a = angle(), b = buttons();
    for (const el of document.querySelectorAll("[data-button]")) el.classList.toggle("on", (b & Number(el.dataset.button)) !== 0);
    const deg = a * 180 / Math.PI;
    $("tiltvalue").textContent = (deg >= 0 ? "+" : "") + deg.toFixed(0) + "°";
    $("tiltneedle").style.left = "calc(" + (50 + 50 * a / MAX) + "% - 3px)";
    $("tiltsource").textContent = keyTilt !== 0 ? "tilt: keys" : sensorSeen ? "tilt: phone" : "tilt: no sensor (keys ←/→)";
    if (!joinedRobot) return;
    const msg = JSON.stringify({ t: "s", a: Math.round(a * 10000) / 10000, b });
    const now = performance.now();
    if (force || msg !== lastSent) {
      if (ws && ws.readyState === WebSocket.OPEN) ws.send(msg);
      lastSent = msg; lastSendAt = now;
    }
  }

  function startHeartbeat() {
    stopHeartbeat();
    lastSent = "";
    update(true);
    heartbeat = setInterval(() => update(true), HEARTBEAT_MS);
  }
  function stopHeartbeat() { if (heartbeat) clearInterval(heartbeat); heartbeat = null; }

  // MARK: status
  const SHOWN = {
    connecting: ["saying hello…", "warn"], driving: ["driving", "ok"], unanswered: ["driving (older receiver)", "ok"],
    refused: ["refused", "bad"],
  };
  function drawStatus(m) {
    if (m.receiver) $("robotname").textContent = m.receiver;
    if (!m.robotState) {
      const [text, cls] = SHOWN[m.link] || [m.link, ""];
      setChip($("state"), text, cls);
    }
    $("rtt").textContent = m.rtt != null ? m.rtt.toFixed(1) : "–";
    $("loss").textContent = m.loss != null ? Math.round(m.loss * 100) + "%" : "–";
  }
  function drawRobotState(m) {
    setChip($("state"), m.text, m.level || "");
  }

  function setChip(el, text, cls) { el.textContent = text; el.className = "chip" + (cls ? " " + cls : ""); }
  function showError(text) { const e = $("error"); e.textContent = text; e.hidden = false; }
  function hideError() { $("error").hidden = true; }

  // MARK: safety: hidden, frozen, closed, offline → stop now
  function stopDriving(why, text) {
    if (!joinedRobot) return;
    send({ t: "stop", why });
    stopHeartbeat();
    joinedRobot = null;
    if (ws) { try { ws.close(1000, why); } catch (e) {} ws = null; }
    pause(text);
  }
  function pause(text) {
    $("pausedtext").textContent = text;
    $("paused").hidden = false;
    releaseWake();
  }
  document.addEventListener("visibilitychange", () => { if (document.visibilityState === "hidden") stopDriving("hidden", "Paused (the page was hidden): the robot got the neutral state."); });
  document.addEventListener("freeze", () => stopDriving("frozen", "Paused (the page was frozen): the robot got the neutral state."));
  window.addEventListener("pagehide", () => stopDriving("closed", "Paused: the robot got the neutral state."));
  window.addEventListener("offline", () => stopDriving("offline", "The network is gone: the robot got the neutral state."));
  $("stop").addEventListener("click", () => { stopDriving("button", "Stopped: the robot got the neutral state."); $("paused").hidden = true; showJoin(); });
  $("resume").addEventListener("click", () => { $("paused").hidden = true; hideError(); if (wantDrive) { if (!ws) connect(); else join(wantDrive); } });

  // MARK: keep the screen on while driving
  async function keepAwake() {
    try { if (navigator.wakeLock) wakeLock = await navigator.wakeLock.request("screen"); } catch (e) { /* not offered: fine */ }
  }
  function releaseWake() { if (wakeLock) { wakeLock.release().catch(() => {}); wakeLock = null; } }

  update();
  connect();
})();
