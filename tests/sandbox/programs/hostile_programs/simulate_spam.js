// expect: timeout
// check: per-move
// Asks for the biggest simulate there is (64 plans x 64 worlds, whole games) again and again:
// the referee's work is charged to it, so it runs out of its move's CPU and is stopped.
const rl = require("readline").createInterface({ input: process.stdin });
const send = (o) => process.stdout.write(JSON.stringify(o) + "\n");
const plans = Array.from({ length: 64 }, () => []);
let seed = 0;
const ask = () => send({ action: "simulate", seed: seed++, worlds: 64, plans: plans, until: "game" });
rl.on("line", (l) => { const m = JSON.parse(l); if (m.type === "start_game") send({ type: "ready" }); else if (m.type === "move" || m.type === "simulated") ask(); });
