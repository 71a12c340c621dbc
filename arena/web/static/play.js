/* The browser seat: follows the seat's state, animates what the others did, and sends the
 * person's clicks (put, draw, finish, leave). Two transports, one page: `arena play --web`
 * long-polls its seat server (ARENA_TOKEN); a table at the contest server (ARENA_SOCKET) is
 * a websocket that comes back by itself when the connection drops. While it is down nothing
 * can be clicked; when it cannot come back, the page asks the server what became of the table
 * (ARENA_SOCKET's /api/tables/ID) and says so: a game that ended, or a table the server lost. */
"use strict";

(function () {
  const $ = (id) => document.getElementById(id);
  const base = "/" + ARENA_TOKEN + "/";
  const seen = { version: -1, shown: 0, game: null, state: null, timer: null, offline: false, gone: null };
  let pendingJack = null;
  // ?speed=N plays the others' moves N times faster (tests use it)
  const speed = Math.max(0.1, parseFloat(new URLSearchParams(location.search).get("speed") || "1") || 1);

  let socket = null;

  async function send(action) {
    setControls(null);
    if (ARENA_SOCKET) {
      if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(action));
      else $("status").textContent = "reconnecting\u2026";
      return;
    }
    try {
      const r = await fetch(base + "act", { method: "POST", headers: { "Content-Type": "application/json" },
        body: JSON.stringify(action) });
      if (!r.ok) { const e = await r.json(); $("status").textContent = e.error || "refused"; }
    } catch (e) { $("status").textContent = "the server is gone"; }
  }

  // Whether the seat may act now: asked, the connection up, not left.
  function live(st) { return st.phase === "move" && !seen.offline && !seen.gone && !st.left; }

  // One reading of the state for the header and the bar, so they never disagree: "your move" and
  // "game over" only once the others' moves have been shown; a match stopped mid-game claims no
  // result; a lost connection or a lost table offers nothing to click.
  function describe(st) {
    const caught = seen.shown >= st.events.length - 1;
    const moving = live(st) && caught;
    const jack = moving && (st.prompt === "suit" || !!pendingJack);
    if (seen.gone)
      return { moving: false, jack: false, done: true, status: seen.gone.status, hint: seen.gone.hint };
    if (seen.offline)
      return { moving: false, jack: false, done: false, status: "connection lost; reconnecting\u2026",
        hint: "Your seat waits for you while the page reconnects; nothing can be played until then." };
    if (st.resuming)
      return { moving: false, jack: false, done: false, status: "the server restarted: resuming your game\u2026",
        hint: (st.messages || []).join(" ") };
    if (st.phase === "closed" && st.abandoned)
      return { moving, jack, done: true, status: "this game was abandoned; you may close this page",
        hint: (st.messages || []).join(" ") };
    if ((st.phase === "over" || st.phase === "closed") && !caught)
      return { moving, jack, done: false, status: "game " + (st.game || "") + ": the others are playing",
        hint: "The others are playing\u2026" };
    if (st.phase === "waiting")
      return { moving, jack, done: false, status: "waiting for the table's people to join",
        hint: (st.messages || []).join(" ") };
    if (st.phase === "closed" && !st.result)
      return { moving, jack, done: true, status: "the match was stopped; you may close this page",
        hint: "The match was stopped before this game ended: it has no result." };
    if (st.phase === "over" || st.phase === "closed") {
      const places = st.result && st.result.places;
      const placed = places && ARENA_SOCKET ? "game over: you placed " + places[st.seat] + " of " + places.length : null;
      return { moving, jack, done: true,
        status: st.phase === "over" ? "game over" : placed || "the match is over; you may close this page",
        hint: "Game over: the result is on the table." };
    }
    if (st.left)
      return { moving: false, jack: false, done: false, status: "you left the table",
        hint: "You left: the fallback plays your seat to the end of the game; the others play on." };
    if (moving)
      return { moving, jack, done: false, status: "your move",
        hint: jack ? "Choose the suit your jack orders (R6.4)." : st.hint };
    return { moving, jack, done: false, status: "game " + (st.game || "") + ": the others are playing",
      hint: "The others are playing\u2026" };
  }

  function setControls(st) {
    const d = st ? describe(st) : { moving: false, jack: false, done: false };
    $("draw").disabled = !(d.moving && st.can_draw);
    $("finish").disabled = !(d.moving && st.can_finish);
    $("suits").hidden = !d.jack;
    $("leave").hidden = d.done || !!(st && st.left) || !!seen.gone;
    $("hint").textContent = st ? d.hint : "";
    if (st) $("status").textContent = d.status;
    document.body.dataset.offline = seen.offline ? "1" : "";
  }

  function clickCard(card) {
    const st = seen.state;
    if (!st || !live(st)) return;
    if (card.slice(0, -1) === "j" && st.puttable.indexOf(card) >= 0) { pendingJack = card; setControls(st); return; }
    pendingJack = null;
    send({ action: "put", card });
  }

  function draw(upTo) {
    const st = seen.state;
    const events = st.events;
    if (!events.length) return;
    const { state, log } = stateAt(events, upTo);
    const last = upTo >= events.length - 1;
    const you = st.seat;
    const now = last && live(st);
    renderTable($("table"), events, state, {
      bottom: you, seat: you, hand: last || !Array.isArray(state.hands[you]) ? st.hand : null,
      playable: now ? st.puttable : [],
      onCard: now ? clickCard : null,
      onStock: now && st.can_draw ? () => send({ action: "draw" }) : null,
    });
    const box = $("log");
    box.textContent = "";
    log.slice(-60).forEach((l) => box.appendChild(el("li", l.step === upTo ? "now" : "", l.text)));
    box.scrollTop = box.scrollHeight;
  }

  function animate() {
    const st = seen.state;
    if (seen.timer) { clearTimeout(seen.timer); seen.timer = null; }
    const end = st.events.length - 1;
    $("table").dataset.animating = seen.shown < end ? "1" : "";
    if (seen.shown < end) {
      const behind = end - seen.shown;
      seen.shown += behind > 16 ? behind - 16 : 1;   // a long way behind: catch up at once
      draw(seen.shown);
      setControls(st);
      seen.timer = setTimeout(animate, 110 / speed);
      return;
    }
    seen.shown = end;
    $("table").dataset.animating = "";
    draw(end);
    setControls(st);
  }

  function update(st) {
    if (st.game !== seen.game) { seen.game = st.game; seen.shown = 0; }
    seen.state = st;
    if (seen.shown > st.events.length - 1) seen.shown = 0;
    const msgs = $("messages");
    msgs.textContent = "";
    (st.messages || []).slice(-30).forEach((m) =>
      msgs.appendChild(el("li", /not allowed|is not a choice|there is no card/.test(m) ? "error" : "", m.trim())));
    msgs.scrollTop = msgs.scrollHeight;
    document.body.dataset.phase = st.phase;
    document.body.dataset.version = String(st.version);
    if (st.phase !== "move") pendingJack = null;
    if (st.record) { $("record").href = st.record; $("record").hidden = false; }
    animate();
  }

  // Draw the page again for what changed besides the state (the connection, the table's fate).
  function refresh() {
    if (!seen.state) { setControls(null); $("status").textContent = seen.gone ? seen.gone.status : "connection lost; reconnecting\u2026"; return; }
    if (seen.gone) document.body.dataset.phase = "gone";
    animate();
  }

  async function poll() {
    for (;;) {
      try {
        const r = await fetch(base + "state?after=" + seen.version, { cache: "no-store" });
        if (!r.ok) throw new Error("HTTP " + r.status);
        const st = await r.json();
        if (st.version !== seen.version) { seen.version = st.version; update(st); }
        if (st.phase === "closed") return;
      } catch (e) {
        $("status").textContent = "the server is gone (the match has ended or was stopped)";
        setControls(null);
        return;
      }
    }
  }

  // The table's websocket: every message is the seat's state, or a refusal of the last action.
  function follow() {
    const url = (location.protocol === "https:" ? "wss://" : "ws://") + location.host + ARENA_SOCKET;
    socket = new WebSocket(url);
    socket.onmessage = (m) => {
      const st = JSON.parse(m.data);
      if (seen.offline) { seen.offline = false; if (!st.version || st.version === seen.version) refresh(); }
      if (st.error) { if (seen.state) setControls(seen.state); $("status").textContent = st.error; return; }
      if (st.version !== seen.version) { seen.version = st.version; update(st); }
    };
    socket.onclose = (e) => {
      socket = null;
      if (seen.state && seen.state.phase === "closed") return;
      if (e.code === 4001) { $("status").textContent = "this seat is open in another page"; setControls(null); return; }
      if (e.code === 4003) { $("status").textContent = "signed out: sign in again to take your seat"; setControls(null); return; }
      seen.offline = true;
      refresh();
      whatBecame();
    };
  }

  // The socket closed or was refused: a server that does not answer is waited for; one that
  // answers says whether the table is still there, its game recorded, or unknown to it.
  async function whatBecame() {
    let answer = null;
    try {
      const r = await fetch(ARENA_SOCKET.replace("/ws/tables/", "/api/tables/"), { cache: "no-store" });
      answer = r.status === 404 ? { state: "gone" } : r.ok ? await r.json() : null;
    } catch (err) { answer = null; }
    if (answer && answer.state === "gone") {
      seen.gone = { status: "this table is gone; you may close this page",
        hint: "The server no longer has this table: its game was not recorded." };
    } else if (answer && (answer.state === "over" || answer.state === "closed") && !(seen.state && seen.state.phase === "closed")) {
      seen.gone = { status: answer.outcome === "abandoned" ? "this game was abandoned; you may close this page" :
        "this game is over; you may close this page",
        hint: answer.record ? "The game ended while this page was away: its record has the result." :
          "The table closed before its game started." };
      if (answer.record) { $("record").href = answer.record; $("record").hidden = false; }
    }
    if (seen.gone) { refresh(); return; }
    setTimeout(follow, 1000);
  }

  $("draw").onclick = () => send({ action: "draw" });
  $("finish").onclick = () => send({ action: "finish" });
  const leaving = ARENA_SOCKET ?
    "Leave the table? The fallback plays your seat to the end of this game (you place as it plays) and the others play on; you cannot take the seat back." :
    "Leave the game? The match stops here, and this game has no result.";
  $("leave").onclick = () => { if (confirm(leaving)) send({ action: "leave" }); };
  document.querySelectorAll("#suits .suit").forEach((b) => {
    b.onclick = () => {
      const st = seen.state;
      const card = pendingJack;
      pendingJack = null;
      send(st && st.prompt === "suit" && !card ? { action: "put", card: "js", suit: b.dataset.suit } :
        { action: "put", card, suit: b.dataset.suit });
    };
  });
  $("suit-cancel").onclick = () => { pendingJack = null; setControls(seen.state); };
  // a phone turned, a window resized: the hands are fitted to their seats again
  window.addEventListener("resize", () => { if (seen.state && seen.state.events.length) draw(seen.shown); });
  if (ARENA_SOCKET) follow(); else poll();
})();
