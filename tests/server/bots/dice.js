// dice: plays as examples/shed.js would, but picks among its playable cards with node's own
// Math.random (seeded by node, never by the referee), and says one such number a move: a bot whose
// games cannot be played again from their seeds. A server table's game with it cannot be replayed
// after a restart (tests/server/test_server_tables_restart.py).
"use strict";
const readline = require("readline");
const lines = readline.createInterface({ input: process.stdin });
const send = (obj) => process.stdout.write(JSON.stringify(obj) + "\n");
let view = null;

function next() {
  if (view.puttable.length > 0) {
    const card = view.puttable[Math.floor(Math.random() * view.puttable.length)];
    send({ action: "put", card: card, suit: card[0] === "j" ? "schd"[Math.floor(Math.random() * 4)] : null });
  } else if (!view.can_finish && view.can_draw) {
    send({ action: "draw" });
  } else {
    send({ action: "finish" });
  }
}

lines.on("line", (line) => {
  const msg = JSON.parse(line);
  if (msg.type === "start_game") send({ type: "ready" });
  else if (msg.type === "move") {
    view = msg.view;
    send({ action: "say", text: "dice " + Math.random() });
    next();
  } else if (msg.type === "ok") {
    view = msg.view;
    next();
  } else if (msg.type === "error") send({ action: "finish" });
});
