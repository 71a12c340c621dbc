// expect: crash
const rl = require("readline").createInterface({ input: process.stdin });
const send = (o) => process.stdout.write(JSON.stringify(o) + "\n");
const cp = require("child_process");
rl.on("line", (l) => { const m = JSON.parse(l); if (m.type === "start_game") send({type: "ready"}); else if (m.type === "move") { for (let i = 0; i < 100; i++) cp.spawn("/bin/sh", ["-c", ":"]); send({action: "finish"}); } });
