// NAME: a JavaScript bot over protocol v1 (docs/protocol.md); node's standard library only.
// Puts its most expensive playable card, draws when it must, finishes when it may.
"use strict";
const readline = require("readline");
const lines = readline.createInterface({ input: process.stdin });
let POINTS = {}; // rank -> penalty points, from start_game's rules
const send = (obj) => process.stdout.write(JSON.stringify(obj) + "\n");
let view = null;

function bestSuit(hand) {
  const counts = {};
  for (const c of hand) counts[c.slice(-1)] = (counts[c.slice(-1)] || 0) + 1;
  let best = null;
  for (const s of Object.keys(counts)) if (best === null || counts[s] > counts[best]) best = s;
  return best;
}

// Searching ahead (docs/protocol.md): simulate(plans, worlds, seed) asks the referee to play each plan
// (a list of actions such as ["put", "9h", null], ["draw"], ["finish"]) in the same `worlds` worlds
// sampled from what this seat knows, then on with its heuristic to the end of the round. The answer
// comes as a "simulated" message, passed to onSimulated(results): results[plan][world] has scores,
// points, over, in_round and places (or error where the plan was illegal). The referee's CPU for it
// counts against this bot's move time. Not used below: examples/search.js shows a search.
const simulate = (plans, worlds = 24, seed = 0) => send({ action: "simulate", seed, worlds, plans });
let onSimulated = (results) => next(); // replace with your choice of action (then act)

function next() {
  // One action for the current view; the referee answers put and draw with a new view.
  if (view.puttable.length > 0) {
    const card = view.puttable.reduce((a, b) => (POINTS[b.slice(0, -1)] > POINTS[a.slice(0, -1)] ? b : a));
    const rest = view.hand.filter((c) => c !== card);
    send({ action: "put", card: card, suit: card[0] === "j" ? bestSuit(rest) : null });
  } else if (!view.can_finish && view.can_draw) {
    send({ action: "draw" });
  } else if (view.put_this_move.length === 0 && !view.first && view.can_draw && view.stock > 0 && !view.drew) {
    view.drew = true;
    send({ action: "draw" });
  } else {
    send({ action: "finish" });
  }
}

lines.on("line", (line) => {
  const msg = JSON.parse(line);
  if (msg.type === "start_game") { POINTS = msg.rules.points; send({ type: "ready" }); }
  else if (msg.type === "move") { view = msg.view; next(); }
  else if (msg.type === "ok") { const drew = view.drew; view = msg.view; view.drew = drew || "card" in msg; next(); }
  else if (msg.type === "simulated") onSimulated(msg.results);
  else if (msg.type === "error") send({ action: "finish" });
  // end_round and end_game need no answer
});
