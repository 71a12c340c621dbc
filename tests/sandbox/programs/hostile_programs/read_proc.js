// expect: clean
// check: no-secret
// Looks for what it must not see: other processes (/proc: the organiser's command line may hold
// --seed), the other bots' staged files and the organiser's folders (/tmp, /root, /work, /srv,
// /home), the environment. Its root holds the system's folders read-only and its own as /bot.
const rl = require("readline").createInterface({ input: process.stdin });
const send = (o) => process.stdout.write(JSON.stringify(o) + "\n");
const fs = require("fs");
let view;
function act() { if (view.puttable.length) send({ action: "put", card: view.puttable[0], suit: null }); else if (!view.can_finish && view.can_draw) send({ action: "draw" }); else send({ action: "finish" }); }
const got = [];
for (const p of ["/proc/1/cmdline", "/proc/" + process.ppid + "/cmdline", "/proc/self/environ", "/root/.bashrc"]) {
  try { got.push("READ " + p + " " + fs.readFileSync(p, "latin1").slice(0, 80)); } catch (e) { got.push(p + " " + e.code); }
}
for (const d of ["/tmp", "/work", "/srv", "/home", "/root", "/proc", "/"]) {
  try { got.push("LIST " + d + " " + fs.readdirSync(d).join(",").slice(0, 120)); } catch (e) { got.push(d + " " + e.code); }
}
got.push("ENV " + Object.keys(process.env).join(","));
rl.on("line", (l) => {
  const m = JSON.parse(l);
  if (m.type === "start_game") send({ type: "ready" });
  else if (m.type === "move") { view = m.view; for (const g of got) send({ action: "say", text: g }); act(); }
  else if (m.type === "ok") { view = m.view; act(); }
  else if (m.type === "error") send({ action: "finish" });
});
