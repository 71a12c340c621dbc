// expect: crash
// check: protocol
// Valid samples first, then a simulate past the bounds (4097 worlds of one plan): a protocol violation.
const rl = require("readline").createInterface({ input: process.stdin });
const send = (o) => process.stdout.write(JSON.stringify(o) + "\n");
let asked = 0;
rl.on("line", (l) => {
  const m = JSON.parse(l);
  if (m.type === "start_game") send({ type: "ready" });
  else if (m.type === "move" || m.type === "sampled") {
    if (m.type === "sampled" && (m.hands.length !== 3 || typeof m.stock[0] !== "string")) send({ action: "say", text: "BAD SAMPLE" });
    if (asked++ < 3) send({ action: "sample", seed: asked });
    else send({ action: "simulate", seed: 1, worlds: 4097, plans: [[]] });
  }
});
