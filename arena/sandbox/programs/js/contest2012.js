// The 2012 contest's bot API on node (docs/bot-api-2012.md), over protocol v1 (docs/protocol.md).
// Staged as shim.js beside mootools.js (MooTools Core 1.5.2), errors.js and the contestant's bot.js,
// which runs unchanged: compiled once under its author's file name, so a fault cites its own line.
//
// The API is the announcement's listing (docs/bot-api-2012.md): every move the controller calls
// `movement(first)` and waits for `finishMove()`. Its calls are asynchronous: `putCard(card, onFinish)`
// and `getCard(onFinish)` send an action and return; the referee's answer runs `onFinish`, on a fresh
// stack (a long chain of draws never deepens it). The bot's timers (`setTimeout`, MooTools' `delay`
// and `periodical`) run on a virtual clock, in order, once the code before them and any answer it
// waits for are done, without waiting for real time: a move replays exactly. When nothing is left to
// run the move is over: finished if it may finish, else an `exception` fault. Timers still pending
// when a move ends are dropped: a bot acts only in its own move.
"use strict";
const fs = require("fs");
const vm = require("vm");
const readline = require("readline");
const { BOT_FILE, describe } = require("./errors.js");

const later = setImmediate; // the shim's own scheduling (the bot's timers are the virtual ones below)
// The browser's console, for a 2012 bot's debugging lines: to standard error, its author's output of
// the game (standard output is the referee's wire: a line there would be a protocol violation).
global.console = new console.Console({ stdout: process.stderr, stderr: process.stderr });
vm.runInThisContext(fs.readFileSync("mootools.js", "utf8"), { filename: "mootools.js" });
const script = new vm.Script(fs.readFileSync("bot.js", "utf8"), { filename: BOT_FILE });

const RANKS = { 6: "шестёрка", 7: "семёрка", 8: "восьмёрка", 9: "девятка", 10: "десятка", j: "валет", q: "дама", k: "король", a: "туз" };
const SUITS = { s: "пик", c: "треф", h: "червей", d: "бубен" };
let POINTS = { 6: 0, 7: 0, 8: 0, 9: 0, 10: 10, j: 20, q: 10, k: 10, a: 15 }; // the contest's; start_game's rules replace them
const SAYS_PER_MOVE = 20; // what the referee keeps of a move's says (docs/protocol.md)

const send = (obj) => process.stdout.write(JSON.stringify(obj) + "\n");

// -- cards and players -----------------------------------------------------------------------------

function Card(text) {
  this.text = text;
  this.rank = text.slice(0, -1);
  this.suit = text.slice(-1);
  this.requireSuit = null;
}
Card.prototype.getValue = function () { return POINTS[this.rank]; };
Card.prototype.getName = function () { return RANKS[this.rank] + " " + SUITS[this.suit]; };
Card.prototype.setRequireSuit = function (suit) { this.requireSuit = suit; return this; };
Card.prototype.getRequireSuit = function () { return this.requireSuit; };
Card.prototype.toString = function () { return this.text; };

/** A card's text from what the bot passes: a Card, a card-like object, or a text ("10h"). */
function textOf(card) {
  if (typeof card === "string") return card.trim().toLowerCase();
  if (card && typeof card === "object") {
    if (typeof card.text === "string") return card.text;
    if (card.rank != null && card.suit != null) return String(card.rank) + String(card.suit);
  }
  return null;
}

function Player(seat, name) { this.seat = seat; this.name = name; this.cards = []; this.score = 0; this.skips = 0; }
/** One card that may be put now, chosen with the bot's own (seeded) Math.random, or null. */
Player.prototype.hasPuttable = function () {
  const puttable = table.view && !table.finished ? table.view.puttable : [];
  if (!puttable.length) return null;
  let i = Math.floor(Math.random() * puttable.length);
  if (!(i >= 0 && i < puttable.length)) i = 0; // a Math.random the bot replaced with something odd
  return cardOf(puttable[i]);
};
/** The penalty points of the cards in hand, under the rules in force. */
Player.prototype.sumCards = function () { return this.cards.reduce((sum, card) => sum + card.getValue(), 0); };

const table = {
  view: null, // the referee's view of the move in progress (docs/protocol.md)
  ai: null,
  player: null,
  players: [],
  finished: true, // no move in progress: nothing may be put, drawn or said
  waiting: null, // what to run when the referee answers the put or draw in flight
  said: 0,
};

/** The hand's Card for `text` (the same object every time while it stays in the hand). */
function cardOf(text) { return table.player.cards.find((c) => c.text === text) || new Card(text); }

function refresh(view) {
  table.view = view;
  const me = table.player;
  const kept = new Map(me.cards.map((c) => [c.text, c]));
  me.cards.length = 0;
  for (const text of view.hand) me.cards.push(kept.get(text) || new Card(text));
  const mine = view.players[view.seat];
  me.score = mine.score;
  me.skips = mine.skips;
  table.players = view.players.map((p) =>
    p.seat === view.seat ? me : { seat: p.seat, name: p.name, score: p.score, skips: p.skips, cards: new Array(p.cards).fill(null) });
}

// -- the bot's timers: a virtual clock, run between the bot's steps ----------------------------------

const timers = new Map();
let clock = 0, made = 0;
function addTimer(fn, delay, args, repeat) {
  if (typeof fn !== "function") throw new TypeError("a timer runs a function (code in a string is not run here)");
  const ms = Math.max(0, Number(delay) || 0);
  const id = ++made;
  timers.set(id, { id, fn, args, due: clock + ms, order: id, every: repeat ? Math.max(1, ms) : 0 });
  return id;
}
function nextTimer() {
  let next = null;
  for (const t of timers.values()) if (!next || t.due < next.due || (t.due === next.due && t.order < next.order)) next = t;
  if (next === null) return null;
  clock = next.due;
  if (next.every) { next.due += next.every; next.order = ++made; } else timers.delete(next.id);
  return next;
}
global.setTimeout = (fn, delay, ...args) => addTimer(fn, delay, args, false);
global.setInterval = (fn, delay, ...args) => addTimer(fn, delay, args, true);
global.setImmediate = (fn, ...args) => addTimer(fn, 0, args, false);
global.clearTimeout = global.clearInterval = global.clearImmediate = (id) => { timers.delete(id); };

// -- a move: the bot's steps until it finishes -------------------------------------------------------

let settling = false;
/** Run one piece of the bot's code; once it (and the promises it made) ran, see what the move needs. */
function step(fn) {
  try { fn(); } catch (e) { fail(e); return; }
  if (!settling && !table.finished && !table.waiting) { settling = true; later(settle); } // else: nothing to settle
}
function settle() {
  settling = false;
  if (table.finished || table.waiting) return; // over, or a put or draw is on its way: its answer goes on
  const timer = nextTimer();
  if (timer) { step(() => timer.fn.apply(global, timer.args)); return; }
  if (table.view.can_finish) end({ action: "finish" }); // as returning from a Python bot's move
  else fail(new Error("the move cannot finish yet (canFinishMove() is false), and nothing of the bot is left to run: no onFinish, no timer"));
}
function end(action) {
  table.finished = true;
  table.waiting = null;
  timers.clear();
  send(action);
}
function fail(error) {
  if (table.finished) { // after the move: nobody to tell but standard error (a line now would be out of turn)
    process.stderr.write("after the move ended: " + describe(error) + "\n");
    return;
  }
  end({ action: "error", message: describe(error) });
}
/** Whether no card is left to draw anywhere: the stock is empty and the pile holds only its top
 * (R7.2). A getCard() then does not throw: the draw does not happen, and onFinish gets null. */
function noCardLeft() {
  const held = table.view.players.reduce((sum, p) => sum + p.cards, 0);
  return table.view.stock === 0 && 36 - held - 1 <= 0;
}
function inMove(what) {
  if (table.finished) throw new Error(what + ": it is not your move (it ended, or has not begun)");
  if (table.waiting) throw new Error(what + ": the previous putCard or getCard has not finished; go on in its onFinish");
}
function request(action, then) {
  table.waiting = then;
  send(action);
}
function answered(msg) {
  const then = table.waiting;
  if (then === null) return;
  table.waiting = null;
  if (msg.type === "error") { fail(new Error(msg.message)); return; } // refused by the referee (the checks above make it rare)
  refresh(msg.view);
  step(() => then(msg.card));
}

// -- the API (docs/bot-api-2012.md) ------------------------------------------------------------------

function install() {
  global.window = global; // as in a browser: window is the global object
  const ready = [];
  window.addEvent = function (name, fn) { if ((name === "domready" || name === "load") && typeof fn === "function") ready.push(fn); return window; };
  window.removeEvent = function () { return window; };
  global.Bridge = global.Bridge || {};
  Bridge.AIUtils = new Class({
    initialize: function (player) { this.player = player || table.player; },
    putCard: function (card, onFinish) {
      inMove("putCard");
      const text = textOf(card);
      if (text === null) throw new TypeError("putCard: " + String(card) + " is not a card");
      const view = table.view;
      if (view.puttable.indexOf(text) < 0) {
        const why = view.hand.indexOf(text) < 0 ? "it is not in your hand" : "it does not follow " + view.top + " now";
        throw new Error("putCard: " + text + " cannot be put: " + why + " (puttable: " + (view.puttable.join(" ") || "none") + ")");
      }
      let suit = null;
      if (text[0] === "j" && card && typeof card === "object" && card.requireSuit != null) {
        suit = String(card.requireSuit);
        if (!Object.prototype.hasOwnProperty.call(SUITS, suit)) throw new Error("putCard: a jack orders s, c, h or d, not " + JSON.stringify(suit));
      }
      request({ action: "put", card: text, suit }, () => { if (typeof onFinish === "function") onFinish(); });
    },
    getCard: function (onFinish) {
      inMove("getCard");
      const then = (drawn) => { if (typeof onFinish === "function") onFinish(drawn); };
      if (table.view.can_draw) request({ action: "draw" }, (drawn) => then(cardOf(drawn)));
      else if (noCardLeft()) { table.waiting = () => then(null); later(answered, { type: "ok", view: table.view }); }
      else throw new Error("getCard: no card may be drawn now (canGetCard() is false)");
    },
    canPutCard: function (card) { return !table.finished && !table.waiting && table.view.puttable.indexOf(textOf(card)) >= 0; },
    canGetCard: function () { return !table.finished && !table.waiting && table.view.can_draw; },
    canFinishMove: function () { return !table.finished && !table.waiting && table.view.can_finish; },
    finishMove: function () {
      inMove("finishMove");
      if (!table.view.can_finish) throw new Error("finishMove: the move cannot end now (canFinishMove() is false)");
      end({ action: "finish" });
    },
    move: function () { this.movement(false); }, // the move's logic again, never as its first call
    getPlayers: function () { return table.players; },
    lastCard: function () {
      const top = table.view ? new Card(table.view.top) : null;
      if (top && top.rank === "j") top.requireSuit = table.view.suit;
      return top;
    },
    requiredSuit: function () { return table.view ? table.view.suit : null; },
    msg: function (text) { // public: the game's log shows it to every seat, as turn.say
      if (!table.finished && table.said < SAYS_PER_MOVE) {
        table.said += 1;
        send({ action: "say", text: String(text).slice(0, 200) });
      }
      return this;
    },
    debug: function () { throw new Error("debug() opens every hand, for debugging only: remove the call to play"); },
  });
  return ready;
}

function seeded(seed) {  // Math.random from the game's seed (mulberry32)
  let a = Number(BigInt.asUintN(32, BigInt(seed)));
  return function () {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function startGame(msg) {
  Math.random = seeded(msg.seed);
  POINTS = msg.rules.points || POINTS;
  table.player = new Player(msg.seat, msg.players[msg.seat]);
  table.players = msg.players.map((name, seat) => seat === msg.seat ? table.player : { seat, name, score: 0, skips: 0, cards: [] });
  table.view = null;
  table.finished = true;
  table.waiting = null;
  timers.clear();
  try {
    const ready = install();
    script.runInThisContext();
    ready.forEach((fn) => fn());
    if (typeof Bridge.AI !== "function") throw new Error(BOT_FILE + " does not define Bridge.AI");
    table.ai = new Bridge.AI(table.player);
    if (!table.ai.player) table.ai.player = table.player;
  } catch (e) {
    process.stderr.write("could not load " + BOT_FILE + ": " + describe(e) + "\n");
    process.exit(1);
  }
  send({ type: "ready" });
}

function beginMove(view) {
  table.finished = false;
  table.waiting = null;
  table.said = 0;
  refresh(view);
  step(() => table.ai.movement(view.first === true)); // `first`: the round's first move, this call only
}

readline.createInterface({ input: process.stdin }).on("line", (line) => {
  const msg = JSON.parse(line);
  if (msg.type === "start_game") startGame(msg);
  else if (msg.type === "move") beginMove(msg.view);
  else if (msg.type === "ok" || msg.type === "error") answered(msg);
  // end_round and end_game: the 2012 API has no such notifications
});
