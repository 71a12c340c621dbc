// expect: clean
// check: no-files
const rl = require("readline").createInterface({ input: process.stdin });
const send = (o) => process.stdout.write(JSON.stringify(o) + "\n");
const fs = require("fs");
let view; function act(){ if (view.puttable.length) send({action:"put",card:view.puttable[0],suit:null}); else if (!view.can_finish && view.can_draw) send({action:"draw"}); else send({action:"finish"}); }
const tried = [];
for (const p of ["/tmp/arena-escape-js", "escape.txt", "/dev/shm/arena-escape-js", process.env.HOME + "/arena-escape-js"]) { try { fs.writeFileSync(p, "x"); tried.push("wrote " + p); } catch (e) { tried.push(e.code); } }
rl.on("line", (l) => { const m = JSON.parse(l); if (m.type === "start_game") send({type: "ready"}); else if (m.type === "move") { view = m.view; send({action: "say", text: tried.join(",")}); act(); } else if (m.type === "ok") { view = m.view; act(); } else if (m.type === "error") send({action: "finish"}); });
