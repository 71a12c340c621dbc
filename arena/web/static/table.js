/* Yard bridge table: folds game-record events (docs/record-format.md) into the
 * state of the table after any number of them, and draws that state.
 * Shared by the replay viewer and the browser seat. Every text that comes
 * from a record (names, say lines, fault details) is put in the page with
 * textContent, never as HTML. */
"use strict";

const SUIT_SYMBOLS = { s: "\u2660", c: "\u2663", h: "\u2665", d: "\u2666" };
const SUIT_NAMES = { s: "spades", c: "clubs", h: "hearts", d: "diamonds" };
const EFFECT_WORDS = { "7": "a 7", "8": "an 8" };

function cardRank(card) { return card.slice(0, -1); }
function cardSuit(card) { return card.slice(-1); }
function cardText(card) { return cardRank(card).toUpperCase() + SUIT_SYMBOLS[cardSuit(card)]; }

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}

/** A face-up card, or a face-down one when card is null. */
function cardEl(card, extra) {
  const e = el("div", "card" + (extra ? " " + extra : ""));
  if (!card) { e.classList.add("back"); return e; }
  const suit = cardSuit(card);
  e.classList.add("suit-" + suit);
  if (suit === "h" || suit === "d") e.classList.add("red");
  e.dataset.card = card;
  e.appendChild(el("span", "rank", cardRank(card).toUpperCase()));
  e.appendChild(el("span", "pip", SUIT_SYMBOLS[suit]));
  e.setAttribute("aria-label", cardRank(card).toUpperCase() + " of " + SUIT_NAMES[suit]);
  return e;
}

/** A seat's name for the log; "name#seat" when two seats share the name. */
function who(header, seat) {
  const players = header.players || [];
  const p = players[seat];
  const name = p ? p.name : "seat " + seat;
  return players.filter((q) => q.name === name).length > 1 ? name + "#" + seat : name;
}

/** The final group of a move's puts: the same-rank run at its end (R6). */
function finalGroup(put) {
  if (!put.length) return [];
  const rank = cardRank(put[put.length - 1]);
  let i = put.length - 1;
  while (i > 0 && cardRank(put[i - 1]) === rank) i--;
  return put.slice(i);
}

/** Seats that lose a turn after a move (R6.2, R6.3), to show lost-turn counts. */
function lostTurns(state, mover, put, rules) {
  const group = finalGroup(put);
  if (!group.length) return;
  const rank = cardRank(group[0]);
  if (rank !== "8" && rank !== "a") return;
  const n = state.n, k = group.length;
  if (rules && rules.stacked_effects) {
    state.skips[(mover + 1) % n] += rank === "8" ? 1 : k;
    return;
  }
  for (let i = 0; i < k; i++) state.skips[(mover + 1 + (i % (n - 1))) % n] += 1;
}

function newState(header) {
  const n = (header.players || []).length;
  const zeros = () => new Array(n).fill(0);
  return {
    n, round: 0, first: null, hands: new Array(n).fill(0).map(() => []), stock: 0, pile: [], pileCount: 0,
    suit: null, scores: zeros(), skips: zeros(), faults: new Array(n).fill(0).map(() => []),
    says: new Array(n).fill(null), mover: null, put: [], flash: {}, roundResult: null, end: null,
    rounds: [], last: null,
  };
}

function handAdd(state, seat, card) {
  const h = state.hands[seat];
  if (Array.isArray(h) && card) h.push(card);
  else state.hands[seat] = (Array.isArray(h) ? h.length : h) + 1;
}

function handRemove(state, seat, card) {
  const h = state.hands[seat];
  if (Array.isArray(h)) {
    const i = h.indexOf(card);
    if (i >= 0) h.splice(i, 1);
    else if (h.length) h.pop();
  } else state.hands[seat] = Math.max(0, h - 1);
}

function flash(state, seat, text, kind) {
  (state.flash[seat] = state.flash[seat] || []).push({ text, kind });
}

/** Apply one event to the state; returns its line for the log. */
function applyEvent(state, ev, header, step) {
  const rules = header.rules || {};
  const seat = ev.seat;
  state.flash = {};
  state.last = ev;
  switch (ev.event) {
    case "deal": {
      state.round = ev.round; state.first = ev.first; state.mover = ev.first; state.put = [];
      state.hands = ev.hands.map((h) => (Array.isArray(h) ? h.slice() : h));
      state.stock = Array.isArray(ev.stock) ? ev.stock.length : ev.stock;
      state.pile = []; state.pileCount = 0; state.suit = null;
      state.scores = ev.scores.slice(); state.skips = new Array(state.n).fill(0);
      state.says = new Array(state.n).fill(null); state.roundResult = null;
      return "round " + ev.round + " dealt; " + who(header, ev.first) + " starts";
    }
    case "put": {
      const rank = cardRank(ev.card);
      if (ev.opening) { state.stock = Math.max(0, state.stock - 1); state.put = []; }
      else handRemove(state, seat, ev.card);
      if (state.mover !== seat) state.put = [];
      state.mover = seat;
      state.put.push(ev.card);
      state.pile.push(ev.card); state.pileCount++;
      state.suit = rank === "j" ? (ev.suit || cardSuit(ev.card)) : null;
      flash(state, seat, (ev.opening ? "opening " : "puts ") + cardText(ev.card), "put");
      let line = who(header, seat) + (ev.opening ? " turns the opening card " : " puts ") + cardText(ev.card);
      if (rank === "j") line += ", ordering " + SUIT_NAMES[state.suit];
      return line;
    }
    case "draw": {
      if (state.mover !== seat) state.put = [];
      state.mover = seat;
      handAdd(state, seat, ev.card);
      state.stock = Math.max(0, state.stock - 1);
      flash(state, seat, "draws", "draw");
      return who(header, seat) + " draws " + (ev.card ? cardText(ev.card) : "a card");
    }
    case "finish": {
      lostTurns(state, seat, state.put, rules);
      state.put = [];
      state.mover = null;
      state.lastMover = seat;
      flash(state, seat, "finishes", "finish");
      return who(header, seat) + " finishes the move";
    }
    case "penalty": {
      handAdd(state, seat, ev.card);
      state.stock = Math.max(0, state.stock - 1);
      flash(state, seat, "+1 card (" + ev.rank + ")", "penalty");
      return who(header, seat) + " draws " + (ev.card ? cardText(ev.card) : "a card") + " (effect of " +
        (EFFECT_WORDS[ev.rank] || ev.rank) + ")";
    }
    case "skip": {
      state.skips[seat] = Math.max(0, state.skips[seat] - 1);
      flash(state, seat, "loses a turn", "skip");
      return who(header, seat) + " loses a turn";
    }
    case "reshuffle": {
      state.stock = Array.isArray(ev.stock) ? ev.stock.length : ev.stock;
      state.pile = state.pile.slice(-1); state.pileCount = state.pile.length;
      return "the pile is reshuffled into a stock of " + state.stock;
    }
    case "fault": {
      state.faults[seat].push({ kind: ev.kind, detail: ev.detail || "" });
      flash(state, seat, "fault: " + ev.kind, "fault");
      return "FAULT " + who(header, seat) + " " + ev.kind + (ev.detail ? ": " + ev.detail : "");
    }
    case "say": {
      if (ev.output) return who(header, seat) + " printed: " + ev.text; // its own output (its seat and the organiser see it)
      state.says[seat] = { text: String(ev.text), step };
      return who(header, seat) + " says \u201c" + ev.text + "\u201d";
    }
    case "round": {
      state.scores = ev.scores.slice();
      state.roundResult = ev;
      state.mover = null;
      state.rounds.push(ev);
      const winner = ev.winner === null || ev.winner === undefined ? "nobody went out (move guard)" :
        who(header, ev.winner) + " went out";
      return "round " + ev.round + " over: " + winner + "; scores " + ev.scores.join(" / ") +
        (ev.burned && ev.burned.length ? "; burned: " + ev.burned.map((s) => who(header, s)).join(", ") : "");
    }
    case "end": {
      state.scores = ev.scores.slice();
      state.end = ev;
      return "game over after " + ev.rounds + (ev.rounds === 1 ? " round" : " rounds");
    }
    default:
      return ev.event;
  }
}

/** The state after the first `step` events following the header, and the log lines. */
function stateAt(events, step) {
  const header = events[0];
  const state = newState(header);
  const log = [];
  for (let i = 1; i <= step && i < events.length; i++) log.push({ step: i, text: applyEvent(state, events[i], header, i) });
  state.step = step;
  return { state, log };
}

/** Where seat panels sit around the oval, as percentages, the `bottom` seat nearest the viewer. */
function seatPosition(seat, n, bottom) {
  const k = (seat - bottom + n) % n;
  const angle = Math.PI / 2 + (2 * Math.PI * k) / n;
  return { x: 50 + 39 * Math.cos(angle), y: 50 + 36 * Math.sin(angle) };
}

/**
 * Draw the table for `state` into `root`.
 * opts: bottom (seat at the bottom), seat (the seat whose view this is, or null),
 * hand (cards to show for opts.seat instead of the state's), playable (cards to mark),
 * onCard(card) (click handler for opts.seat's cards), onStock().
 */
function renderTable(root, events, state, opts) {
  opts = opts || {};
  const header = events[0];
  const n = state.n;
  const bottom = opts.bottom === undefined || opts.bottom === null ? 0 : opts.bottom;
  root.textContent = "";
  root.className = "table seats-" + n;
  const felt = el("div", "felt");
  root.appendChild(felt);

  const center = el("div", "center");
  const info = el("div", "round-info", state.round ? "Round " + state.round : "Before the deal");
  center.appendChild(info);
  const piles = el("div", "piles");
  const stock = el("div", "stock");
  stock.title = "stock";
  const stockCard = cardEl(null, "stock-card");
  if (!state.stock) stockCard.classList.add("empty");
  stock.appendChild(stockCard);
  stock.appendChild(el("div", "count", state.stock + " in stock"));
  stock.dataset.stock = String(state.stock);
  if (opts.onStock) { stock.classList.add("clickable"); stock.addEventListener("click", opts.onStock); }
  piles.appendChild(stock);
  const pile = el("div", "pile");
  const fan = el("div", "fan");
  const shown = state.pile.slice(-4);
  shown.forEach((c, i) => {
    const e = cardEl(c, i === shown.length - 1 ? "top" : "under");
    e.style.setProperty("--i", String(i - shown.length + 1));
    fan.appendChild(e);
  });
  if (!shown.length) fan.appendChild(el("div", "card slot"));
  pile.appendChild(fan);
  pile.appendChild(el("div", "count", state.pileCount + " on the pile"));
  if (shown.length) pile.dataset.top = shown[shown.length - 1];
  piles.appendChild(pile);
  center.appendChild(piles);
  if (state.suit) {
    const s = el("div", "ordered suit-" + state.suit + (state.suit === "h" || state.suit === "d" ? " red" : ""));
    s.appendChild(el("span", "pip", SUIT_SYMBOLS[state.suit]));
    s.appendChild(el("span", "", " " + SUIT_NAMES[state.suit] + " ordered"));
    s.dataset.suit = state.suit;
    center.appendChild(s);
  }
  felt.appendChild(center);

  for (let s = 0; s < n; s++) {
    const pos = seatPosition(s, n, bottom);
    const panel = el("section", "seat");
    panel.style.left = pos.x + "%";
    panel.style.top = pos.y + "%";
    panel.dataset.seatPanel = String(s);
    if (pos.y < 45) panel.classList.add("upper");  // speech bubbles open downwards, into the table
    if (state.mover === s) panel.classList.add("moving");
    if (opts.seat === s) panel.classList.add("you");
    if (state.end && state.end.losers && state.end.losers.indexOf(s) >= 0) panel.classList.add("loser");
    const head = el("div", "seat-head");
    const p = (header.players || [])[s] || {};
    const name = el("span", "name", p.name || "seat " + s);
    name.title = p.bot || "";
    head.appendChild(name);
    const score = el("span", "score", String(state.scores[s]));
    score.dataset.seat = String(s);
    score.dataset.score = String(state.scores[s]);
    score.title = "score (penalty points)";
    head.appendChild(score);
    panel.appendChild(head);

    const hand = opts.seat === s && opts.hand ? opts.hand : state.hands[s];
    const cards = el("div", "hand");
    const count = Array.isArray(hand) ? hand.length : hand;
    cards.style.setProperty("--count", String(Math.max(count, 1)));
    if (Array.isArray(hand)) {
      hand.forEach((c) => {
        const e = cardEl(c);
        if (opts.playable && opts.seat === s) {
          if (opts.playable.indexOf(c) >= 0) e.classList.add("playable");
          if (opts.onCard) { e.classList.add("clickable"); e.addEventListener("click", () => opts.onCard(c)); }
        }
        cards.appendChild(e);
      });
    } else {
      for (let i = 0; i < Math.min(count, 12); i++) cards.appendChild(cardEl(null, "small"));
    }
    panel.appendChild(cards);
    const meta = el("div", "seat-meta");
    meta.appendChild(el("span", "seatno", "seat " + s));  // below the name, which it never cuts ("#s" beside it read as part of "bot#v5")
    meta.appendChild(el("span", "cards-count", count + (count === 1 ? " card" : " cards")));
    if (state.skips[s]) meta.appendChild(el("span", "badge skip", "loses " + state.skips[s] + (state.skips[s] === 1 ? " turn" : " turns")));
    if (state.faults[s].length) {
      const f = el("span", "badge fault", state.faults[s].length + (state.faults[s].length === 1 ? " fault" : " faults"));
      f.title = state.faults[s].map((x) => x.kind + (x.detail ? ": " + x.detail : "")).join("\n");
      meta.appendChild(f);
    }
    if (state.roundResult && state.roundResult.burned && state.roundResult.burned.indexOf(s) >= 0)
      meta.appendChild(el("span", "badge burn", "burned to 0"));
    if (state.end) meta.appendChild(el("span", "badge place", "place " + state.end.places[s]));
    panel.appendChild(meta);
    (state.flash[s] || []).forEach((f) => panel.appendChild(el("div", "flash " + f.kind, f.text)));
    const say = state.says[s];
    if (say && state.step - say.step < 24) panel.appendChild(el("div", "bubble", say.text));
    felt.appendChild(panel);
  }
  if (state.roundResult || state.end) felt.appendChild(resultBox(header, state));
  root.querySelectorAll(".hand").forEach(layoutHand);
  makeRoom(root);
}

/** The table keeps room below it for its own seat's panel when that seat's hand took more rows than
 * the felt holds (the panel would run over what follows the table). */
function makeRoom(root) {
  root.style.marginBottom = "";
  const you = root.querySelector(".seat.you");
  if (!you || getComputedStyle(you).position !== "absolute") return;
  const over = you.getBoundingClientRect().bottom - root.getBoundingClientRect().bottom;
  if (over > 0) root.style.marginBottom = Math.ceil(over + 8) + "px";
}

/** Fit a hand's cards to its width. Another seat's face-up cards overlap, each showing a strip of at
 * least 14px; the seat's own hand (.seat.you: the cards a person plays) never overlaps, so every rank
 * and every playable outline shows: a hand wider than its seat goes on in more rows. */
function layoutHand(hand) {
  const cards = Array.from(hand.querySelectorAll(".card:not(.small)"));
  if (cards.length < 2) return;
  const style = getComputedStyle(hand);
  const width = hand.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight) - 1;
  const cw = cards[0].offsetWidth;
  if (width <= 0 || !cw) return;
  const own = !!hand.closest(".seat.you");
  const strip = own ? cw + 2 : 14;
  const perRow = Math.max(1, Math.min(cards.length, Math.floor((width - cw) / strip) + 1));
  const inRow = Math.min(cards.length, perRow);
  const step = Math.min(cw + (own ? 2 : 4), (width - cw) / Math.max(1, inRow - 1));
  cards.forEach((c, i) => { c.style.marginLeft = i % perRow === 0 ? "0" : (step - cw - 0.01) + "px"; });
}

function resultBox(header, state) {
  const box = el("div", "result");
  const r = state.roundResult;
  const n = state.n;
  if (state.end) box.appendChild(el("h3", "", "Game over after " + state.end.rounds +
    (state.end.rounds === 1 ? " round" : " rounds")));
  else if (r) box.appendChild(el("h3", "", "Round " + r.round + ": " + (r.winner === null || r.winner === undefined ?
    "nobody went out" : (header.players[r.winner] || {}).name + " went out")));
  const t = el("table");
  const hr = el("tr");
  ["", state.end ? "place" : "points", "score"].forEach((h) => hr.appendChild(el("th", "", h)));
  t.appendChild(hr);
  const order = [...Array(n).keys()];
  if (state.end) order.sort((a, b) => state.end.places[a] - state.end.places[b] || a - b);
  order.forEach((s) => {
    const tr = el("tr");
    tr.appendChild(el("td", "", who(header, s)));
    tr.appendChild(el("td", "num", state.end ? String(state.end.places[s]) : (r ? "+" + r.points[s] : "")));
    tr.appendChild(el("td", "num", String(state.scores[s]) +
      (r && r.burned && r.burned.indexOf(s) >= 0 ? " (burned)" : "") +
      (state.end && state.end.losers.indexOf(s) >= 0 ? " (over)" : "")));
    t.appendChild(tr);
  });
  box.appendChild(t);
  return box;
}
