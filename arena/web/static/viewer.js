/* The replay viewer: game list, step controls, play/pause, keyboard, and
 * the moment in the URL (#game=ID&step=N, step=end for the last one). */
"use strict";

(function () {
  const DATA = JSON.parse(document.getElementById("arena-data").textContent);
  const games = DATA.games;
  const byId = new Map(games.map((g) => [String(g.id), g]));
  const $ = (id) => document.getElementById(id);
  const PLAY_ICON = '<svg viewBox="0 0 24 24" width="18" height="18" aria-hidden="true"><path d="M7 4v16l13-8z" fill="currentColor"/></svg>';
  const PAUSE_ICON = '<svg viewBox="0 0 24 24" width="18" height="18" aria-hidden="true"><path d="M6 4h4v16H6zM14 4h4v16h-4z" fill="currentColor"/></svg>';
  const SPEEDS = [0.25, 0.5, 1, 2, 4, 8, 16];
  const view = { game: null, step: 0, playing: false, timer: null, speed: 1, pending: null };

  function parseHash() {
    const out = {};
    location.hash.replace(/^#/, "").split("&").forEach((part) => {
      const i = part.indexOf("=");
      if (i > 0) out[decodeURIComponent(part.slice(0, i))] = decodeURIComponent(part.slice(i + 1));
    });
    return out;
  }

  function writeHash() {
    if (!view.game) return;
    const g = view.game;
    const step = view.step >= g.events.length - 1 ? "end" : String(view.step);
    const hash = "#game=" + encodeURIComponent(g.id) + "&step=" + step;
    if (location.hash !== hash) history.replaceState(null, "", hash);
  }

  function lastStep() { return view.game ? view.game.events.length - 1 : 0; }

  function stops(kinds) {
    const out = [];
    view.game.events.forEach((e, i) => { if (i > 0 && kinds.indexOf(e.event) >= 0) out.push(i); });
    return out;
  }

  function moveStops() { return stops(["finish", "deal", "round", "end"]); }

  function go(step) {
    if (!view.game) return;
    view.step = Math.max(0, Math.min(lastStep(), step));
    render();
    writeHash();
  }

  function stepMove(dir) {
    const s = moveStops();
    if (dir > 0) { const next = s.find((i) => i > view.step); go(next === undefined ? lastStep() : next); }
    else { const prev = s.filter((i) => i < view.step).pop(); go(prev === undefined ? 0 : prev); }
  }

  function stepRound(dir) {
    const deals = stops(["deal"]);
    if (dir > 0) { const next = deals.find((i) => i > view.step); go(next === undefined ? lastStep() : next); }
    else { const prev = deals.filter((i) => i < view.step).pop(); go(prev === undefined ? 0 : prev); }
  }

  function setPlaying(on) {
    view.playing = on && !!view.game;
    if (view.timer) { clearInterval(view.timer); view.timer = null; }
    if (view.playing) {
      if (view.step >= lastStep()) go(0);
      view.timer = setInterval(() => {
        if (view.step >= lastStep()) { setPlaying(false); return; }
        go(view.step + 1);
      }, Math.max(20, 700 / view.speed));
    }
    $("play").innerHTML = view.playing ? PAUSE_ICON : PLAY_ICON;  // constant markup, no data
    $("play").title = view.playing ? "pause (space)" : "play (space)";
    $("play").setAttribute("aria-pressed", view.playing ? "true" : "false");
  }

  function setSpeed(speed) {
    view.speed = speed;
    $("speed").value = String(speed);
    if (view.playing) setPlaying(true);
  }

  function render() {
    const g = view.game;
    const seat = DATA.seat === null || DATA.seat === undefined ? null : DATA.seat;
    const status = $("status");
    let log = [];
    try {  // a record that is not a well-formed game (a file is input) is said so, not thrown
      const shown = stateAt(g.events, view.step);
      log = shown.log;
      renderTable($("table"), g.events, shown.state, { bottom: seat === null ? 0 : seat, seat });
      if (status.dataset.bad) { status.textContent = ""; delete status.dataset.bad; }
    } catch (e) {
      $("table").textContent = "";
      status.textContent = "step " + view.step + " of game " + g.id + " cannot be shown: the record is not a well-formed game";
      status.dataset.bad = "1";
    }
    $("slider").max = String(lastStep());
    $("slider").value = String(view.step);
    $("position").textContent = "step " + view.step + " of " + lastStep();
    const rounds = $("round");
    if (rounds.dataset.game !== String(g.id)) {
      rounds.textContent = "";
      stops(["deal"]).forEach((i) => {
        const o = el("option", "", "round " + g.events[i].round);
        o.value = String(i);
        rounds.appendChild(o);
      });
      rounds.dataset.game = String(g.id);
    }
    const deals = stops(["deal"]).filter((i) => i <= view.step);
    if (deals.length) rounds.value = String(deals[deals.length - 1]);
    const box = $("log");
    box.textContent = "";
    log.slice(-40).forEach((line) => {
      const li = el("li", line.step === view.step ? "now" : "", line.text);
      li.dataset.step = String(line.step);
      box.appendChild(li);
    });
    box.scrollTop = box.scrollHeight;
    document.querySelectorAll("#games li").forEach((li) => li.classList.toggle("current", li.dataset.game === String(g.id)));
    const h = g.events[0];
    $("game-title").textContent = "Game " + h.game + (DATA.seat !== null && DATA.seat !== undefined ?
      " \u2014 as seen by seat " + DATA.seat : "");
  }

  function open(id, step) {
    const g = byId.get(String(id));
    if (!g) { $("status").textContent = "no game " + id + " in this file"; return; }
    if (!g.events) { load(g, step); return; }
    const changed = view.game !== g;
    view.game = g;
    if (changed) setPlaying(false);
    const last = g.events.length - 1;
    let s = step === "end" ? last : parseInt(step, 10);
    if (isNaN(s)) s = 0;
    $("status").textContent = "";
    go(Math.min(Math.max(0, s), last));
  }

  /* Report mode: a game's events live in GAMES/<id>.js, loaded on demand (works from file://). */
  function load(g, step) {
    view.pending = { id: String(g.id), step };
    $("status").textContent = "loading game " + g.id + "\u2026";
    const script = document.createElement("script");
    script.src = DATA.src + encodeURIComponent(g.id) + ".js";
    script.onerror = () => { $("status").textContent = "cannot load " + script.src; };
    document.head.appendChild(script);
  }

  window.arenaLoad = function (id, events) {
    const g = byId.get(String(id));
    if (!g) return;
    g.events = events;
    if (view.pending && view.pending.id === String(id)) { const p = view.pending; view.pending = null; open(id, p.step); }
  };

  function buildList() {
    const list = $("games");
    list.textContent = "";
    games.forEach((g) => {
      const li = el("li");
      li.dataset.game = String(g.id);
      const a = el("a", "", g.label || "game " + g.id);
      a.href = "#game=" + encodeURIComponent(g.id) + "&step=0";
      li.appendChild(a);
      if (g.summary) li.appendChild(el("span", "summary", g.summary));
      list.appendChild(li);
    });
    $("game-list").hidden = games.length < 2;
  }

  function fromHash() {
    const h = parseHash();
    const id = h.game !== undefined ? h.game : (games.length ? games[0].id : null);
    if (id === null) { $("status").textContent = "this file holds no game"; return; }
    open(id, h.step === undefined ? "0" : h.step);
  }

  function wire() {
    $("first").onclick = () => go(0);
    $("back-move").onclick = () => stepMove(-1);
    $("back").onclick = () => go(view.step - 1);
    $("play").onclick = () => setPlaying(!view.playing);
    $("fwd").onclick = () => go(view.step + 1);
    $("fwd-move").onclick = () => stepMove(1);
    $("last").onclick = () => go(lastStep());
    $("slider").oninput = (e) => go(parseInt(e.target.value, 10));
    $("round").onchange = (e) => go(parseInt(e.target.value, 10));
    const speed = $("speed");
    SPEEDS.forEach((s) => { const o = el("option", "", s + "\u00d7"); o.value = String(s); speed.appendChild(o); });
    speed.value = "1";
    speed.onchange = (e) => setSpeed(parseFloat(e.target.value));
    window.addEventListener("hashchange", fromHash);
    document.addEventListener("keydown", (e) => {
      if (e.target && (e.target.tagName === "SELECT" || e.target.tagName === "INPUT") && e.key !== " ") return;
      const k = e.key;
      if (k === "ArrowRight") e.shiftKey ? stepMove(1) : go(view.step + 1);
      else if (k === "ArrowLeft") e.shiftKey ? stepMove(-1) : go(view.step - 1);
      else if (k === "ArrowDown" || k === "m") stepMove(1);
      else if (k === "ArrowUp" || k === "M") stepMove(-1);
      else if (k === "PageDown" || k === "r") stepRound(1);
      else if (k === "PageUp" || k === "R") stepRound(-1);
      else if (k === "Home") go(0);
      else if (k === "End") go(lastStep());
      else if (k === " " || k === "k") setPlaying(!view.playing);
      else if (k === "+" || k === "=") setSpeed(SPEEDS[Math.min(SPEEDS.length - 1, SPEEDS.indexOf(view.speed) + 1)]);
      else if (k === "-") setSpeed(SPEEDS[Math.max(0, SPEEDS.indexOf(view.speed) - 1)]);
      else if (k === "n" || k === "p") {
        const i = games.indexOf(view.game) + (k === "n" ? 1 : -1);
        if (i >= 0 && i < games.length) location.hash = "#game=" + encodeURIComponent(games[i].id) + "&step=0";
      } else return;
      e.preventDefault();
    });
  }

  document.title = DATA.title || document.title;
  wire();
  buildList();
  fromHash();
})();
