// expect: memory
const rl = require("readline").createInterface({ input: process.stdin });
const send = (o) => process.stdout.write(JSON.stringify(o) + "\n");
const hoard = [];
rl.on("line", (l) => { const m = JSON.parse(l); if (m.type === "start_game") send({type: "ready"}); else if (m.type === "move") { for (;;) hoard.push(new Array(1e6).fill(hoard.length)); } });
