// expect: timeout|clean
const rl = require("readline").createInterface({ input: process.stdin });
const send = (o) => process.stdout.write(JSON.stringify(o) + "\n");
const { Worker } = require("worker_threads");
let view; function act(){ if (view.puttable.length) send({action:"put",card:view.puttable[0],suit:null}); else if (!view.can_finish && view.can_draw) send({action:"draw"}); else send({action:"finish"}); }
let started = false;
rl.on("line", (l) => { const m = JSON.parse(l); if (m.type === "start_game") { if (!started) { started = true; for (let i = 0; i < 4; i++) { try { new Worker("for(;;){}", {eval: true}); } catch (e) {} } } send({type: "ready"}); } else if (m.type === "move") { view = m.view; act(); } else if (m.type === "ok") { view = m.view; act(); } else if (m.type === "error") send({action: "finish"}); });
