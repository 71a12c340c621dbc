/* The browser seat: follows the seat's state, animates what the others did, and sends the
 * person's clicks (put, draw, finish, leave). Two transports, one page: `arena play --web`
 * long-polls its seat server (ARENA_TOKEN); a table at the contest server (ARENA_SOCKET) is
 * a websocket that comes back by itself when the connection drops. */
"use strict";

(function () {
  const $ = (id) => document.getElementById(id);
  const base = "/" + ARENA_TOKEN + "/";
  const seen = { version: -1, shown: 0, game: null, state: null, timer: null };
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

  // One reading of the state for the header and the bar, so they never disagree: "your move" only
  // once the others' moves have been shown; a match stopped mid-game claims no result.
  function describe(st) {
    const moving = st.phase === "move" && seen.shown >= st.events.length - 1;
    const jack = moving && (st.prompt === "suit" || !!pendingJack);
    if (st.phase === "waiting")
      return { moving, jack, done: false, status: "waiting for the table's people to join",
        hint: (st.messages || []).join(" ") };
    if (st.phase === "closed" && !st.result)
      return { moving, jack, done: true, status: "the match was stopped; you may close this page",
        hint: "The match was stopped before this game ended: it has no result." };
    if (st.phase === "over" || st.phase === "closed")
      return { moving, jack, done: true,
        status: st.phase === "over" ? "game over" : "the match is over; you may close this page",
        hint: "Game over: the result is on the table." };
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
    $("leave").hidden = d.done;
    $("hint").textContent = st ? d.hint : "";
    if (st) $("status").textContent = d.status;
  }

  function clickCard(card) {
    const st = seen.state;
    if (!st || st.phase !== "move") return;
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
    renderTable($("table"), events, state, {
      bottom: you, seat: you, hand: last || !Array.isArray(state.hands[you]) ? st.hand : null,
      playable: last && st.phase === "move" ? st.puttable : [],
      onCard: last && st.phase === "move" ? clickCard : null,
      onStock: last && st.phase === "move" && st.can_draw ? () => send({ action: "draw" }) : null,
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
      if (st.error) { if (seen.state) setControls(seen.state); $("status").textContent = st.error; return; }
      if (st.version !== seen.version) { seen.version = st.version; update(st); }
    };
    socket.onclose = (e) => {
      socket = null;
      if (seen.state && seen.state.phase === "closed") return;
      if (e.code === 4001) { $("status").textContent = "this seat is open in another page"; setControls(null); return; }
      if (e.code === 4003) { $("status").textContent = "signed out: sign in again to take your seat"; setControls(null); return; }
      $("status").textContent = "connection lost; reconnecting\u2026";
      setTimeout(follow, 1000);
    };
  }

  $("draw").onclick = () => send({ action: "draw" });
  $("finish").onclick = () => send({ action: "finish" });
  $("leave").onclick = () => { if (confirm("Leave the game? The match stops.")) send({ action: "leave" }); };
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
  if (ARENA_SOCKET) follow(); else poll();
})();
