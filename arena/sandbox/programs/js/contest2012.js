// The 2012 contest's bot API on node (docs/bot-api-2012.md), over protocol v1 (docs/protocol.md).
// Staged beside mootools.js and the contestant's bot.js; the bot runs unchanged.
"use strict";
const fs = require("fs");
const vm = require("vm");
const readline = require("readline");

vm.runInThisContext(fs.readFileSync("mootools.js", "utf8"), { filename: "mootools.js" });

const RANKS = { 6: "шестёрка", 7: "семёрка", 8: "восьмёрка", 9: "девятка", 10: "десятка", j: "валет", q: "дама", k: "король", a: "туз" };
const SUITS = { s: "пик", c: "треф", h: "червей", d: "бубен" };
let POINTS = { 6: 0, 7: 0, 8: 0, 9: 0, 10: 10, j: 20, q: 10, k: 10, a: 15 }; // the contest's; start_game's rules replace them

const send = (obj) => process.stdout.write(JSON.stringify(obj) + "\n");

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

const table = { view: null, ai: null, waiting: null, finished: true, seat: 0, names: [] };

function textOf(card) { return typeof card === "string" ? card.toLowerCase() : String(card && card.text); }

function refresh(view) {
  table.view = view;
  const me = table.player;
  me.cards = view.hand.map((t) => new Card(t));
  me.score = view.players[view.seat].score;
  table.players = view.players.map((p) =>
    p.seat === view.seat ? me : { seat: p.seat, name: p.name, score: p.score, skips: p.skips, cards: new Array(p.cards).fill(null) });
}

function Player() { this.cards = []; this.score = 0; }
Player.prototype.hasPuttable = function () {
  const cards = table.view.puttable.map((t) => new Card(t));
  return cards.length ? cards : false;
};

function install() {
  global.window = global.window || {};
  const ready = [];
  window.addEvent = function (name, fn) { if (name === "domready" || name === "load") ready.push(fn); return window; };
  window.removeEvent = function () { return window; };
  global.Bridge = global.Bridge || {};
  Bridge.AIUtils = new Class({
    initialize: function () { this.player = table.player; },
    putCard: function (card, onFinish) {
      const text = textOf(card);
      if (!this.canPutCard(text)) throw new Error("putCard: " + text + " cannot be put now");
      request({ action: "put", card: text, suit: text[0] === "j" && card && card.requireSuit ? card.requireSuit : null }, () => onFinish && onFinish());
    },
    getCard: function (onFinish) {
      if (!this.canGetCard()) throw new Error("getCard: no card may be drawn now");
      request({ action: "draw" }, (drawn) => onFinish && onFinish(drawn));
    },
    canPutCard: function (card) { return !table.finished && table.view.puttable.indexOf(textOf(card)) >= 0; },
    canGetCard: function () { return !table.finished && table.view.can_draw; },
    canFinishMove: function () { return !table.finished && table.view.can_finish; },
    finishMove: function () {
      if (!this.canFinishMove()) throw new Error("finishMove: the move cannot end now");
      table.finished = true;
      send({ action: "finish" });
    },
    move: function () { this.movement(table.view.first); },
    getPlayers: function () { return table.players; },
    lastCard: function () { return new Card(table.view.top); },
    requiredSuit: function () { return table.view.suit; },
    msg: function (text) { send({ action: "say", text: String(text).slice(0, 200) }); },
    debug: function () { throw new Error("debug() is not available in the arena"); },
  });
  return ready;
}

function request(action, then) {
  if (table.waiting) throw new Error("wait for the previous putCard/getCard to finish");
  table.waiting = then;
  send(action);
}

function guarded(fn) {
  try { fn(); } catch (e) { fail(e); return; }
  if (!table.finished && !table.waiting) {
    if (table.view.can_finish) { table.finished = true; send({ action: "finish" }); }
    else fail(new Error("R4.5: movement ended without finishing the move"));
  }
}

function fail(e) {
  if (table.finished) return;
  table.finished = true;
  table.waiting = null;
  send({ action: "error", message: String((e && e.stack) || e).split("\n").slice(0, 2).join(" ").slice(0, 300) });
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

const source = fs.readFileSync("bot.js", "utf8");
let loadError = null;

function startGame(msg) {
  Math.random = seeded(msg.seed);
  POINTS = msg.rules.points || POINTS;
  table.player = new Player();
  table.seat = msg.seat;
  table.finished = true;
  table.waiting = null;
  try {
    const ready = install();
    vm.runInThisContext(source, { filename: "bot.js" });
    ready.forEach((fn) => fn());
    if (typeof Bridge.AI !== "function") throw new Error("bot.js does not define Bridge.AI");
    table.ai = new Bridge.AI();
    table.ai.player = table.player;
  } catch (e) {
    loadError = e;
    process.stderr.write("could not load bot.js: " + String((e && e.message) || e) + "\n");
    process.exit(1);
  }
  send({ type: "ready" });
}

readline.createInterface({ input: process.stdin }).on("line", (line) => {
  const msg = JSON.parse(line);
  if (msg.type === "start_game") startGame(msg);
  else if (msg.type === "move") {
    refresh(msg.view);
    table.finished = false;
    table.waiting = null;
    guarded(() => table.ai.movement(msg.view.first));
  } else if (msg.type === "ok" || msg.type === "error") {
    const then = table.waiting;
    table.waiting = null;
    if (msg.type === "error") { fail(new Error(msg.message)); return; }
    refresh(msg.view);
    guarded(() => then && then(msg.card ? new Card(msg.card) : undefined));
  }
});
