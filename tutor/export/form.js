// attn-tutor answer form: checks each entry by the rules `grade` reads it with
// (tutor/core/numbers.py read_answer, mirrored here; tests feed both one corpus), keeps entries
// in localStorage, moves like a spreadsheet and saves a sheet `attn-tutor grade` reads.
"use strict";
(function () {
  // ---------------------------------------------------------------------------------------
  // the reader: numbers.read_answer's grammar and limits
  const MAX_DIGITS = 30, MAX_EXPONENT = 30, MAX_CHARS = 200, MAX_NODES = 80;
  const MAX_LOG10 = 60, MAX_POWER_DIGITS = 2000;
  // Python's str.isspace() (what \s and strip() mean there)
  const WS = "\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
  const WORD = "\\p{L}\\p{N}_";
  const RE_WS = new RegExp("[" + WS + "]+", "gu");
  const RE_STRIP = new RegExp("^[" + WS + "]+|[" + WS + "]+$", "gu");
  const RE_COMMA = new RegExp("^[" + WS + "]*[-+\u2212]?\\p{Nd}+,\\p{Nd}+[" + WS + "]*$", "u");
  const RE_ROOT = new RegExp("\u221a[" + WS + "]*(\\p{Nd}+(?:\\.\\p{Nd}+)?)", "gu");
  const RE_TIMES = new RegExp(
    "(\\p{Nd}|\\))[" + WS + "]*(?=(?:sqrt|exp|ln|log|pi)(?![" + WORD + "])|\u03c0|\\(|e(?![\\p{Nd}+\\-" + WORD + "]))",
    "gu");
  const RE_ZEROS = new RegExp("(?<![" + WORD + ".])0+(?=\\p{Nd})", "gu");
  const RE_ENTRY = /^(?:(\d+)(?:\.(\d*))?(?:[eE]([+-]?\d+))?|\.(\d+)(?:[eE]([+-]?\d+))?)$/;
  const RE_NUMBER = /(?:0[xXoObB][\p{L}\p{N}_]*|(?:\d[\d_]*(?:\.[\d_]*)?|\.\d[\d_]*)(?:[eE][+-]?[\d_]+)?[jJ]?)/uy;
  const RE_NAME = /[\p{L}\p{Nl}_][\p{L}\p{Nl}\p{Mn}\p{Mc}\p{Nd}\p{Pc}]*/uy;
  const RE_IDCHAR = /[\p{L}\p{N}_]/u;
  const NEG_INF = ["-inf", "-oo", "-\u221e"];
  const NAMES = { e: Math.E, pi: Math.PI, "\u03c0": Math.PI };
  const FUNCTIONS = ["sqrt", "exp", "ln", "log"];

  class Refused extends Error {
    constructor(why, fix) { super(why); this.fix = fix; }
  }

  function tidy(text) {
    let s = text.replace(RE_STRIP, "");
    s = s.split("\u2212").join("-").split("\u00d7").join("*").split("\u00b7").join("*");
    s = s.split("\u00f7").join("/").split("^").join("**");
    s = s.replace(RE_ROOT, "sqrt($1)").split("\u221a(").join("sqrt(");
    s = s.replace(RE_TIMES, "$1*");
    return s.replace(RE_ZEROS, "");
  }

  // exact rationals (BigInt) where the value is rational, so zeros and sizes are told exactly
  function gcd(a, b) { a = a < 0n ? -a : a; b = b < 0n ? -b : b; while (b) { [a, b] = [b, a % b]; } return a; }
  function rat(p, q) { if (q < 0n) { p = -p; q = -q; } const g = gcd(p, q) || 1n; return { p: p / g, q: q / g }; }
  function val(f, r) { return { f: r ? Number(r.p) / Number(r.q) : f, r: r || null }; }
  // exactly 0 when rational; else 0 up to the rounding of floats (sqrt(2)·sqrt(2) − 2)
  function isZero(x) { return x.r ? x.r.p === 0n : Math.abs(x.f) < 1e-14; }
  function bigRoot(n) { // the integer square root of n ≥ 0, or null when n is no square
    if (n < 2n) return n;
    let x = BigInt(Math.floor(Math.sqrt(Number(n))));
    while (x * x > n) x -= 1n;
    while ((x + 1n) * (x + 1n) <= n) x += 1n;
    return x * x === n ? x : null;
  }

  function entry(seg) { // numbers.parse_entry on a literal's text
    const m = RE_ENTRY.exec(seg);
    if (!m) throw new Refused("write plain digits, such as 0.25 or 3/4");
    const digits = seg.replace(/\D/g, "").length;
    if (digits > MAX_DIGITS) throw new Refused("at most " + MAX_DIGITS + " digits in a number");
    const whole = m[1] !== undefined ? m[1] : "";
    const frac = (m[1] !== undefined ? m[2] : m[4]) || "";
    const expText = m[1] !== undefined ? m[3] : m[5];
    const exp = expText ? parseInt(expText, 10) : 0;
    if (Math.abs(exp) > MAX_EXPONENT) throw new Refused("at most \u00b1" + MAX_EXPONENT + " in an exponent");
    let p = BigInt((whole + frac) || "0"), q = 10n ** BigInt(frac.length);
    if (exp >= 0) p *= 10n ** BigInt(exp); else q *= 10n ** BigInt(-exp);
    return rat(p, q);
  }

  function tokens(src) {
    const out = [];
    let i = 0, depth = 0;
    while (i < src.length) {
      const ch = src[i];
      if (ch === " " || ch === "\t" || ch === "\f") { i++; continue; }
      if ((ch === "\n" || ch === "\r") && depth > 0) { i++; continue; }
      RE_NUMBER.lastIndex = i;
      let m = RE_NUMBER.exec(src);
      if (m && m[0] !== "." && /[\d]/.test(m[0])) {
        const next = src.slice(i + m[0].length);
        if (next && RE_IDCHAR.test(Array.from(next)[0])) throw new Refused("");
        out.push({ t: "num", s: m[0] });
        i += m[0].length;
        continue;
      }
      RE_NAME.lastIndex = i;
      m = RE_NAME.exec(src);
      if (m) { out.push({ t: "name", s: m[0].normalize("NFKC") }); i += m[0].length; continue; }
      const two = src.slice(i, i + 2);
      if (two === "**" || two === "//") { out.push({ t: two }); i += 2; continue; }
      if ("+-*/%@~(),".includes(ch)) {
        if (ch === "(") depth++;
        if (ch === ")") depth--;
        out.push({ t: ch }); i++; continue;
      }
      throw new Refused("");
    }
    out.push({ t: "end" });
    return out;
  }

  // a Python expression, as ast.parse reads it, limited to what numbers._Builder takes
  function parse(src) {
    const toks = tokens(src);
    let k = 0;
    const peek = () => toks[k].t, take = () => toks[k++];
    function expect(t) { if (peek() !== t) throw new Refused(""); return take(); }
    function expr() {
      let left = term();
      while (peek() === "+" || peek() === "-") { const op = take().t; left = { k: "bin", op, a: left, b: term() }; }
      return left;
    }
    function term() {
      let left = factor();
      while (["*", "/", "//", "%", "@"].includes(peek())) { const op = take().t; left = { k: "bin", op, a: left, b: factor() }; }
      return left;
    }
    function factor() {
      if (["+", "-", "~"].includes(peek())) { const op = take().t; return { k: "un", op, a: factor() }; }
      return power();
    }
    function power() {
      const base = primary();
      if (peek() === "**") { take(); return { k: "bin", op: "**", a: base, b: factor() }; }
      return base;
    }
    function primary() {
      let node = atom();
      while (peek() === "(") { // a call: f(x), f(x,)
        take();
        const args = [];
        while (peek() !== ")") {
          args.push(expr());
          if (peek() === ",") take(); else break;
        }
        expect(")");
        node = { k: "call", f: node, args };
      }
      return node;
    }
    function atom() {
      const tok = take();
      if (tok.t === "num") return { k: "num", s: tok.s };
      if (tok.t === "name") return { k: "name", s: tok.s };
      if (tok.t === "(") {
        if (peek() === ")") throw new Refused(""); // () is an empty tuple
        const inner = expr();
        if (peek() === ",") throw new Refused(""); // (1, 2) is a tuple
        expect(")");
        return inner;
      }
      throw new Refused("");
    }
    const tree = expr();
    expect("end");
    return tree;
  }

  function count(n) { // ast.walk's count: operators and a Name's Load are nodes too
    switch (n.k) {
      case "num": return 1;
      case "name": return 2;
      case "un": return 2 + count(n.a);
      case "bin": return 2 + count(n.a) + count(n.b);
      default: return 1 + count(n.f) + n.args.reduce((s, a) => s + count(a), 0);
    }
  }

  function checked(x) {
    if (!Number.isFinite(x.f)) throw new Refused("it divides by zero or is undefined");
    if (Math.abs(x.f) > 1e60) throw new Refused("the number is too large");
    return x;
  }

  function digitsOf(n) { // numbers._Builder.power's size of the base's rationals
    if (n.k === "num") { const r = entry(n.s); return String(r.p < 0n ? -r.p : r.p).length + String(r.q).length; }
    if (n.k === "un") return digitsOf(n.a);
    if (n.k === "bin") return digitsOf(n.a) + digitsOf(n.b);
    if (n.k === "call") return n.args.reduce((s, a) => s + digitsOf(a), n.f.s === "sqrt" ? 2 : 0);
    return 0;
  }

  function build(n) {
    switch (n.k) {
      case "num": {
        if (/[jJ]$/.test(n.s)) throw new Refused("");
        return checked(val(0, entry(n.s)));
      }
      case "name":
        if (!Object.prototype.hasOwnProperty.call(NAMES, n.s)) throw new Refused("");
        return val(NAMES[n.s], null);
      case "un": {
        if (n.op === "~") throw new Refused("");
        const x = build(n.a);
        return checked(n.op === "-" ? val(-x.f, x.r && rat(-x.r.p, x.r.q)) : x);
      }
      case "call": {
        if (n.f.k !== "name" || !FUNCTIONS.includes(n.f.s) || n.args.length !== 1) throw new Refused("");
        const x = build(n.args[0]);
        if (n.f.s === "exp") {
          if (x.f > 138) throw new Refused("e to that power is too large");
          return checked(isZero(x) && x.r ? val(1, rat(1n, 1n)) : val(Math.exp(x.f), null));
        }
        if (n.f.s === "sqrt") {
          if (x.f < 0 && !isZero(x)) throw new Refused("the square root needs a number \u2265 0");
          if (x.r) {
            const a = bigRoot(x.r.p), b = bigRoot(x.r.q);
            if (a !== null && b !== null) return checked(val(0, rat(a, b)));
          }
          return checked(val(Math.sqrt(Math.max(x.f, 0)), null));
        }
        if (x.r ? x.r.p <= 0n : x.f <= 0) throw new Refused("the logarithm needs a positive number");
        if (x.r && x.r.p === 1n && x.r.q === 1n) return val(0, rat(0n, 1n));
        return checked(val(Math.log(x.f), null));
      }
      default: {
        if (n.op === "//" || n.op === "%" || n.op === "@") throw new Refused("");
        const a = build(n.a), b = build(n.b);
        const both = a.r && b.r;
        if (n.op === "+") return checked(val(a.f + b.f, both && rat(a.r.p * b.r.q + b.r.p * a.r.q, a.r.q * b.r.q)));
        if (n.op === "-") return checked(val(a.f - b.f, both && rat(a.r.p * b.r.q - b.r.p * a.r.q, a.r.q * b.r.q)));
        if (n.op === "*") return checked(val(a.f * b.f, both && rat(a.r.p * b.r.p, a.r.q * b.r.q)));
        if (n.op === "/") {
          if (isZero(b)) throw new Refused("it divides by zero");
          return checked(val(a.f / b.f, both && rat(a.r.p * b.r.q, a.r.q * b.r.p)));
        }
        return power(a, b, n.a);
      }
    }
  }

  function power(a, b, baseNode) {
    if (a.r ? a.r.p === 0n : a.f === 0) {
      if (b.f < 0) throw new Refused("it divides by zero");
      return val(isZero(b) ? 1 : 0, rat(isZero(b) ? 1n : 0n, 1n));
    }
    const size = Math.abs(b.f);
    if (size * Math.abs(Math.log10(Math.abs(a.f))) > MAX_LOG10) throw new Refused("that power is too large");
    const digits = a.r ? String(a.r.p < 0n ? -a.r.p : a.r.p).length + String(a.r.q).length : digitsOf(baseNode);
    if (size * Math.max(digits, 1) > MAX_POWER_DIGITS) throw new Refused("that power is too large to work out exactly");
    const integer = b.r !== null && b.r.q === 1n;
    if (a.f < 0 && !integer) throw new Refused("it is not a real number");
    if (a.r && integer) {
      const e = b.r.p < 0n ? -b.r.p : b.r.p;
      let r = rat(a.r.p ** e, a.r.q ** e);
      if (b.r.p < 0n) r = rat(r.q, r.p);
      return checked(val(0, r));
    }
    return checked(val(Math.pow(a.f, b.f), null));
  }

  // numbers.read_answer's verdict: {ok: true, value, inf} or {ok: false, why}
  function readAnswer(text) {
    const squeezed = text.replace(RE_WS, "").split("\u2212").join("-").toLowerCase();
    if (NEG_INF.includes(squeezed)) return { ok: true, value: -Infinity, inf: true };
    try {
      if (Array.from(text).length > MAX_CHARS) throw new Refused("at most " + MAX_CHARS + " characters");
      if (RE_COMMA.test(text)) {
        const point = text.replace(RE_STRIP, "").replace(",", ".");
        throw new Refused("use a decimal point: " + point, point);
      }
      const src = tidy(text);
      if (!src) throw new Refused("the answer is empty");
      if (src.includes("#")) throw new Refused("'#' has no meaning here");
      const tree = parse(src);
      if (count(tree) + 1 > MAX_NODES) throw new Refused("that expression is too long to be an answer");
      return { ok: true, value: build(tree).f, inf: false };
    } catch (err) {
      if (!(err instanceof Refused)) throw err;
      return { ok: false, why: err.message, fix: err.fix };
    }
  }

  const HOW = "Write e.g. 0.25, 3/4, 5/sqrt(3) or 2\u221a3.";

  // an entry as the form judges it: blank, fine, or what to write instead
  function problem(text) {
    if (!text.replace(RE_STRIP, "")) return null; // blank: left for later
    const got = readAnswer(text);
    if (!got.ok && got.fix) return "Write " + got.fix + ": a decimal point, not a comma.";
    if (!got.ok) return "Cannot read this" + (got.why ? " (" + got.why + ")" : "") + ". " + HOW;
    if (got.inf) return "\u2212\u221e only where the mask hides a score (given). Write this cell's number.";
    return null;
  }

  window.attnForm = { readAnswer, problem };

  // ---------------------------------------------------------------------------------------
  // the page
  const layoutEl = document.getElementById("sheet-layout");
  if (!layoutEl) return;
  const layout = JSON.parse(layoutEl.textContent);
  const nameInput = document.getElementById("student");
  const status = document.getElementById("saved");
  const PREFIX = "attn-tutor-form:" + layout.fingerprint + ":" + (layout.variant || layout.lesson) + ":";
  const inputs = Array.from(document.querySelectorAll("table.ask input"));
  const byCell = new Map(inputs.map((el) => [el.dataset.cell, el]));

  function storageKey(student) { return PREFIX + student.trim(); }
  function store(key, value) { try { localStorage.setItem(key, value); } catch (e) { status.textContent = "Your browser does not keep entries here: save the sheet before closing."; } }
  function load(key) { try { return localStorage.getItem(key); } catch (e) { return null; } }

  function mark(el) {
    const why = problem(el.value);
    let msg = el.nextElementSibling;
    if (why === null) {
      if (el.hasAttribute("aria-invalid")) {
        el.removeAttribute("aria-invalid");
        el.removeAttribute("aria-describedby");
        if (msg) msg.remove();
      }
      return;
    }
    el.setAttribute("aria-invalid", "true");
    if (!msg) {
      msg = document.createElement("span");
      msg.className = "msg";
      msg.id = "msg-" + inputs.indexOf(el);
      el.after(msg);
      el.setAttribute("aria-describedby", msg.id);
    }
    if (msg.textContent !== why) msg.textContent = why;
  }

  // entries: {cell name: text}, kept under the fingerprint and the student's name
  let entries = {};
  let pending = null;
  function save() {
    pending = null;
    store(storageKey(nameInput.value), JSON.stringify(entries));
    store(PREFIX + "last-student", nameInput.value);
  }
  function later() { if (pending === null) pending = setTimeout(save, 250); }
  function restore() {
    const who = load(PREFIX + "last-student");
    if (who !== null && !layout.student) nameInput.value = who;
    const kept = load(storageKey(nameInput.value));
    entries = {};
    try { entries = kept ? JSON.parse(kept) || {} : {}; } catch (e) { entries = {}; }
    for (const [cell, text] of Object.entries(entries)) {
      const el = byCell.get(cell);
      if (el) { el.value = text; mark(el); }
    }
  }
  restore();

  document.addEventListener("input", (ev) => {
    const el = ev.target;
    if (el === nameInput) { later(); return; }
    if (!el.dataset || el.dataset.cell === undefined) return;
    if (el.value === "") delete entries[el.dataset.cell]; else entries[el.dataset.cell] = el.value;
    mark(el);
    later();
  });
  window.addEventListener("pagehide", () => { if (pending !== null) { clearTimeout(pending); save(); } });
  document.addEventListener("visibilitychange", () => { if (pending !== null) { clearTimeout(pending); save(); } });

  // spreadsheet moves: Enter down (Shift+Enter up), arrows between cells
  const grids = new Map();
  function grid(table) {
    let g = grids.get(table);
    if (!g) {
      g = new Map();
      for (const el of table.querySelectorAll("input")) g.set(el.dataset.i + "," + el.dataset.j, el);
      grids.set(table, g);
    }
    return g;
  }
  function neighbour(el, di, dj) {
    const table = el.closest("table");
    const g = grid(table);
    let i = +el.dataset.i, j = +el.dataset.j;
    const rows = table.tBodies[0].rows.length, cols = table.tHead.rows[0].cells.length - 1;
    for (;;) {
      i += di; j += dj;
      if (i < 0 || j < 0 || i >= rows || j >= cols) return null;
      const next = g.get(i + "," + j);
      if (next) return next;
    }
  }
  function nextTable(el, forward) {
    const at = inputs.indexOf(el);
    const table = el.closest("table");
    const step = forward ? 1 : -1;
    for (let k = at + step; k >= 0 && k < inputs.length; k += step) {
      if (inputs[k].closest("table") !== table) return inputs[k];
    }
    return null;
  }
  document.addEventListener("keydown", (ev) => {
    const el = ev.target;
    if (!el.dataset || el.dataset.cell === undefined || ev.altKey || ev.ctrlKey || ev.metaKey) return;
    let to = null;
    const start = el.selectionStart === 0 && el.selectionEnd === 0;
    const end = el.selectionStart === el.value.length && el.selectionEnd === el.value.length;
    if (ev.key === "Enter") to = neighbour(el, ev.shiftKey ? -1 : 1, 0) || nextTable(el, !ev.shiftKey);
    else if (ev.key === "ArrowDown") to = neighbour(el, 1, 0);
    else if (ev.key === "ArrowUp") to = neighbour(el, -1, 0);
    else if (ev.key === "ArrowRight" && end) to = neighbour(el, 0, 1);
    else if (ev.key === "ArrowLeft" && start) to = neighbour(el, 0, -1);
    else return;
    if (to) { ev.preventDefault(); to.focus(); to.select(); } else if (ev.key === "Enter") ev.preventDefault();
  });

  // the sheet: what `attn-tutor grade` reads (JSON is YAML); blank cells stay null
  function matrix(step) {
    const [n, m] = step.shape;
    const tables = document.querySelectorAll("table.ask");
    const table = tables[layout.steps.indexOf(step)];
    const g = grid(table);
    const rows = [];
    for (let i = 0; i < n; i++) {
      const row = [];
      for (let j = 0; j < m; j++) {
        const given = step.given[i + "," + j];
        if (given !== undefined) { row.push(given); continue; }
        const el = g.get(i + "," + j);
        const text = el ? el.value.replace(RE_STRIP, "") : "";
        row.push(text === "" ? null : text);
      }
      rows.push(row);
    }
    return rows;
  }
  function sheet() {
    const out = { lesson: layout.lesson, fingerprint: layout.fingerprint };
    if (layout.variant) out.variant = layout.variant;
    out.student = nameInput.value.replace(RE_STRIP, "");
    out.student_id = layout.student_id || "";
    const heads = layout.heads ? Array.from({ length: layout.heads }, () => ({})) : null;
    for (const step of layout.steps) {
      if (heads && step.head) heads[step.head - 1][step.name] = matrix(step);
      else out[step.name] = matrix(step);
    }
    if (heads) out.heads = heads;
    return out;
  }
  // YAML reads JSON, but refuses some characters JSON leaves raw: write those as \uXXXX
  function yamlSafe(json) {
    return json.replace(/[\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g,
      (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"));
  }
  function fileName(student) {
    const safe = (s) => s.replace(/[^\p{L}\p{N}_.-]+/gu, "-").replace(/^-+|-+$/g, "");
    return safe(layout.stem) + "-" + (safe(student) || "student") + "-sheet.json";
  }
  function download() {
    const student = nameInput.value.replace(RE_STRIP, "");
    if (!student) {
      status.textContent = "Write your name first: the sheet is saved under it.";
      nameInput.focus();
      return;
    }
    if (pending !== null) { clearTimeout(pending); save(); }
    const text = yamlSafe(JSON.stringify(sheet(), null, 1)) + "\n";
    const url = URL.createObjectURL(new Blob([text], { type: "application/json" }));
    const a = document.createElement("a");
    a.href = url;
    a.download = fileName(student);
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
    const bad = inputs.filter((el) => el.getAttribute("aria-invalid") === "true").length;
    const blank = inputs.filter((el) => !el.value.replace(RE_STRIP, "")).length;
    status.textContent = "Saved " + a.download + (blank ? "; " + blank + " cells blank" : "") +
      (bad ? "; " + bad + " cells cannot be read (marked)" : "") + ".";
  }
  for (const b of document.querySelectorAll('[data-action="download"]')) b.addEventListener("click", download);

  // a new name: the entries go with it (kept under the new name)
  nameInput.addEventListener("change", save);
})();
