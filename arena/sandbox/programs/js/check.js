// The syntax check of a node bot, before any game (docs/protocol.md): bot.js is compiled as it will
// run, never run. `node --experimental-vm-modules check.js script` compiles it as the 2012 shim runs
// it (a script); `... check.js program` as node runs a program (CommonJS, or an ES module when only
// a module compiles: node 20's module detection). A syntax error is left uncaught, so node prints
// it as it would (`bot.js:LINE`, the line, a caret under the column, `SyntaxError: ...`) and exits
// with status 1; the referee reads that. Exit 0: it compiles.
"use strict";
const fs = require("fs");
const vm = require("vm");

const source = fs.readFileSync("bot.js", "utf8");
if (process.argv[2] === "script") {
  new vm.Script(source, { filename: "bot.js" });
} else {
  try {
    vm.compileFunction(source, ["exports", "require", "module", "__filename", "__dirname"], { filename: "bot.js" });
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error;
    new vm.SourceTextModule(source, { identifier: "bot.js" });
  }
}
