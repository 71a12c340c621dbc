// How a node bot's errors are told (docs/protocol.md, "Faults"): one line that names the author's
// file and line, `TypeError: x is not a function (mybot.js:37)`, never the shim's, mootools' or node's.
// Staged beside every node bot with BOT_FILE set to the author's file name; preloaded for a program
// (`node -r ./errors.js bot.js`) and required by the 2012 shim, which uses describe() for its faults.
"use strict";
const path = require("path");
const url = require("url");

const BOT_FILE = /* BOT_FILE */ "bot.js";
const STAGED = path.resolve("bot.js"); // the bot's file as node names it in a program's stack frames
const STAGED_URL = url.pathToFileURL(STAGED).href; // ... and in a module's
Error.stackTraceLimit = Math.max(Error.stackTraceLimit, 40); // room for the frames between a throw and the bot's

const clip = (text, n) => (text.length > n ? text.slice(0, n - 3) + "..." : text);
const FRAME = [/\(([^()]*):(\d+):\d+\)$/, /^at (?:async )?([^()\s]+):(\d+):\d+$/];

/** `NAME:LINE` of the first frame of `stack` in the bot's own file, or "". */
function locate(stack) {
  const lines = String(stack).split("\n", 80);
  const head = /^(.*):(\d+)$/.exec(lines[0]); // a SyntaxError's first line: where it is
  if (head && (head[1] === BOT_FILE || head[1] === STAGED)) return `${BOT_FILE}:${head[2]}`;
  for (const raw of lines.slice(1)) {
    const line = raw.trim();
    for (const re of FRAME) {
      const m = re.exec(line);
      if (m && (m[1] === BOT_FILE || m[1] === STAGED || m[1] === STAGED_URL)) return `${BOT_FILE}:${m[2]}`;
    }
  }
  return "";
}

/** One line for a thrown value: its name and message, and where in the bot's file it was thrown. Never throws. */
function describe(error) {
  let text;
  try {
    text = error instanceof Error ? `${error.name}: ${error.message}` : `threw ${JSON.stringify(error) ?? String(error)}`;
  } catch (_) {
    text = "threw a value that cannot be shown";
  }
  let where = "";
  try {
    where = locate(error && error.stack);
  } catch (_) {
    where = "";
  }
  text = clip(text.replace(/\s+/g, " ").trim(), 260);
  return where ? `${text} (${where})` : text;
}

// An uncaught error ends the program as node would (status 1), told in one line: the crash's detail is
// the program's last line of standard error. A program with its own handler keeps it.
process.on("uncaughtExceptionMonitor", (error) => {
  if (process.listenerCount("uncaughtException") > 0 || process.hasUncaughtExceptionCaptureCallback()) return;
  try {
    process.stderr.write(describe(error) + "\n");
  } finally {
    process.exit(1);
  }
});

module.exports = { BOT_FILE, describe };
