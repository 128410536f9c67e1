// The page's two behaviours: sorting the model table (click a column
// header; the order is kept in the address as #sort=column:asc|desc, so a
// sorted view can be linked and survives a live page's reload) and drawing
// the flame graph from the JSON the generator embedded. The table and all
// figures are in the HTML already: without scripts the page still reads.
(function () {
  "use strict";

  // Three significant digits in the largest unit that keeps the figure at
  // 1 or more, as the Go side prints them.
  var units = [[1, "ns"], [1e3, "µs"], [1e6, "ms"], [1e9, "s"]];
  function round3(x) {
    if (x === 0) return 0;
    var p = Math.pow(10, 2 - Math.floor(Math.log10(x)));
    return Math.round(x * p) / p;
  }
  function sig3(x) {
    x = round3(x);
    if (x === 0) return "0";
    if (x < 10) return x.toFixed(2);
    if (x < 100) return x.toFixed(1);
    return x.toFixed(0);
  }
  function duration(ns) {
    var u = 0;
    while (u < units.length - 1 && round3(ns / units[u][0]) >= 1000) u++;
    return sig3(ns / units[u][0]) + " " + units[u][1];
  }

  // ---- sorting ----
  var table = document.getElementById("model-table");
  function sortBy(key, dir) {
    if (!table) return false;
    var heads = table.tHead.rows[0].cells, col = -1, kind = "";
    for (var i = 0; i < heads.length; i++) {
      if (heads[i].getAttribute("data-key") === key) {
        col = i;
        kind = heads[i].getAttribute("data-sort");
      }
    }
    if (col < 0 || !kind || (dir !== "asc" && dir !== "desc")) return false;
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var sign = dir === "asc" ? 1 : -1;
    rows.sort(function (a, b) {
      var x = a.cells[col].getAttribute("data-v"), y = b.cells[col].getAttribute("data-v");
      if (kind === "num") {
        x = Number(x);
        y = Number(y);
      }
      return x < y ? -sign : x > y ? sign : 0; // Array sort is stable: ties keep the model's order
    });
    for (var r = 0; r < rows.length; r++) body.appendChild(rows[r]);
    for (var h = 0; h < heads.length; h++) {
      if (h === col) heads[h].setAttribute("aria-sort", dir === "asc" ? "ascending" : "descending");
      else heads[h].removeAttribute("aria-sort");
    }
    table.setAttribute("data-sorted", key + ":" + dir);
    return true;
  }
  function sortFromAddress() {
    var m = /(?:^#|&)sort=([a-z_]+):(asc|desc)/.exec(location.hash);
    if (m) sortBy(m[1], m[2]);
  }
  if (table) {
    var heads = table.tHead.rows[0].cells;
    for (var i = 0; i < heads.length; i++) {
      if (!heads[i].getAttribute("data-sort")) continue;
      heads[i].tabIndex = 0;
      heads[i].addEventListener("click", onHeader);
      heads[i].addEventListener("keydown", function (e) {
        if (e.key === "Enter" || e.key === " ") {
          e.preventDefault();
          onHeader.call(this);
        }
      });
    }
    window.addEventListener("hashchange", sortFromAddress);
    sortFromAddress();
  }
  function onHeader() {
    var key = this.getAttribute("data-key");
    var now = this.getAttribute("aria-sort");
    // Figures first sort largest first, names A to Z; a second click turns it round.
    var dir = now === "descending" ? "asc" : now === "ascending" ? "desc" :
      this.getAttribute("data-sort") === "num" ? "desc" : "asc";
    sortBy(key, dir);
    var hash = "#sort=" + key + ":" + dir;
    if (history.replaceState) history.replaceState(null, "", hash);
    else location.hash = hash;
  }

  // ---- flame graph ----
  var graph = document.getElementById("flame-graph");
  var dataEl = document.getElementById("flame-data");
  if (graph && dataEl) {
    var raw = JSON.parse(dataEl.textContent);
    var names = raw.names, timed = raw.unit === "nanoseconds";
    // A node on the wire is [name, value, own count, own inclusive, own inherent, children].
    function build(a, parent) {
      var n = { name: names[a[0]], value: a[1], count: a[2], incl: a[3], inh: a[4], parent: parent, kids: [] };
      var ks = a[5] || [];
      for (var i = 0; i < ks.length; i++) n.kids.push(build(ks[i], n));
      return n;
    }
    var root = build(raw.root, null);
    var ROW = 18;
    var figure = function (v) { return timed ? duration(v) : String(v); };
    function color(name) {
      var pkg = name.replace(/\.[^./]*$/, ""), h = 0;
      for (var i = 0; i < pkg.length; i++) h = (h * 31 + pkg.charCodeAt(i)) >>> 0;
      return "hsl(" + (h % 50 + 8) + ",80%," + (62 + (h >> 8) % 14) + "%)";
    }
    function short(name) {
      return name.slice(name.lastIndexOf("/") + 1);
    }
    function draw(focus) {
      graph.textContent = "";
      var width = graph.clientWidth || 1000;
      var depth = 0, chain = [];
      for (var a = focus; a; a = a.parent) chain.unshift(a);
      var maxDepth = 0;
      function box(n, d, x, w, ancestor) {
        if (w < 0.0005) return;
        if (d > maxDepth) maxDepth = d;
        var b = document.createElement("div");
        b.className = ancestor ? "fl fl-up" : "fl";
        b.style.left = (x * 100) + "%";
        b.style.width = (w * 100) + "%";
        b.style.top = (d * ROW) + "px";
        if (n.parent) b.style.background = color(n.name);
        // A name that cannot be read in its box is left to the tooltip.
        if (w * width >= 36) b.textContent = n.parent ? short(n.name) : n.name + " (" + figure(n.value) + ")";
        b.setAttribute("data-name", n.name);
        b.setAttribute("data-value", n.value);
        var share = root.value > 0 ? (100 * n.value / root.value).toFixed(1) + "% of all traced" : "";
        b.title = n.name + "\n" + (timed ? "inclusive on this path: " : "value: ") + figure(n.value) + (share ? " (" + share + ")" : "") +
          (n.parent ? "\nfirings on this path: " + n.count + (timed ? ", inherent " + duration(n.inh) : "") : "") +
          "\nclick to " + (n === focus && n.parent ? "zoom out" : "zoom in");
        b.addEventListener("click", function () { draw(n === focus && n.parent ? n.parent : n); });
        graph.appendChild(b);
        if (ancestor) return;
        var cx = x;
        for (var i = 0; i < n.kids.length; i++) {
          var k = n.kids[i], kw = n.value > 0 ? w * k.value / n.value : 0;
          box(k, d + 1, cx, kw, false);
          cx += kw;
        }
      }
      for (var i = 0; i < chain.length - 1; i++) box(chain[i], depth++, 0, 1, true);
      box(focus, depth, 0, 1, false);
      graph.style.height = ((maxDepth + 1) * ROW) + "px";
      graph.setAttribute("data-focus", focus.name);
    }
    draw(root);
  }
  document.body.setAttribute("data-ready", "1");
})();
