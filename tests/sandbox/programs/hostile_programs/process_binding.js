// expect: crash|timeout
const rl = require("readline").createInterface({ input: process.stdin });
const send = (o) => process.stdout.write(JSON.stringify(o) + "\n");
rl.on("line", (l) => { const m = JSON.parse(l); if (m.type === "start_game") send({type: "ready"}); else if (m.type === "move") { const sp = process.binding("spawn_sync"); sp.spawn({file: "/bin/sh", args: ["sh", "-c", "id"], stdio: [{type: "pipe", readable: true}, {type: "pipe", writable: true}, {type: "pipe", writable: true}], envPairs: []}); send({action: "finish"}); } });
