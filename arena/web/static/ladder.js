// The live leaderboard: rebuilds the table's rows from each message of /ws/leaderboard.
// Text goes in through textContent only: no message can add markup.
(function () {
  "use strict";
  var body = document.getElementById("board");
  var live = document.getElementById("live");
  var total = document.getElementById("games");
  var empty = document.getElementById("empty");
  var standings = document.getElementById("standings");
  if (!body || !window.WebSocket) { return; }
  function cell(row, text, cls) {
    var td = document.createElement("td");
    td.textContent = text;
    if (cls) { td.className = cls; }
    row.appendChild(td);
    return td;
  }
  var round = document.getElementById("round");
  function show(board) {
    if (round && String(board.round) !== round.getAttribute("data-round")) { location.reload(); return; }
    var rows = document.createDocumentFragment();
    board.bots.forEach(function (b) {
      var tr = document.createElement("tr");
      tr.setAttribute("data-bot", b.bot);
      tr.setAttribute("data-rank", String(b.rank));
      if (b.house) { tr.setAttribute("data-house", "1"); }
      cell(tr, String(b.rank), "n rank");
      var name = cell(tr, "", "bot");
      var a = document.createElement("a");
      a.href = "/bots/" + encodeURIComponent(b.bot);
      a.textContent = b.bot;
      name.appendChild(a);
      if (b.field) { name.appendChild(document.createTextNode(" \u2605")); }
      var who = cell(tr, b.house ? "house bot" : b.author, "author");
      if (b.house) { who.className = "author muted house"; }
      cell(tr, "v" + b.version, "n version");
      cell(tr, b.ordinal.toFixed(2), "n rating");
      cell(tr, b.mu.toFixed(2) + " \u00b1 " + b.sigma.toFixed(2), "n mu");
      cell(tr, String(b.games), "n games");
      rows.appendChild(tr);
    });
    while (body.firstChild) { body.removeChild(body.firstChild); }
    body.appendChild(rows);
    if (empty) { empty.hidden = board.bots.length > 0; }
    if (standings) { standings.hidden = board.bots.length === 0; }
    if (total) { total.textContent = String(board.games); }
  }
  var wait = 1000;
  function connect() {
    var ws = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws/leaderboard");
    ws.onopen = function () { live.textContent = "live"; wait = 1000; };
    ws.onmessage = function (m) { show(JSON.parse(m.data)); };
    ws.onclose = function () {
      live.textContent = "reconnecting\u2026";
      setTimeout(connect, wait);
      wait = Math.min(wait * 2, 15000);
    };
  }
  connect();
})();
