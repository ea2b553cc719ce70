// styleval segment explorer: plain JavaScript over the JSON embedded in the page (#sv-data), no network.
// Every text from the data goes into the page through textContent or text nodes, never as markup.
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("sv-data").textContent);
  var S = D.strings, M = D.metrics, SYS = D.systems, N = D.ids.length, PAGE = 20;
  var ANCHOR = D.anchor === undefined ? null : D.anchor;  // the human references' anchor row: not a system
  function sysName(s) { return SYS[s] + (s === ANCHOR ? " (anchor)" : ""); }
  var $ = function (id) { return document.getElementById(id); };
  var st = {view: "all", system: -1, dir: "", text: "", decision: "", sort: 0, sortSys: -1, order: "worst",
            min: "", max: "", a: 0, b: Math.min(1, SYS.length - 1), dm: 0, m1: 0, m2: Math.min(1, M.length - 1),
            points: null, page: 0};

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = text;
    return e;
  }
  function val(m, s, i) { var v = M[m].v[s][i]; return v === null || v === undefined ? null : v; }
  function good(m, v) { return M[m].hib ? v : -v; }  // oriented: higher is better
  function fmt(m, v) { return v === null ? "–" : v.toFixed(M[m].dec); }
  // rank percentile per metric (oriented), for the bar behind each score
  var ranks = M.map(function (m, k) {
    var all = [];
    m.v.forEach(function (row) { row.forEach(function (v) { if (v !== null) all.push(good(k, v)); }); });
    return all.sort(function (x, y) { return x - y; });
  });
  function pct(m, v) {
    var a = ranks[m], lo = 0, hi = a.length, g = good(m, v);
    while (lo < hi) { var mid = (lo + hi) >> 1; if (a[mid] < g) lo = mid + 1; else hi = mid; }
    return a.length ? 100 * lo / a.length : 0;  // the share of the metric's segments this one beats
  }

  // ---------------------------------------------------------------- inline edits of an output against its source
  var TOKEN = /([\p{L}\p{N}_]+|[^\p{L}\p{N}_\s])(\s*)/gu;
  function tokens(s) {
    var out = [], m, lead = /^\s*/.exec(s)[0];
    TOKEN.lastIndex = 0;
    while ((m = TOKEN.exec(s)) !== null) out.push({w: m[1], t: m[0]});
    if (lead && out.length) out[0].t = lead + out[0].t;
    return out;
  }
  function edits(src, out) {  // [kind, text]: "=" kept, "+" inserted, "-" deleted (word-level LCS)
    var a = tokens(src), b = tokens(out), n = a.length, m = b.length;
    if (n * m > 250000) return [["=", out]];
    var L = [], i, j;
    for (i = 0; i <= n; i++) L.push(new Int32Array(m + 1));
    for (i = n - 1; i >= 0; i--) for (j = m - 1; j >= 0; j--)
      L[i][j] = a[i].w === b[j].w ? L[i + 1][j + 1] + 1 : Math.max(L[i + 1][j], L[i][j + 1]);
    var res = []; i = 0; j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && a[i].w === b[j].w) { res.push(["=", b[j].t]); i++; j++; }
      else if (i < n && (j >= m || L[i + 1][j] >= L[i][j + 1])) { res.push(["-", a[i].t]); i++; }
      else { res.push(["+", b[j].t]); j++; }
    }
    return res;
  }
  function editNode(src, out) {
    var span = el("span", "out");
    if (src === null) { span.textContent = out; return span; }
    edits(src, out).forEach(function (e) {
      span.appendChild(e[0] === "=" ? document.createTextNode(e[1]) : el(e[0] === "+" ? "ins" : "del", null, e[1]));
    });
    return span;
  }

  // ---------------------------------------------------------------- filters, sorting and the views
  // The controls of each view: the system filter and the sort controls (with the range, which filters on the
  // sort key) act in "all inputs" only; the two other views order by their own measure over their own systems.
  var VIEW_ONLY = {system: "all", sort: "all", sortSys: "all", order: "all", min: "all", max: "all"};
  function applies(name) { return !VIEW_ONLY[name] || VIEW_ONLY[name] === st.view; }
  function systemsShown() {
    if (st.view === "diff") return [st.a, st.b];
    if (st.system >= 0 && applies("system")) return [st.system];
    return SYS.map(function (_, s) { return s; });
  }
  function decisionHolds(i, s) {
    var d = D.decisions, v;
    if (st.decision === "style-fail" || st.decision === "style-pass") {
      if (d.style === null) return false;
      v = val(d.style, s, i);
      return v !== null && (st.decision === "style-pass" ? v >= 0.5 : v < 0.5);
    }
    if (st.decision === "j0") { if (d.j === null) return false; v = val(d.j, s, i); return v === 0; }
    if (st.decision === "fluency-fail") {
      if (d.fluency === null) return false;
      v = val(d.fluency, s, i);
      return v !== null && (M[d.fluency].hib ? v < d.threshold : v > d.threshold);
    }
    return true;
  }
  function key(i) {  // the sort metric of the chosen system, or its mean over the systems (the anchor left out)
    if (st.sortSys >= 0) return val(st.sort, st.sortSys, i);
    var sum = 0, k = 0;
    for (var s = 0; s < SYS.length; s++) {
      if (s === ANCHOR) continue;
      var v = val(st.sort, s, i);
      if (v !== null) { sum += v; k++; }
    }
    return k ? sum / k : null;
  }
  function textHit(i, q) {
    if (D.ids[i].toLowerCase().indexOf(q) >= 0) return true;
    var texts = [D.src[i]].concat(D.refs[i]);
    systemsShown().forEach(function (s) { texts.push(D.out[s][i]); });
    return texts.some(function (t) { return t !== null && S[t].toLowerCase().indexOf(q) >= 0; });
  }
  function discordant(i) {  // pairs of systems the two metrics order oppositely
    var c = 0, n = 0;
    for (var s = 0; s < SYS.length; s++) for (var t = s + 1; t < SYS.length; t++) {
      var a1 = val(st.m1, s, i), b1 = val(st.m1, t, i), a2 = val(st.m2, s, i), b2 = val(st.m2, t, i);
      if (a1 === null || b1 === null || a2 === null || b2 === null) continue;
      var x = good(st.m1, a1) - good(st.m1, b1), y = good(st.m2, a2) - good(st.m2, b2);
      n++;
      if (x * y < 0) c++;
    }
    return [c, n];
  }
  function rows() {
    var q = st.text.trim().toLowerCase(), lo = parseFloat(st.min), hi = parseFloat(st.max), out = [];
    var shown = systemsShown();
    for (var i = 0; i < N; i++) {
      if (st.points && !st.points.ids.has(D.ids[i])) continue;
      if (st.dir && D.dirs[D.dir[i]] !== st.dir) continue;
      if (q && !textHit(i, q)) continue;
      if (st.decision && !shown.some(function (s) { return decisionHolds(i, s); })) continue;
      var k = key(i), note = null, order = k;
      if (applies("min") && (!isNaN(lo) || !isNaN(hi)) && (k === null || k < lo || k > hi)) continue;
      if (st.view === "diff") {
        var va = val(st.dm, st.a, i), vb = val(st.dm, st.b, i);
        if (va === null || vb === null || va === vb) continue;
        var d = good(st.dm, va) - good(st.dm, vb);
        order = -Math.abs(d);
        note = (d > 0 ? sysName(st.a) : sysName(st.b)) + " better on " + M[st.dm].key + " by " + Math.abs(va - vb)
          .toFixed(M[st.dm].dec);
      } else if (st.view === "disagree") {
        var c = discordant(i);
        if (c[0] === 0) continue;
        order = -c[0] / c[1];
        note = M[st.m1].key + " and " + M[st.m2].key + " order " + c[0] + " of " + c[1] + " system pairs oppositely";
      } else if (k !== null) {
        order = st.order === "worst" ? good(st.sort, k) : -good(st.sort, k);
      }
      out.push({i: i, order: order === null ? Infinity : order, note: note});
    }
    out.sort(function (x, y) { return x.order - y.order || x.i - y.i; });
    return out;
  }

  // ---------------------------------------------------------------- rendering
  // score columns: the overall scores (J) first, so the summary score is in view without scrolling sideways;
  // then the aspects in table order and the human scores
  var COLS = M.map(function (_, k) { return k; }).sort(function (x, y) {
    return (M[y].aspect === "overall") - (M[x].aspect === "overall") || x - y;
  });
  function headText(th, text) {  // a heading breaks only at its spaces, after "/" and after "_", never in a word
    text.split(/(?<=[\/_])/).forEach(function (part, k) {
      if (k) th.appendChild(el("wbr"));
      th.appendChild(document.createTextNode(part));
    });
  }
  function head() {
    var tr = el("tr");
    ["input / system", "output (edits against the source)"].forEach(function (h) {
      var th = el("th", null, h); th.scope = "col"; tr.appendChild(th);
    });
    COLS.forEach(function (k) {
      var m = M[k], th = el("th", "a-" + m.aspect);
      headText(th, m.key + (m.hib ? "\u00a0↑" : "\u00a0↓"));
      th.scope = "col"; th.title = m.aspect + (m.note ? ": " + m.note : ""); tr.appendChild(th);
    });
    var thead = $("sv-head"); thead.textContent = ""; thead.appendChild(tr);
  }
  function inputRow(r) {
    var i = r.i, tr = el("tr", "input"), td = el("td", null);
    td.colSpan = 2 + M.length;
    var idb = el("b", null, D.ids[i]);
    td.appendChild(idb);
    if (D.dirs.length > 1 || D.dirs[0]) td.appendChild(el("span", "dir", " " + (D.dirs[D.dir[i]] || "")));
    if (r.note) td.appendChild(el("span", "note", " — " + r.note));
    var p = el("div", "src"); p.appendChild(el("span", "lab", "source ")); p.appendChild(el("span", null, S[D.src[i]]));
    td.appendChild(p);
    D.refs[i].forEach(function (ref, k) {
      var q = el("div", "ref"); q.appendChild(el("span", "lab", "reference " + (k + 1) + " "));
      q.appendChild(el("span", null, S[ref])); td.appendChild(q);
    });
    tr.appendChild(td);
    return tr;
  }
  function systemRow(i, s) {
    var tr = el("tr", "sys"), th = el("th", null, sysName(s));
    th.scope = "row";
    if (st.points && st.points.system === s) tr.className += " hit";
    tr.appendChild(th);
    var td = el("td", "o"), o = D.out[s][i];
    if (o === null) td.appendChild(el("span", "missing", "(no output)"));
    else if (S[o] === "") td.appendChild(el("span", "missing", "(empty output)"));
    else td.appendChild(editNode(D.src[i] === null ? null : S[D.src[i]], S[o]));
    var own = (D.sysrefs[s] || {})[i];
    if (own) {  // this system was scored against other references than the input's (a human rewrite, the anchor)
      var r = el("div", "ownrefs", "scored against: ");
      own.forEach(function (k, n) { if (n) r.appendChild(document.createTextNode(" | ")); r.appendChild(el("span", null, S[k])); });
      td.appendChild(r);
    }
    tr.appendChild(td);
    COLS.forEach(function (k) {
      var m = M[k], v = val(k, s, i), c = el("td", "sc a-" + m.aspect, fmt(k, v));
      if (v !== null) {
        var p = pct(k, v).toFixed(0);
        c.style.backgroundImage = "linear-gradient(90deg, var(--tint) " + p + "%, transparent " + p + "%)";
        c.title = m.key + " = " + fmt(k, v) + " (better than " + p + "% of its segments)";
      }
      tr.appendChild(c);
    });
    return tr;
  }
  function render() {
    var all = rows(), pages = Math.max(1, Math.ceil(all.length / PAGE));
    st.page = Math.min(st.page, pages - 1);
    var table = $("sv-table"), frag = document.createDocumentFragment(), shown = systemsShown();
    all.slice(st.page * PAGE, (st.page + 1) * PAGE).forEach(function (r) {
      var tb = el("tbody");
      tb.appendChild(inputRow(r));
      shown.forEach(function (s) { tb.appendChild(systemRow(r.i, s)); });
      frag.appendChild(tb);
    });
    Array.prototype.slice.call(table.tBodies).forEach(function (tb) { table.removeChild(tb); });
    table.appendChild(frag);
    var first = all.length ? st.page * PAGE + 1 : 0;
    $("sv-count").textContent = all.length + " of " + N + " inputs match; showing " + first + "–" +
      Math.min(all.length, (st.page + 1) * PAGE) + " (page " + (st.page + 1) + " of " + pages + ")" +
      (st.points ? "; from the plot: " + st.points.label : "");
    $("sv-prev").disabled = st.page === 0;
    $("sv-next").disabled = st.page >= pages - 1;
    $("sv-clear").hidden = !st.points;
    $("sv-diffbox").hidden = st.view !== "diff";
    $("sv-disbox").hidden = st.view !== "disagree";
    Object.keys(VIEW_ONLY).forEach(function (name) { $(CONTROL[name]).parentNode.hidden = !applies(name); });
    var on = [], off = [];
    active().forEach(function (f) { (applies(f[0]) ? on : off).push(f[1]); });
    $("sv-active").textContent = (on.length ? "filters in effect: " + on.join("; ") : "no filter in effect") +
      (off.length ? " (set in the “all inputs” view, not applied here: " + off.join("; ") + ")" : "");
    $("sv-reset").hidden = !(on.length || off.length);
  }
  function active() {  // [control name, description] of every filter set, whether or not this view applies it
    var out = [];
    if (st.system >= 0) out.push(["system", "system " + sysName(st.system)]);
    if (st.dir) out.push(["dir", "direction " + st.dir]);
    if (st.decision) out.push(["decision", "decision: " + $("sv-decision").selectedOptions[0].textContent]);
    if (st.text.trim()) out.push(["text", "text “" + st.text.trim() + "”"]);
    if (st.min !== "" || st.max !== "") out.push(["min", M[st.sort].key + " in [" + (st.min === "" ? "−∞" : st.min) +
      ", " + (st.max === "" ? "∞" : st.max) + "]"]);
    if (st.points) out.push(["points", "from the plot: " + st.points.label]);
    return out;
  }

  // ---------------------------------------------------------------- controls
  function fill(id, items, value) {
    var s = $(id);
    items.forEach(function (it) { var o = el("option", null, it[1]); o.value = String(it[0]); s.appendChild(o); });
    s.value = String(value);
  }
  var metricItems = M.map(function (m, k) { return [k, m.key + " (" + m.aspect + ")"]; });
  var sysItems = SYS.map(function (s, k) { return [k, sysName(k)]; });
  fill("sv-system", [[-1, "all systems"]].concat(sysItems), -1);
  fill("sv-sortsys", [[-1, ANCHOR === null ? "mean of the systems" : "mean of the systems (not the anchor)"]]
    .concat(sysItems), -1);
  fill("sv-sort", metricItems, 0);
  fill("sv-dir", [["", "all directions"]].concat(D.dirs.filter(Boolean).map(function (d) { return [d, d]; })), "");
  fill("sv-a", sysItems, st.a); fill("sv-b", sysItems, st.b);
  fill("sv-dm", metricItems, 0); fill("sv-m1", metricItems, st.m1); fill("sv-m2", metricItems, st.m2);
  var decisions = [["", "any decision"]];
  if (D.decisions.style !== null) decisions.push(["style-fail", "style fail"], ["style-pass", "style pass"]);
  if (D.decisions.j !== null) decisions.push(["j0", "J = 0"]);
  if (D.decisions.fluency !== null) decisions.push(["fluency-fail", "fluency fail"]);
  fill("sv-decision", decisions, "");
  var num = {system: 1, sortSys: 1, sort: 1, a: 1, b: 1, dm: 1, m1: 1, m2: 1};
  var CONTROL = {system: "sv-system", sort: "sv-sort", sortSys: "sv-sortsys", order: "sv-order", min: "sv-min",
                 max: "sv-max", dir: "sv-dir", decision: "sv-decision", text: "sv-text"};
  [["sv-view", "view"], ["sv-system", "system"], ["sv-sortsys", "sortSys"], ["sv-sort", "sort"], ["sv-dir", "dir"],
   ["sv-order", "order"], ["sv-decision", "decision"], ["sv-a", "a"], ["sv-b", "b"], ["sv-dm", "dm"],
   ["sv-m1", "m1"], ["sv-m2", "m2"], ["sv-text", "text"], ["sv-min", "min"], ["sv-max", "max"]
  ].forEach(function (p) {
    $(p[0]).addEventListener(p[0] === "sv-text" || p[0] === "sv-min" || p[0] === "sv-max" ? "input" : "change",
      function (e) { st[p[1]] = num[p[1]] ? parseInt(e.target.value, 10) : e.target.value; st.page = 0; render(); });
  });
  $("sv-prev").addEventListener("click", function () { st.page--; render(); });
  $("sv-next").addEventListener("click", function () { st.page++; render(); });
  $("sv-clear").addEventListener("click", function () { st.points = null; st.page = 0; render(); });
  $("sv-reset").addEventListener("click", function () {  // every filter of every view back to none
    st.system = -1; st.dir = ""; st.decision = ""; st.text = ""; st.min = ""; st.max = ""; st.points = null;
    st.page = 0;
    ["system", "dir", "decision", "text", "min", "max"].forEach(function (name) {
      $(CONTROL[name]).value = name === "system" ? "-1" : "";
    });
    render();
  });
  // copying from an output copies the output: the struck deletions shown inline are not part of it
  $("sv-table").addEventListener("copy", function (e) {
    var sel = window.getSelection();
    if (!sel.rangeCount || !e.clipboardData) return;
    var box = document.createElement("div");
    for (var r = 0; r < sel.rangeCount; r++) box.appendChild(sel.getRangeAt(r).cloneContents());
    if (!box.querySelector("del")) return;
    Array.prototype.slice.call(box.querySelectorAll("del")).forEach(function (d) { d.parentNode.removeChild(d); });
    e.clipboardData.setData("text/plain", box.textContent);
    e.preventDefault();
  });
  document.addEventListener("keydown", function (e) {  // keyboard: "/" search, "[" and "]" page
    var t = e.target.tagName;
    if (t === "INPUT" || t === "SELECT" || t === "TEXTAREA") return;
    if (e.key === "/") { e.preventDefault(); $("sv-text").focus(); }
    else if (e.key === "]" && !$("sv-next").disabled) { st.page++; render(); }
    else if (e.key === "[" && !$("sv-prev").disabled) { st.page--; render(); }
  });

  // ---------------------------------------------------------------- plots: a click on a point opens its segments
  function pointIds(pt) {  // a bar of a 0/1 metric: the system's segments scored pt.equals; else the point's ids
    if (pt.equals === undefined) return pt.ids || D.ids;
    return D.ids.filter(function (_, i) { return val(pt.metric, pt.system, i) === pt.equals; });
  }
  function openPoint(pt) {
    st.points = {ids: new Set(pointIds(pt)), system: pt.system === undefined ? null : pt.system, label: pt.label};
    st.view = "all"; $("sv-view").value = "all";
    if (pt.metric !== undefined) { st.sort = pt.metric; $("sv-sort").value = String(pt.metric); }
    if (pt.system !== undefined) { st.sortSys = pt.system; $("sv-sortsys").value = String(pt.system); }
    st.page = 0; render();
    $("explorer").scrollIntoView();
  }
  (D.figures || []).forEach(function (f) {
    var img = $(f.img);
    if (!img) return;
    img.classList.add("clickable");
    img.addEventListener("click", function (e) {
      var sx = img.naturalWidth / img.clientWidth, x = e.offsetX * sx, y = e.offsetY * sx, best = null, bd = 12 * sx;
      f.points.forEach(function (p) {  // a region (a bar) holds the click anywhere inside; a point within 12 px
        var b = p.box, d = b && x >= b[0] && x <= b[2] && y >= b[1] && y <= b[3] ? 0 : Math.hypot(p.x - x, p.y - y);
        if (d <= bd) { bd = d; best = p; }
      });
      if (best) openPoint(best);
    });
    var list = $(f.img + "-points");
    if (list) f.points.forEach(function (p) {
      var b = el("button", "pt", p.label); b.type = "button";
      b.addEventListener("click", function () { openPoint(p); }); list.appendChild(b);
    });
  });
  head();
  render();
  document.documentElement.setAttribute("data-explorer-ms", performance.now().toFixed(0));  // for benchmarks
  document.documentElement.setAttribute("data-explorer", "ready");
})();
