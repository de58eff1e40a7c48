// Sergo console: the small script every page loads. Forms marked
// `data-api` call the REST API with the CSRF token; answers and errors are
// shown next to the form. Documents still being processed are watched.
"use strict";

(() => {
  const csrf = document.querySelector('meta[name="sergo-csrf"]')?.getAttribute("content") ?? "";

  /** Calls the API; resolves to the parsed JSON (or null), rejects with an Error carrying the server's sentence. */
  async function api(method, url, body) {
    const init = {
      method,
      headers: { "X-CSRF-Token": csrf, Accept: "application/json" },
      credentials: "same-origin",
    };
    if (body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    let response;
    try {
      response = await fetch(url, init);
    } catch {
      throw new Error("The server could not be reached — check your connection and try again.");
    }
    const text = await response.text();
    let data = null;
    try {
      data = text ? JSON.parse(text) : null;
    } catch {
      data = null;
    }
    if (!response.ok) {
      if (response.status === 401) throw new Error("Your session has ended — sign in again.");
      throw new Error(sentence(data?.message ?? `The server answered ${response.status}.`));
    }
    return data;
  }

  function sentence(text) {
    return /[.!?…]$/.test(text) ? text : `${text}.`;
  }

  /** Shows a message in a form's alert (or clears it). */
  function showError(form, message) {
    const alert = form.querySelector('[role="alert"]');
    if (!alert) return;
    alert.textContent = message ?? "";
    alert.hidden = !message;
  }

  // deno-lint-ignore no-control-regex
  const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
  const RULES = {
    "folder-name"(value) {
      const name = value.trim();
      if (name === "") return "Give the folder a name.";
      if (name.includes("/")) return `A folder name cannot contain "/" — "${name}" does.`;
      if (CONTROL.test(name)) return "A folder name cannot contain control characters.";
      if (name.length > 200) return `A folder name has at most 200 characters; this one has ${name.length}.`;
      if (name === "." || name === "..") return `"${name}" is not allowed as a folder name.`;
      return null;
    },
    // Every rule the name breaks, at once (the server says the same: src/domain/rules.ts).
    "key-name"(value) {
      if (value === "") return "Give the key a name.";
      const problems = [];
      const length = [...value].length;
      if (length < 2) problems.push("it needs at least 2 characters");
      if (length > 32) problems.push(`it may have at most 32 characters, and has ${length}`);
      if (!/^[a-z]/.test(value)) problems.push("it must start with a lowercase letter a-z");
      const bad = [...new Set(value.replace(/[a-z0-9-]/g, ""))];
      if (bad.length) {
        problems.push(`it may use only a-z, 0-9 and - (not ${bad.map((c) => JSON.stringify(c)).join(", ")})`);
      }
      if (problems.length === 0) return null;
      const rules = problems.length === 1 ? "a rule" : `${problems.length} rules`;
      return `“${value}” breaks ${rules}: ${problems.join("; ")}.`;
    },
    description(value) {
      if (value.length > 1000) {
        return `A description has at most 1,000 characters; this one has ${value.length}.`;
      }
      // deno-lint-ignore no-control-regex
      if (/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(value)) {
        return "A description cannot contain control characters.";
      }
      return null;
    },
  };

  /** The first rule broken by a form's fields, as a sentence; null when all pass. */
  function checkRules(form) {
    for (const field of form.querySelectorAll("[data-rule]")) {
      const rule = RULES[field.dataset.rule];
      const message = rule?.(field.value);
      if (message) {
        field.setAttribute("aria-invalid", "true");
        field.focus();
        return message;
      }
      field.removeAttribute("aria-invalid");
    }
    return null;
  }

  /** Reads a generic API form: fields into a JSON body, `data-query` fields into the query string. */
  function readForm(form) {
    const body = {};
    const query = new URLSearchParams();
    let hasBody = false;
    for (const field of form.elements) {
      if (!field.name || field.disabled) continue;
      if ((field.type === "checkbox" || field.type === "radio") && !field.checked) continue;
      let value = field.value;
      if (field.dataset.rule === "folder-name") value = value.trim();
      if (field.hasAttribute("data-query")) {
        query.set(field.name, value);
        continue;
      }
      body[field.name] = field.hasAttribute("data-null-if-empty") && value === "" ? null : value;
      hasBody = true;
    }
    const q = query.toString();
    return { body: hasBody ? body : undefined, query: q ? `?${q}` : "" };
  }

  async function submitGeneric(form) {
    showError(form, null);
    const broken = checkRules(form);
    if (broken) return showError(form, broken);
    if (form.dataset.confirm && !globalThis.confirm(form.dataset.confirm)) return;
    const method = form.dataset.method ?? "POST";
    const { body, query } = readForm(form);
    const button = form.querySelector('button[type="submit"]');
    if (button) button.disabled = true;
    try {
      const data = await api(method, form.dataset.api + query, method === "DELETE" ? undefined : body ?? {});
      const done = form.dataset.done ?? "reload";
      if (done === "reload") location.reload();
      else if (done === "goto-folder") location.assign(`/documents?folder=${encodeURIComponent(data.id)}`);
      else if (done.startsWith("goto:")) location.assign(done.slice(5));
    } catch (error) {
      showError(form, error.message);
      if (button) button.disabled = false;
    }
  }

  /** Makes the API forms inside `root` submit through the API. */
  function bindForms(root) {
    for (const form of root.querySelectorAll("form[data-api]")) {
      form.noValidate = true;
      if (!form.dataset.done || form.dataset.bound) continue;
      form.dataset.bound = "1";
      form.addEventListener("submit", (event) => {
        event.preventDefault();
        submitGeneric(form);
      });
    }
  }
  bindForms(document);

  // A description's character count, as you type.
  for (const field of document.querySelectorAll("[data-counter]")) {
    const counter = document.getElementById(field.dataset.counter);
    const update = () => {
      const n = field.value.length;
      counter.textContent = `${n.toLocaleString("en")} / 1,000${n > 1000 ? " — too long" : ""}`;
      counter.classList.toggle("bad", n > 1000);
    };
    field.addEventListener("input", update);
    update();
  }

  // Documents being processed: ask the API until they are done, then show the new status.
  let watching = null;
  function watchDocuments() {
    if (watching !== null) return;
    if (!document.querySelector('[data-document-id][data-status="processing"]')) return;
    watching = setInterval(async () => {
      let pending = 0;
      for (const el of document.querySelectorAll('[data-document-id][data-status="processing"]')) {
        try {
          const doc = await api("GET", `/api/documents/${el.dataset.documentId}`);
          if (doc.status === "processing") pending++;
          else if (el.hasAttribute("data-watch")) location.reload();
          else showDocumentStatus(el, doc);
        } catch {
          pending++;
        }
      }
      if (pending === 0) {
        clearInterval(watching);
        watching = null;
      }
    }, 1000);
  }
  watchDocuments();

  /**
   * Fetches this page again and swaps in its document list and its folder tree (a dropped folder makes
   * folders); uploads in progress keep their place.
   */
  async function refreshList() {
    const response = await fetch(location.href, { credentials: "same-origin" });
    const fresh = new DOMParser().parseFromString(await response.text(), "text/html");
    for (const id of ["document-list", "document-count", "folder-tree"]) {
      const next = fresh.getElementById(id);
      const old = document.getElementById(id);
      if (next && old) old.replaceWith(next);
    }
    const list = document.getElementById("document-list");
    if (list) bindForms(list);
    watchDocuments();
  }

  /** Fills a documents-table row with a document's new status, pages and pages to view. */
  function showDocumentStatus(row, doc) {
    row.dataset.status = doc.status;
    const status = row.querySelector('[data-cell="status"]');
    if (status) {
      status.textContent = "";
      const badge = document.createElement("span");
      badge.className = `badge ${
        doc.status === "searchable" ? "ok" : doc.status === "processing" ? "busy" : "warn"
      }`;
      badge.dataset.status = doc.status;
      badge.textContent = doc.status === "searchable"
        ? "Searchable"
        : doc.status === "processing"
        ? "Processing…"
        : "Not indexed";
      status.append(badge);
      if (doc.reason) {
        const reason = document.createElement("span");
        reason.className = "reason";
        reason.textContent = doc.reason;
        status.append(reason);
      }
    }
    const pages = row.querySelector('[data-cell="pages"]');
    if (pages) pages.textContent = doc.pages === null ? "—" : `${doc.pages_estimated ? "≈" : ""}${doc.pages}`;
    const toView = row.querySelector('[data-cell="to-view"]');
    if (toView) {
      // The same links and "+N more" chip the server draws (PagesToView in document_parts.tsx).
      toView.textContent = doc.pages_to_view.length ? "" : "—";
      const max = Number(toView.dataset.max ?? 8);
      const links = document.createElement("span");
      links.className = "page-links";
      for (const n of doc.pages_to_view.slice(0, max)) {
        const a = document.createElement("a");
        a.href = `/documents/${doc.id}?page=${n}#page-${n}`;
        a.title = `Page ${n} may hold a figure, chart or table`;
        a.textContent = String(n);
        links.append(a);
      }
      if (doc.pages_to_view.length > max) {
        const more = document.createElement("span");
        more.className = "muted";
        more.textContent = `+${doc.pages_to_view.length - max} more`;
        links.append(more);
      }
      if (doc.pages_to_view.length) toView.append(links);
    }
  }

  // One date format: the page shows UTC (2026-12-01 09:10 UTC); hovering shows the reader's local time.
  const localTimes = (root) => {
    for (const time of root.querySelectorAll("time[datetime]")) {
      const d = new Date(time.getAttribute("datetime"));
      if (Number.isNaN(d.getTime())) continue;
      const pad = (n) => String(n).padStart(2, "0");
      const offset = -d.getTimezoneOffset();
      const zone = `UTC${offset >= 0 ? "+" : "−"}${pad(Math.floor(Math.abs(offset) / 60))}:${
        pad(Math.abs(offset) % 60)
      }`;
      time.title = `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${
        pad(d.getMinutes())
      } your time (${zone})`;
    }
  };
  localTimes(document);
  /** A time as the console writes it everywhere: UTC, ISO-like. */
  const utc = (iso) => `${new Date(iso).toISOString().slice(0, 16).replace("T", " ")} UTC`;

  globalThis.Sergo = { api, csrf, showError, checkRules, rules: RULES, refreshList, utc, localTimes };
})();
