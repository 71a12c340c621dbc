// expect: crash
const rl = require("readline").createInterface({ input: process.stdin });
const send = (o) => process.stdout.write(JSON.stringify(o) + "\n");
let view; function act(){ if (view.puttable.length) send({action:"put",card:view.puttable[0],suit:null}); else if (!view.can_finish && view.can_draw) send({action:"draw"}); else send({action:"finish"}); }
rl.on("line", (l) => { const m = JSON.parse(l); if (m.type === "start_game") send({type: "ready"}); else if (m.type === "move") { view = m.view; act(); } else if (m.type === "ok") { view = m.view; act(); } else if (m.type === "error") send({action: "finish"}); if (m.type === "move" || m.type === "ok") send({action: "say", text: "late"}); });
