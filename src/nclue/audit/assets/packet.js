/* nclue evidence-audit packet: a self-contained, offline evaluator form (docs/audit.md#the-packet).
 * Page text is only ever written with textContent; the packet data is JSON read from a
 * <script type="application/json"> block; answers autosave to localStorage and export as JSON. */
(function () {
  "use strict";

  var data = JSON.parse(document.getElementById("packet-data").textContent);
  var config = JSON.parse(document.getElementById("packet-config").textContent);
  var images = JSON.parse(document.getElementById("packet-images").textContent);
  var settings = data.settings;
  var SPACE = new RegExp(settings.space, "g");
  var STORE_KEY = "nclue-audit:" + data.packet_id + ":" + (config.evaluator || "");
  var items = data.items;
  // Maps keyed by ids and page numbers have no prototype, so a key such as "__proto__" or
  // "constructor" (from an imported file) is looked up as data, never as an inherited member.
  var byId = Object.create(null);
  items.forEach(function (item) { byId[item.id] = item; });
  var normCache = Object.create(null);
  var state = load() || fresh();
  var focus = 0;

  // ---- text rules (same as nclue.audit.quote_match / nclue.audit.validate) ----------------------

  function norm(text) {
    return String(text).normalize("NFKC").replace(/\u00ad/g, "").toLowerCase().replace(SPACE, " ").trim();
  }

  function fill(template, values) {
    return template.replace(/\{(\w+)\}/g, function (m, key) { return key in values ? String(values[key]) : m; });
  }

  function pageNorm(cond, page) {
    var key = cond.id + "#" + page.page;
    if (!(key in normCache)) { normCache[key] = norm(page.text); }
    return normCache[key];
  }

  function quoteProblem(quote, cond, page) {
    var q = norm(quote || "");
    var m = settings.quote_messages;
    if (!q) { return m.empty; }
    if (q.length < settings.min_quote_chars) { return fill(m.short, { n: q.length, min: settings.min_quote_chars }); }
    if (pageNorm(cond, page).indexOf(q) < 0) { return m.missing; }
    return null;
  }

  function conditionProblems(cond, st) {
    var m = settings.messages;
    var pages = selectedPages(st);
    if (st.answer === null || st.answer === undefined) { return [m.unanswered]; }
    if (st.answer === false) {
      return pages.length ? [fill(m.negative_pages, { pages: pages.join(", ") })] : [];
    }
    if (!pages.length) { return [m.no_page]; }
    var out = [];
    pages.forEach(function (p) {
      var page = cond.pages.filter(function (x) { return x.page === p; })[0];
      if (!page) { out.push(fill(m.not_in_pool, { page: p })); return; }
      var problem = quoteProblem(st.evidence[String(p)], cond, page);
      if (problem) { out.push(fill(m.quote, { page: p, problem: problem })); }
    });
    return out;
  }

  function itemProblems(item) {
    var out = [];
    item.conditions.forEach(function (cond, i) {
      conditionProblems(cond, condState(item, cond)).forEach(function (msg) {
        out.push({ cond: i, text: "Condition " + (i + 1) + " (\u201c" + cond.name + "\u201d): " + msg });
      });
    });
    return out;
  }

  // ---- state -------------------------------------------------------------------------------

  function has(obj, key) { return Object.prototype.hasOwnProperty.call(obj, key); }

  function fresh() {
    var s = { packet_id: data.packet_id, evaluator: config.evaluator || "", current: 0, items: Object.create(null) };
    items.forEach(function (item) {
      var conds = Object.create(null);
      item.conditions.forEach(function (c) { conds[c.id] = { answer: null, evidence: Object.create(null) }; });
      s.items[item.id] = { status: "empty", conditions: conds };
    });
    return s;
  }

  function load() {
    try {
      var raw = window.localStorage.getItem(STORE_KEY);
      if (!raw) { return null; }
      var s = JSON.parse(raw);
      if (s.packet_id !== data.packet_id) { return null; }
      var base = fresh();
      Object.keys(base.items).forEach(function (id) { if (s.items && has(s.items, id)) { base.items[id] = s.items[id]; } });
      base.evaluator = config.evaluator || s.evaluator || "";
      base.current = Math.min(Math.max(0, s.current | 0), items.length - 1);
      return base;
    } catch (e) {
      return null;
    }
  }

  function save() {
    try {
      window.localStorage.setItem(STORE_KEY, JSON.stringify(state));
      setText(document.getElementById("saved"), "Saved in this browser");
    } catch (e) {
      setText(document.getElementById("saved"), "Could not autosave (" + e.name + "); export regularly");
    }
    renderProgress();
  }

  function itemState(item) { return state.items[item.id]; }
  function condState(item, cond) { return itemState(item).conditions[cond.id]; }

  function selectedPages(st) {
    return Object.keys(st.evidence).map(Number).sort(function (a, b) { return a - b; });
  }

  function touched(item) {
    var st = itemState(item);
    st.status = "draft";
    save();
    renderJump();
  }

  // ---- DOM helpers (text only ever via textContent) ----------------------------------------

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    (children || []).forEach(function (c) {
      node.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    });
    return node;
  }

  function setText(node, text) { node.textContent = text; }

  function escapeRegExp(s) { return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"); }

  function highlighted(text, forms) {
    var pre = el("pre", { "class": "page-text", "data-testid": "page-text" });
    var words = forms.slice().sort(function (a, b) { return b.length - a.length; }).map(function (f) {
      return f.split(/[\s\-]+/).filter(Boolean).map(escapeRegExp).join("[\\s\\-\\u00ad]+");
    }).filter(Boolean);
    if (!words.length) { pre.textContent = text; return pre; }
    var re = new RegExp("(?<![A-Za-z])(?:" + words.join("|") + ")(?![A-Za-z])", "gi");
    var last = 0;
    var m;
    while ((m = re.exec(text)) !== null) {
      if (m[0].length === 0) { re.lastIndex += 1; continue; }
      pre.appendChild(document.createTextNode(text.slice(last, m.index)));
      var mark = document.createElement("mark");
      mark.textContent = m[0];
      pre.appendChild(mark);
      last = m.index + m[0].length;
    }
    pre.appendChild(document.createTextNode(text.slice(last)));
    return pre;
  }

  // ---- rendering -------------------------------------------------------------------------

  function renderHelp() {
    var help = document.getElementById("help");
    help.textContent = "";
    help.appendChild(el("h2", {}, ["How to judge"]));
    data.instructions.forEach(function (p) { help.appendChild(el("p", {}, [p])); });
    help.appendChild(el("h2", {}, ["Keyboard"]));
    var keys = [
      ["\u2190 / \u2192", "previous / next item (always available)"],
      ["1 \u2013 9, \u2191 / \u2193", "focus a condition"],
      ["y / n", "Established / Not established for the focused condition"],
      ["Enter or a", "accept the item (it is checked first) and go to the next"],
      ["Ctrl+Enter", "accept while typing a quote"],
      ["Esc", "leave a text field"],
      ["?", "show or hide this help"]
    ];
    var dl = el("dl", { "class": "keys" });
    keys.forEach(function (k) { dl.appendChild(el("dt", {}, [k[0]])); dl.appendChild(el("dd", {}, [k[1]])); });
    help.appendChild(dl);
  }

  function renderProgress() {
    var accepted = 0;
    var drafts = 0;
    items.forEach(function (item) {
      var s = itemState(item).status;
      if (s === "accepted") { accepted += 1; } else if (s === "draft") { drafts += 1; }
    });
    var line = "Accepted " + accepted + " of " + items.length + (drafts ? " \u00b7 " + drafts + " in progress" : "");
    setText(document.getElementById("progress"), line);
    setText(document.getElementById("jump-summary"), "All items (" + line.toLowerCase() + ")");
  }

  function renderJump() {
    var nav = document.getElementById("jump");
    nav.textContent = "";
    items.forEach(function (item, i) {
      var status = itemState(item).status;
      var b = el("button", {
        "type": "button",
        "class": "jump " + status + (i === state.current ? " current" : ""),
        "aria-label": "Item " + (i + 1) + " (" + status + ")",
        "data-testid": "jump-" + (i + 1)
      }, [String(i + 1)]);
      b.addEventListener("click", function () { go(i); });
      nav.appendChild(b);
    });
  }

  function renderItem() {
    var app = document.getElementById("app");
    app.textContent = "";
    var item = items[state.current];
    var st = itemState(item);
    var head = el("div", { "class": "item-head" }, [
      el("h2", { "data-testid": "item-title" }, ["Item " + (state.current + 1) + " of " + items.length]),
      el("span", { "class": "status " + st.status, "data-testid": "item-status" }, [statusText(st.status)]),
      el("span", { "class": "item-id" }, ["id " + item.id])
    ]);
    app.appendChild(head);
    var need = el("section", { "class": "need" }, [
      el("h3", {}, ["Information need"]),
      el("p", { "class": "need-text", "data-testid": "need" }, [item.need]),
      el("p", { "class": "rule" }, [data.rule])
    ]);
    app.appendChild(need);
    item.conditions.forEach(function (cond, i) { app.appendChild(renderCondition(item, cond, i)); });
    var errors = el("ul", { "id": "errors", "class": "errors", "role": "alert", "data-testid": "errors" });
    app.appendChild(errors);
    var prev = el("button", { "type": "button", "data-testid": "prev" }, ["\u2190 Previous"]);
    var accept = el("button", { "type": "button", "class": "primary", "data-testid": "accept" }, ["Accept item and continue"]);
    var next = el("button", { "type": "button", "data-testid": "next" }, ["Next \u2192"]);
    prev.addEventListener("click", function () { go(state.current - 1); });
    next.addEventListener("click", function () { go(state.current + 1); });
    accept.addEventListener("click", acceptItem);
    app.appendChild(el("div", { "class": "actions" }, [prev, accept, next]));
    setFocus(Math.min(focus, item.conditions.length - 1), false);
  }

  function statusText(status) {
    var texts = { empty: "not started", draft: "in progress \u2014 not accepted", accepted: "accepted" };
    return has(texts, status) ? texts[status] : status;
  }

  function renderCondition(item, cond, i) {
    var st = condState(item, cond);
    var box = el("section", { "class": "condition", "data-cond": String(i), "data-testid": "cond-" + (i + 1), "tabindex": "-1" });
    box.appendChild(el("h3", {}, ["Condition " + (i + 1) + " of " + item.conditions.length + ": \u201c" + cond.name + "\u201d"]));
    var r = cond.rubric;
    var rub = el("div", { "class": "rubric" }, [el("p", { "class": "requirement" }, [r.requirement])]);
    var lists = el("div", { "class": "lists" });
    var counts = el("ul", {});
    r.counts.forEach(function (t) { counts.appendChild(el("li", {}, [t])); });
    var not = el("ul", {});
    r.does_not_count.forEach(function (t) { not.appendChild(el("li", {}, [t])); });
    lists.appendChild(el("div", { "class": "counts" }, [el("strong", {}, ["Counts"]), counts]));
    lists.appendChild(el("div", { "class": "not-counts" }, [el("strong", {}, ["Does not count"]), not]));
    rub.appendChild(lists);
    if (r.note) { rub.appendChild(el("p", { "class": "note" }, [r.note])); }
    box.appendChild(rub);

    var group = "answer-" + cond.id;
    var yes = el("input", { "type": "radio", "name": group, "value": "yes", "data-testid": "yes-" + (i + 1) });
    var no = el("input", { "type": "radio", "name": group, "value": "no", "data-testid": "no-" + (i + 1) });
    yes.checked = st.answer === true;
    no.checked = st.answer === false;
    yes.addEventListener("change", function () { setAnswer(item, cond, true); });
    no.addEventListener("change", function () { setAnswer(item, cond, false); });
    box.appendChild(el("fieldset", { "class": "answer" }, [
      el("legend", {}, ["Do the pages below establish \u201c" + cond.name + "\u201d?"]),
      el("label", {}, [yes, " Established (select the page(s) and quote them)"]),
      el("label", {}, [no, " Not established by these pages"])
    ]));

    var grid = el("div", { "class": "pages" + (cond.pages.length > 3 ? " many" : "") });
    cond.pages.forEach(function (page) { grid.appendChild(renderPage(item, cond, i, page)); });
    box.appendChild(grid);
    return box;
  }

  function renderPage(item, cond, i, page) {
    var st = condState(item, cond);
    var key = String(page.page);
    var selected = has(st.evidence, key);
    var tid = (i + 1) + "-" + page.page;
    var check = el("input", { "type": "checkbox", "data-testid": "select-" + tid });
    check.checked = selected;
    var quote = el("textarea", {
      "rows": "2",
      "placeholder": "Quote copied exactly from this page",
      "data-testid": "quote-" + tid,
      "aria-label": "Quote from page " + page.page
    });
    quote.value = selected ? st.evidence[key] : "";
    quote.disabled = !selected;
    var use = el("button", { "type": "button", "class": "small", "data-testid": "use-selection-" + tid }, ["Use selected text"]);
    use.disabled = !selected;
    var text = highlighted(page.text, cond.aliases);
    check.addEventListener("change", function () {
      if (check.checked) { st.evidence[key] = quote.value; } else { delete st.evidence[key]; quote.value = ""; }
      quote.disabled = !check.checked;
      use.disabled = !check.checked;
      touched(item);
    });
    quote.addEventListener("input", function () { st.evidence[key] = quote.value; touched(item); });
    use.addEventListener("click", function () {
      var sel = window.getSelection();
      if (sel && sel.rangeCount && text.contains(sel.anchorNode) && text.contains(sel.focusNode)) {
        quote.value = sel.toString();
        st.evidence[key] = quote.value;
        touched(item);
      }
    });
    var card = el("article", { "class": "page" + (selected ? " selected" : ""), "data-testid": "page-" + tid }, [
      el("header", {}, [
        el("strong", {}, ["Page " + page.page]),
        el("label", { "class": "pick" }, [check, " establishes it"])
      ]),
      el("div", { "class": "quote-row" }, [quote, use])
    ]);
    var body = el("div", { "class": "page-body" }, [text]);
    var ref = images.refs[item.id + ":" + page.page];
    var img = ref === undefined ? null : images.data[ref];
    if (img) {
      var picture = el("img", { "class": "page-image", "alt": "Rendering of page " + page.page, "title": "Click to enlarge", "src": img, "loading": "lazy" });
      picture.addEventListener("click", function () { card.classList.toggle("zoom"); });
      body.appendChild(picture);
    }
    card.appendChild(body);
    if (page.cut) { card.appendChild(el("p", { "class": "cut" }, ["The page continues; only its first part is shown."])); }
    return card;
  }

  function setAnswer(item, cond, value) {
    condState(item, cond).answer = value;
    touched(item);
  }

  function setFocus(i, scroll) {
    var boxes = document.querySelectorAll("section.condition");
    if (!boxes.length) { return; }
    focus = Math.max(0, Math.min(i, boxes.length - 1));
    boxes.forEach(function (b, j) { b.classList.toggle("focused", j === focus); });
    if (scroll) { boxes[focus].focus(); boxes[focus].scrollIntoView({ block: "start" }); }
  }

  function showErrors(list) {
    var ul = document.getElementById("errors");
    ul.textContent = "";
    list.forEach(function (e) { ul.appendChild(el("li", {}, [typeof e === "string" ? e : e.text])); });
    document.querySelectorAll("section.condition").forEach(function (b) { b.classList.remove("invalid"); });
    list.forEach(function (e) {
      if (typeof e !== "string") {
        var box = document.querySelector('section.condition[data-cond="' + e.cond + '"]');
        if (box) { box.classList.add("invalid"); }
      }
    });
  }

  // ---- actions ---------------------------------------------------------------------------

  function go(i) {
    state.current = Math.max(0, Math.min(i, items.length - 1));
    focus = 0;
    save();
    renderJump();
    renderItem();
    document.getElementById("app").focus();
    window.scrollTo(0, 0);
  }

  function acceptItem() {
    var item = items[state.current];
    var problems = itemProblems(item);
    if (problems.length) {
      itemState(item).status = "draft";
      save();
      renderJump();
      showErrors(problems);
      var head = document.querySelector('[data-testid="item-status"]');
      head.className = "status draft";
      setText(head, statusText("draft"));
      return;
    }
    itemState(item).status = "accepted";
    save();
    var nextOpen = state.current + 1;
    go(Math.min(nextOpen, items.length - 1));
  }

  function exportItems() {
    return items.map(function (item) {
      var st = itemState(item);
      return {
        id: item.id,
        status: st.status,
        conditions: item.conditions.map(function (cond) {
          var cs = condState(item, cond);
          return {
            id: cond.id,
            answer: cs.answer === undefined ? null : cs.answer,
            evidence: selectedPages(cs).map(function (p) { return { page: p, quote: cs.evidence[String(p)] }; })
          };
        })
      };
    });
  }

  function canonical(value) {
    if (Array.isArray(value)) { return "[" + value.map(canonical).join(",") + "]"; }
    if (value !== null && typeof value === "object") {
      return "{" + Object.keys(value).sort().map(function (k) {
        return JSON.stringify(k) + ":" + canonical(value[k]);
      }).join(",") + "}";
    }
    return JSON.stringify(value);
  }

  function hex(buffer) {
    return Array.prototype.map.call(new Uint8Array(buffer), function (b) { return ("0" + b.toString(16)).slice(-2); }).join("");
  }

  function digest(body) {
    return window.crypto.subtle.digest("SHA-256", new TextEncoder().encode(canonical(body))).then(hex);
  }

  function doExport() {
    var evaluator = state.evaluator.trim();
    if (!evaluator) {
      showErrors(["Enter your evaluator label (top right) before exporting."]);
      document.getElementById("evaluator").focus();
      return;
    }
    var body = { packet_id: data.packet_id, evaluator: evaluator, items: exportItems() };
    digest(body).then(function (d) {
      var out = {
        format: settings.export_format,
        version: settings.format_version,
        kind: data.kind,
        packet_id: data.packet_id,
        evaluator: evaluator,
        items: body.items,
        digest: d,
        exported_at: new Date().toISOString()
      };
      var blob = new Blob([JSON.stringify(out, null, 1) + "\n"], { type: "application/json" });
      var a = el("a", { "href": URL.createObjectURL(blob), "download": "audit-" + data.packet_id.slice(0, 8) + "-" + evaluator.replace(/[^A-Za-z0-9_-]/g, "_") + ".json" });
      document.body.appendChild(a);
      a.click();
      a.remove();
      setText(document.getElementById("saved"), "Exported");
    });
  }

  function doImport(file) {
    var reader = new FileReader();
    reader.onload = function () {
      var obj;
      try { obj = JSON.parse(reader.result); } catch (e) {
        showErrors(["The file is not a complete JSON export (" + e.message + ")."]);
        return;
      }
      if (!obj || obj.format !== settings.export_format || !Array.isArray(obj.items)) {
        showErrors(["The file is not an nclue audit export."]);
        return;
      }
      if (obj.packet_id !== data.packet_id) {
        showErrors(["The export belongs to packet " + obj.packet_id + ", not to this packet (" + data.packet_id + "); open the packet it came from."]);
        return;
      }
      var body = { packet_id: obj.packet_id, evaluator: obj.evaluator, items: obj.items };
      digest(body).then(function (d) {
        var edited = d !== obj.digest;
        var loaded = fresh();
        var dropped = 0;
        obj.items.forEach(function (it) {
          var item = byId[it.id];
          if (!item || !it || typeof it !== "object") { return; }
          var st = loaded.items[it.id];
          // Only the packet's own statuses are kept; anything else (an edited file) is a draft.
          var status = it.status === "empty" || it.status === "draft" || it.status === "accepted" ? it.status : "draft";
          st.status = edited && status === "accepted" ? "draft" : status;
          var condsById = Object.create(null);
          item.conditions.forEach(function (c) { condsById[c.id] = c; });
          (Array.isArray(it.conditions) ? it.conditions : []).forEach(function (c) {
            if (!c || !st.conditions[c.id]) { return; }
            var shown = condsById[c.id].pages.map(function (x) { return x.page; });
            var ev = Object.create(null);
            (Array.isArray(c.evidence) ? c.evidence : []).forEach(function (e) {
              // Evidence must name a page this condition shows; "page NaN" or page 999 is left out.
              var page = e && typeof e.page === "number" ? e.page : Number(e && e.page);
              if (shown.indexOf(page) < 0) { dropped += 1; return; }
              ev[String(page)] = String(e.quote || "");
            });
            st.conditions[c.id] = { answer: c.answer === true || c.answer === false ? c.answer : null, evidence: ev };
          });
        });
        loaded.evaluator = config.evaluator || String(obj.evaluator || "");
        loaded.current = 0;
        state = loaded;
        save();
        document.getElementById("evaluator").value = state.evaluator;
        renderJump();
        renderItem();
        var problems = edited ? ["The export was edited after it was written (its digest does not match); its answers are loaded as drafts: check and accept each item again."] : [];
        if (dropped) { problems.push(dropped + " quote(s) named a page this packet does not show and were left out."); }
        showErrors(problems);
        setText(document.getElementById("saved"), "Imported " + obj.items.length + " items");
      }).catch(function (e) {
        showErrors(["The file could not be imported (" + e.message + "); export it again from the packet it came from."]);
      });
    };
    reader.readAsText(file);
  }

  function onKey(ev) {
    var t = ev.target;
    var typing = t && (t.tagName === "TEXTAREA" || (t.tagName === "INPUT" && t.type !== "radio" && t.type !== "checkbox"));
    if (typing) {
      if (ev.key === "Escape") { t.blur(); }
      if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey) && t.tagName === "TEXTAREA") { ev.preventDefault(); acceptItem(); }
      return;
    }
    if (ev.altKey || ev.ctrlKey || ev.metaKey) { return; }
    var item = items[state.current];
    if (ev.key === "ArrowRight") { ev.preventDefault(); go(state.current + 1); }
    else if (ev.key === "ArrowLeft") { ev.preventDefault(); go(state.current - 1); }
    else if (ev.key === "ArrowDown") { ev.preventDefault(); setFocus(focus + 1, true); }
    else if (ev.key === "ArrowUp") { ev.preventDefault(); setFocus(focus - 1, true); }
    else if (/^[1-9]$/.test(ev.key)) { setFocus(Number(ev.key) - 1, true); }
    else if (ev.key === "y" || ev.key === "n") {
      var cond = item.conditions[focus];
      setAnswer(item, cond, ev.key === "y");
      renderItem();
    }
    else if (ev.key === "Enter" || ev.key === "a") { ev.preventDefault(); acceptItem(); }
    else if (ev.key === "?") { toggleHelp(); }
  }

  function toggleHelp() {
    var help = document.getElementById("help");
    help.hidden = !help.hidden;
    document.getElementById("help-toggle").setAttribute("aria-expanded", String(!help.hidden));
  }

  // ---- start -----------------------------------------------------------------------------

  var who = document.getElementById("evaluator");
  who.value = state.evaluator;
  if (config.evaluator) { who.readOnly = true; }
  who.addEventListener("input", function () { state.evaluator = who.value; save(); });
  document.getElementById("export").addEventListener("click", doExport);
  document.getElementById("import").addEventListener("change", function (ev) {
    if (ev.target.files && ev.target.files[0]) { doImport(ev.target.files[0]); }
    ev.target.value = "";
  });
  document.getElementById("help-toggle").addEventListener("click", toggleHelp);
  document.addEventListener("keydown", onKey);
  renderHelp();
  renderProgress();
  renderJump();
  renderItem();
  if (!window.localStorage.getItem(STORE_KEY)) { toggleHelp(); }
  document.body.setAttribute("data-ready", "1");
})();
