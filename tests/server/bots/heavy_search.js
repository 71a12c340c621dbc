// heavy_search: examples/search.js with twice its worlds, for the tests of where a table's
// referee work is done (tests/server/test_server_tables_restart.py): each decision asks the referee
// to play every candidate out in 48 sampled worlds, a few tenths of a CPU second of the referee's
// a move, within the per-move limit. Deterministic given start_game's seed.
"use strict";
const readline = require("readline");
const lines = readline.createInterface({ input: process.stdin });
const send = (obj) => process.stdout.write(JSON.stringify(obj) + "\n");
const WORLDS = 48; // worlds per request: a heavy searcher (the referee answers for it)
let seeds = 0; // the next request's seed: from the referee's seed, so a game replays the same
let view = null;
let plans = null; // the candidate plans of the decision in progress

function candidates(v) {
  const out = [];
  for (const card of v.puttable) {
    if (card[0] === "j") for (const s of "schd") out.push([["put", card, s]]);
    else out.push([["put", card, null]]);
  }
  if (v.can_draw) out.push([["draw"]]);
  if (v.can_finish) out.push([["finish"]]);
  return out;
}

function margin(result, me) {
  if (result.error !== undefined) return -1e9; // illegal in that world (not for its own cards)
  const total = (s) => result.scores[s] + (result.in_round ? result.points[s] : 0);
  let others = 0;
  for (let s = 0; s < result.scores.length; s++) if (s !== me) others += total(s);
  return others / (result.scores.length - 1) - total(me);
}

function decide() {
  // One decision of the move: the only option, or the best of a simulate request.
  plans = candidates(view);
  if (plans.length < 2) return act(plans.length ? plans[0][0] : ["finish"]);
  seeds = (seeds + 1) % 2 ** 48;
  send({ action: "simulate", seed: seeds, worlds: WORLDS, plans: plans });
}

function chosen(results) {
  let best = 0;
  let bestValue = -Infinity;
  results.forEach((perWorld, p) => {
    const value = perWorld.reduce((sum, r) => sum + margin(r, view.seat), 0) / perWorld.length;
    if (value > bestValue) [best, bestValue] = [p, value];
  });
  act(plans[best][0]);
}

function act(action) {
  if (action[0] === "put") send({ action: "put", card: action[1], suit: action[2] });
  else send({ action: action[0] });
}

lines.on("line", (line) => {
  const msg = JSON.parse(line);
  if (msg.type === "start_game") {
    seeds = Number(BigInt(msg.seed) % 1000000007n);
    send({ type: "ready" });
  } else if (msg.type === "move") {
    view = msg.view;
    decide();
  } else if (msg.type === "simulated") chosen(msg.results);
  else if (msg.type === "ok") {
    view = msg.view;
    decide();
  } else if (msg.type === "error") send({ action: "finish" });
  // end_round and end_game need no answer
});
