// The phone page of `analog-remote web`. The server turns this page into one controller on the
// UDP side; this script only reads the phone (tilt, touches, keys) and sends its whole state.
//
// Contract with the server (PageMessage / PageReport in the PhoneLink module):
//   → {"t":"join","robot":ID,"name":NAME,"code":CODE}   → {"t":"s","a":RADIANS,"b":BITS}
//   → {"t":"stop","why":WHY}  → {"t":"name","name":NAME} (as it is typed: with a roster, the
//     server lists only that student's robot)
//   ← {"t":"robots"…} {"t":"joined"…} {"t":"status"…} {"t":"robot"…} {"t":"sensors"…} {"t":"ended"…}
//     {"t":"error"…} {"t":"roster"…}
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

  let ws = null, joinedRobot = null, robots = [], wantDrive = null, shown = false, shownTimer = null;
  let rosterText = null, nameTimer = null;
  // The zero is kept per way the phone is turned (0, 90, 180, 270): a zero taken in portrait
  // would be a bias in landscape, where the roll is read from another axis.
  let zeros = {}, rollDeg = null, lastOrientation = 0, sensorSeen = false, lastButtons = 0;
  const touchButtons = new Set(), keyButtons = new Set(), mouseButtons = new Set();
  let keyTilt = 0, lastSent = "", lastSendAt = 0, heartbeat = null, wakeLock = null;

  $("name").value = localStorage.getItem(NAME_KEY) || "";

  // Keyboard hints only where there is a keyboard: no touch screen, or a fine pointer (a laptop
  // with a touch screen); any key pressed shows them too.
  function showKeys() { $("keys").hidden = false; }
  if (navigator.maxTouchPoints === 0 || matchMedia("(pointer: fine)").matches) showKeys();

  // MARK: connection
  function connect() {
    const url = (location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws";
    ws = new WebSocket(url);
    setChip($("conn"), "connecting…", "");
    ws.onopen = () => {
      setChip($("conn"), "connected", "ok");
      sendName();
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

  // The robot's senses (Protocol.md §7.9.1, raw board values): the switch, four bars 0…255 and
  // the temperature. Hidden until the first reading (an older receiver, reads off: none).
  function drawSensors(v) {
    if (!v) return;
    $("sensors").hidden = false;
    $("sw").textContent = v.switch ? "●" : "○";
    $("sw").title = v.switch ? "switch pressed" : "switch not pressed";
    for (let i = 1; i <= 4; i++) {
      const n = Math.max(0, Math.min(255, v["sensor" + i] | 0));
      const bar = $("s" + i);
      bar.style.height = Math.round(n / 255 * 100) + "%";
      bar.parentNode.title = "sensor " + i + ": " + n;
    }
    $("temp").textContent = (v.temperature | 0) + "°C";
  }

  function receive(m) {
    switch (m.t) {
      case "robots": robots = m.robots || []; drawRobots(); break;
      case "joined":
        // The drive screen opens once the receiver has answered and the robot is not someone
        // else's (a report says so; a receiver too old to report: 600 ms after its answer).
        joinedRobot = m.robot; shown = false;
        $("robotname").textContent = m.name;
        $("paused").hidden = true;
        showError("Asking " + m.name + "…", true);
        startHeartbeat();
        break;
      case "status":
        drawStatus(m);
        if (joinedRobot && !shown && !m.robotState && (m.link === "driving" || m.link === "unanswered") && !shownTimer) {
          shownTimer = setTimeout(() => { shownTimer = null; if (joinedRobot && !shown) showDrive(); }, m.link === "unanswered" ? 0 : 600);
        }
        break;
      case "robot":
        // Its text is the headline of Protocol.md §7.9, "OWNED BY <driver>".
        if (joinedRobot && m.state === "owned") { taken(m.text.replace(/^OWNED BY\s*/i, "")); break; }
        drawRobotState(m);
        if (joinedRobot && !shown && m.state !== "refused") showDrive();   // refused: "ended" follows
        break;
      case "sensors": drawSensors(m.sensors); break;
      case "ended":
        if (!joinedRobot) break;   // the end of a controller this page already left (taken, stop)
        stopHeartbeat();
        if (joinedRobot) { joinedRobot = null; showJoin(); }
        showError(m.text);
        break;
      case "error": showError(m.text); break;
      case "roster": rosterText = m.text; drawRobots(); break;
    }
  }

  // The name as typed goes to the server (a roster lists only that student's robot).
  function sendName() {
    const name = $("name").value.trim();
    if (name) send({ t: "name", name: name });
  }
  $("name").addEventListener("input", () => {
    if (nameTimer) clearTimeout(nameTimer);
    nameTimer = setTimeout(() => { nameTimer = null; sendName(); }, 300);
  });

  // MARK: picking a robot
  function drawRobots() {
    const box = $("robots");
    box.textContent = "";
    if (robots.length === 0) {
      const p = document.createElement("p"); p.className = "hint"; p.textContent = rosterText || "No robot found yet: is its receiver running?";
      box.appendChild(p); return;
    }
    if (rosterText) {
      const p = document.createElement("p"); p.className = "hint roster"; p.textContent = rosterText; box.appendChild(p);
    }
    const mine = robots.find((r) => r.id === joinedRobot);
    if (mine) $("robotname").textContent = mine.name;
    for (const r of robots) {
      const b = document.createElement("button");
      b.type = "button"; b.className = "robot" + (r.driver ? " busy" : ""); b.dataset.id = r.id;
      b.textContent = r.name;
      const s = document.createElement("small");
      s.textContent = (r.driver ? "driven by " + r.driver : "free") + " · " + r.address;
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

  function showDrive() {
    shown = true; hideError();
    $("join").hidden = true; $("drive").hidden = false; document.body.classList.add("driving");
    keepAwake();
    update(true);
  }
  function showJoin() {
    shown = false; if (shownTimer) { clearTimeout(shownTimer); shownTimer = null; }
    $("drive").hidden = true; $("join").hidden = false; document.body.classList.remove("driving");
    releaseWake();
  }
  // The receiver says another controller owns the robot: back to the picker, saying who.
  function taken(who) {
    const name = $("robotname").textContent;
    send({ t: "stop", why: "taken" });
    stopHeartbeat();
    joinedRobot = null; wantDrive = null;
    showJoin();
    showError(name + " is driven by " + (who || "someone else") + ": pick another robot.");
  }

  // MARK: tilt
  // The angle the original app sent: rotation about the phone's long axis. Portrait: gamma
  // (tilt right = positive). Landscape: the long axis is across the screen, so beta, with the
  // sign by which way the phone was turned.
  function turned() {
    return ((((screen.orientation && screen.orientation.angle) ?? window.orientation ?? 0) % 360) + 360) % 360;
  }
  function roll(e) {
    switch (turned()) {
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
    if (!sensorSeen) { sensorSeen = true; zeros = {}; }
    update();
  });
  if (screen.orientation) screen.orientation.addEventListener("change", () => update());
  else window.addEventListener("orientationchange", () => update());

  function setZero() { zeros[turned()] = rollDeg ?? 0; update(); }
  $("zero").addEventListener("click", setZero);

  function angle() {
    let a;
    if (joinedRobot && !shown) a = 0;      // not driving yet: the robot gets neutral
    else if (keyTilt !== 0 || !sensorSeen) a = keyTilt;
    else a = ((rollDeg ?? 0) - (zeros[turned()] ?? 0)) * Math.PI / 180;
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
    if (e.cancelable && e.target.closest && e.target.closest("[data-button]")) e.preventDefault();
    update();
  }
  for (const type of ["touchstart", "touchmove", "touchend", "touchcancel"]) document.addEventListener(type, touches, { passive: false });
  document.addEventListener("mousedown", (e) => { const b = buttonAt(e.clientX, e.clientY); if (b) { mouseButtons.add(b); update(); } });
  document.addEventListener("mouseup", () => { if (mouseButtons.size) { mouseButtons.clear(); update(); } });

  const KEYS = { ArrowUp: 1, KeyW: 1, ArrowDown: 2, KeyS: 2, KeyJ: 4, KeyK: 8 };
  document.addEventListener("keydown", (e) => {
    showKeys();
    if (e.target.tagName === "INPUT" || !joinedRobot) return;
    if (KEYS[e.code]) keyButtons.add(KEYS[e.code]);
    else if (e.code === "ArrowLeft") keyTilt = -KEY_TILT;
    else if (e.code === "ArrowRight") keyTilt = KEY_TILT;
    else if (e.code === "Space") { zeros[turned()] = rollDeg ?? 0; }
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
    if (joinedRobot && !shown) return 0;
    let bits = 0;
    for (const set of [touchButtons, keyButtons, mouseButtons]) for (const b of set) bits |= b;
    return bits;
  }

  // MARK: sending
  function update(force) {
    const a = angle(), b = buttons();
    for (const el of document.querySelectorAll("[data-button]")) el.classList.toggle("on", (b & Number(el.dataset.button)) !== 0);
    // A short buzz when a button engages, where the browser can (Android; iOS Safari has no vibrate).
    if (joinedRobot && (b & ~lastButtons) && navigator.vibrate) { try { navigator.vibrate(15); } catch (e) {} }
    lastButtons = b;
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
  function showError(text, info) { const e = $("error"); e.textContent = text; e.hidden = false; e.classList.toggle("info", !!info); }
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
  // The browser drops a wake lock whenever the page is hidden: take it again when it is back.
  document.addEventListener("visibilitychange", () => { if (document.visibilityState === "visible" && joinedRobot && shown) keepAwake(); });
  $("resume").addEventListener("click", () => { $("paused").hidden = true; hideError(); if (wantDrive) { if (!ws) connect(); else join(wantDrive); } });

  // MARK: keep the screen on while driving
  async function keepAwake() {
    if (!navigator.wakeLock || wakeLock || document.visibilityState !== "visible") return;
    try {
      const lock = await navigator.wakeLock.request("screen");
      if (!joinedRobot) { lock.release().catch(() => {}); return; }
      wakeLock = lock;
      lock.addEventListener("release", () => { if (wakeLock === lock) wakeLock = null; });
    } catch (e) { /* not offered or not allowed: the screen may dim, nothing else changes */ }
  }
  function releaseWake() { if (wakeLock) { wakeLock.release().catch(() => {}); wakeLock = null; } }

  update();
  connect();
})();
