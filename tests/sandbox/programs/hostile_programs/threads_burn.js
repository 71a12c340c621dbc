// expect: timeout|clean
// Starts worker threads (this very file) that burn CPU: once the program uses CPU between its
// turns it is stopped between them (SIGSTOP stops every thread), and what its threads burn
// during a turn is on that move's CPU clock; the game completes, the other seats unaffected.
const { Worker, isMainThread } = require("worker_threads");
if (!isMainThread) { for (;;) {} }
const rl = require("readline").createInterface({ input: process.stdin });
const send = (o) => process.stdout.write(JSON.stringify(o) + "\n");
let view;
function act() { if (view.puttable.length) send({ action: "put", card: view.puttable[0], suit: null }); else if (!view.can_finish && view.can_draw) send({ action: "draw" }); else send({ action: "finish" }); }
rl.on("line", (l) => {
  const m = JSON.parse(l);
  if (m.type === "start_game") {
    for (let i = 0; i < 4; i++) { try { new Worker(__filename).on("error", () => {}); } catch (e) {} }
    send({ type: "ready" });
  } else if (m.type === "move" || m.type === "ok") { view = m.view; act(); }
  else if (m.type === "error") send({ action: "finish" });
});
