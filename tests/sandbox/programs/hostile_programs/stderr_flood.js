// expect: clean
// Writes 384 KiB to stderr every move (a chatty debugger): read after each turn, it never
// blocks the program, and nobody but a crash's detail sees it.
const rl = require("readline").createInterface({ input: process.stdin });
const send = (o) => process.stdout.write(JSON.stringify(o) + "\n");
const noise = "debug ".repeat(1 << 16) + "\n";  // 384 KiB
let view;
function act() { if (view.puttable.length) send({ action: "put", card: view.puttable[0], suit: null }); else if (!view.can_finish && view.can_draw) send({ action: "draw" }); else send({ action: "finish" }); }
rl.on("line", (l) => {
  const m = JSON.parse(l);
  if (m.type === "start_game") send({ type: "ready" });
  else if (m.type === "move") { view = m.view; process.stderr.write(noise); act(); }
  else if (m.type === "ok") { view = m.view; act(); }
  else if (m.type === "error") send({ action: "finish" });
});
