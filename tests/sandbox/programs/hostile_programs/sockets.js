// expect: clean
// check: no-network
const rl = require("readline").createInterface({ input: process.stdin });
const send = (o) => process.stdout.write(JSON.stringify(o) + "\n");
const net = require("net");
let view; function act(){ if (view.puttable.length) send({action:"put",card:view.puttable[0],suit:null}); else if (!view.can_finish && view.can_draw) send({action:"draw"}); else send({action:"finish"}); }
let said = "";
const port = Number(process.argv[2] || 0);
rl.on("line", (l) => { const m = JSON.parse(l); if (m.type === "start_game") { const s = net.connect({host: "127.0.0.1", port: 1}); s.on("error", (e) => { said = e.code; }); s.on("connect", () => { said = "CONNECTED"; }); send({type: "ready"}); } else if (m.type === "move") { view = m.view; send({action: "say", text: "net:" + said}); act(); } else if (m.type === "ok") { view = m.view; act(); } else if (m.type === "error") send({action: "finish"}); });
