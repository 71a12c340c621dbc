// expect: crash
// check: protocol
// A sample with a seed that is not an integer, then (were it answered) a simulate whose plan is
// not a list of actions: protocol violations, as for any malformed line.
const rl = require("readline").createInterface({ input: process.stdin });
const send = (o) => process.stdout.write(JSON.stringify(o) + "\n");
rl.on("line", (l) => { const m = JSON.parse(l); if (m.type === "start_game") send({ type: "ready" }); else if (m.type === "move") { send({ action: "sample", seed: 1.5 }); send({ action: "simulate", seed: 1, worlds: 1, plans: [["put", "9h"]] }); } });
