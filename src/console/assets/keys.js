// Sergo console, keys: create, edit and roll agent keys and create personal
// keys through the API; a new value is shown once with the connection
// snippets; the key name is checked as you type.
"use strict";

(() => {
  const Sergo = globalThis.Sergo;
  const panel = document.getElementById("secret");

  /** A block of text with its copy button, in a row. */
  function copyRow(slotName, language, text, label) {
    const row = document.createElement("div");
    row.className = "copy-row";
    const pre = document.createElement("pre");
    pre.dataset.slot = slotName;
    pre.dataset.language = language;
    pre.textContent = text;
    const button = document.createElement("button");
    button.type = "button";
    button.dataset.copy = slotName;
    button.textContent = `Copy ${label}`;
    row.append(pre, button);
    return row;
  }

  /**
   * Fills a snippets list: one heading, hint, block and copy button per app
   * (see snippets.js), a warning where the address cannot work for the app,
   * and the line that puts the key in the environment where the file holds none.
   * `value` null shows a placeholder for the key.
   */
  function showSnippets(list, name, value) {
    list.replaceChildren();
    const source = list.closest("[data-public-url]");
    const oauth = source.dataset.oauth !== "off";
    const stdio = source.dataset.stdio ? JSON.parse(source.dataset.stdio) : undefined;
    const snippets = globalThis.SergoSnippets.connectionSnippets(name, source.dataset.publicUrl, value, {
      oauth,
      stdio,
    });
    // One app opened at a time: the page stays short enough to find yours.
    for (const s of snippets) {
      const item = document.createElement("details");
      item.className = "snippet";
      item.dataset.snippet = s.id;
      item.name = `${list.closest("[id]").id}-apps`;
      const title = document.createElement("summary");
      title.textContent = s.title;
      if (s.warning) {
        const flag = document.createElement("span");
        flag.className = "badge warn";
        flag.textContent = "needs https";
        title.append(" ", flag);
      }
      const where = document.createElement("p");
      where.className = "hint";
      where.textContent = s.where;
      item.append(title, where);
      if (s.warning) {
        const warning = document.createElement("p");
        warning.className = "warning";
        warning.dataset.warning = s.id;
        warning.textContent = s.warning;
        item.append(warning);
      }
      item.append(copyRow(s.id, s.language, s.text, s.app));
      if (s.secret) {
        const hint = document.createElement("p");
        hint.className = "hint";
        hint.textContent = `Then, in the environment ${s.app} starts from (not in the file):`;
        item.append(hint, copyRow(`${s.id}-secret`, "shell", s.secret.text, `${s.app} key line`));
      }
      list.append(item);
    }
    list.querySelector("details")?.setAttribute("open", "");
  }

  function slot(name) {
    return panel.querySelector(`[data-slot="${name}"]`);
  }

  /** Shows a new secret once, with the snippets for an agent key. */
  function showSecret({ title, value, name, note }) {
    slot("title").textContent = title;
    slot("value").textContent = value;
    if (name && slot("snippets")) showSnippets(slot("snippets"), name, value);
    slot("note").textContent = note ?? "";
    slot("note").hidden = !note;
    panel.hidden = false;
    panel.focus();
    panel.scrollIntoView({ block: "start" });
  }

  /** Copy buttons of a panel: the block named by the button's data-copy goes to the clipboard. */
  function copyButtons(box) {
    const find = (name) => box.querySelector(`[data-slot="${name}"]`);
    box.addEventListener("click", async (event) => {
      const button = event.target.closest("[data-copy]");
      if (!button) return;
      const text = find(button.dataset.copy).textContent;
      try {
        await navigator.clipboard.writeText(text);
        find("copied").textContent = `${
          button.textContent.replace("Copy ", "").replace(/^./, (c) => c.toUpperCase())
        } copied.`;
      } catch {
        const range = document.createRange();
        range.selectNodeContents(find(button.dataset.copy));
        getSelection().removeAllRanges();
        getSelection().addRange(range);
        find("copied").textContent = "Selected — press Ctrl+C (or ⌘C) to copy.";
      }
    });
  }

  if (panel) copyButtons(panel);

  // The key's page: the snippets with a placeholder where the key goes.
  const connect = document.getElementById("connect");
  if (connect) {
    showSnippets(connect.querySelector('[data-slot="snippets"]'), connect.dataset.keyName, null);
    copyButtons(connect);
  }

  // The key name, checked as you type.
  for (const field of document.querySelectorAll('[data-rule="key-name"]')) {
    const out = document.getElementById(field.getAttribute("aria-describedby").split(" ")[1]);
    const check = () => {
      if (field.value === "") {
        out.textContent = "";
        out.className = "field-check";
        field.removeAttribute("aria-invalid");
        return;
      }
      const message = Sergo.rules["key-name"](field.value);
      out.textContent = message ?? `“${field.value}” is a good name.`;
      out.className = `field-check ${message ? "bad" : "good"}`;
      if (message) field.setAttribute("aria-invalid", "true");
      else field.removeAttribute("aria-invalid");
    };
    field.addEventListener("input", check);
    check();
  }

  // A checked folder covers everything inside it: its documents and folders need no box of their own.
  for (const tree of document.querySelectorAll(".checks")) {
    const cover = () => {
      const folders = [...tree.querySelectorAll('input[name="folders"]:checked')];
      for (const box of tree.querySelectorAll("input[type=checkbox]")) {
        const covered = folders.some((folder) => folder !== box && folder.closest("li").contains(box));
        box.disabled = covered;
        box.closest("li").classList.toggle("covered", covered);
      }
    };
    tree.addEventListener("change", cover);
    cover();
  }

  function keyBody(form) {
    const checked = (name) =>
      [...form.querySelectorAll(`input[name="${name}"]:checked:not(:disabled)`)].map((box) => box.value);
    return {
      name: form.elements.name.value,
      description: form.elements.description.value,
      can_read: { folders: checked("folders"), documents: checked("documents") },
    };
  }

  function bind(id, run) {
    const form = document.getElementById(id);
    if (!form) return;
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      Sergo.showError(form, null);
      const broken = Sergo.checkRules(form);
      if (broken) return Sergo.showError(form, broken);
      const button = form.querySelector('button[type="submit"]');
      button.disabled = true;
      try {
        await run(form);
      } catch (error) {
        Sergo.showError(form, error.message);
      } finally {
        button.disabled = false;
      }
    });
  }

  /** Puts a new key in the list below the panel (in place of "No agent keys yet."). */
  function listKey(key) {
    let list = document.querySelector(".key-list");
    if (!list) {
      list = document.createElement("ul");
      list.className = "key-list";
      document.getElementById("no-keys")?.replaceWith(list);
    }
    const item = document.createElement("li");
    item.className = "card key";
    item.dataset.keyName = key.name;
    const head = document.createElement("div");
    head.className = "key-head";
    const title = document.createElement("h2");
    const link = document.createElement("a");
    link.href = `/keys/${key.id}`;
    link.textContent = key.name;
    title.append(link);
    const masked = document.createElement("code");
    masked.className = "masked";
    masked.textContent = key.key;
    head.append(title, masked);
    item.append(head);
    if (key.description) {
      const description = document.createElement("p");
      description.className = "description";
      description.textContent = key.description;
      item.append(description);
    }
    const made = document.createElement("p");
    made.className = "muted small";
    made.textContent = "Created just now · not used yet";
    const edit = document.createElement("a");
    edit.href = `/keys/${key.id}`;
    edit.className = "button";
    edit.textContent = "Edit, roll or delete";
    item.append(made, edit);
    list.append(item);
  }

  bind("key-create", async (form) => {
    const key = await Sergo.api("POST", form.dataset.api, keyBody(form));
    listKey(key);
    form.closest("section").hidden = true;
    showSecret({ title: `Your new key “${key.name}”`, value: key.value, name: key.name });
  });

  bind("key-edit", async (form) => {
    const key = await Sergo.api("PATCH", form.dataset.api, keyBody(form));
    const saved = form.querySelector('[data-slot="saved"]');
    saved.textContent = "Saved. Apps see the new settings in the MCP server's next answers.";
    saved.hidden = false;
    if (key.name !== form.dataset.currentName) {
      form.dataset.currentName = key.name;
      document.querySelector("h1").textContent = key.name;
    }
  });

  // Roll: say until when the current value works, for the chosen grace time.
  const roll = document.getElementById("key-roll");
  if (roll) {
    const until = document.getElementById("roll-until");
    const update = () => {
      const choice = roll.querySelector('input[name="grace"]:checked');
      const ms = Number(choice?.dataset.ms ?? 0);
      until.textContent = ms === 0
        ? "The current value stops working as soon as you roll."
        : `The current value keeps working until about ${
          Sergo.utc(new Date(Date.now() + ms).toISOString())
        }.`;
    };
    roll.addEventListener("change", update);
    update();
  }

  bind("key-roll", async (form) => {
    const grace = form.querySelector('input[name="grace"]:checked')?.value;
    if (!grace) throw new Error("Choose when the current value stops working.");
    const name = document.getElementById("key-edit")?.dataset.currentName;
    const rolled = await Sergo.api("POST", form.dataset.api, { grace });
    const note = grace === "now"
      ? "The old value has stopped working."
      : `The old value keeps working until ${Sergo.utc(rolled.old_value_works_until)}.`;
    showSecret({
      title: `The new value of “${rolled.name ?? name}”`,
      value: rolled.value,
      name: rolled.name ?? name,
      note,
    });
  });

  bind("personal-key-create", async (form) => {
    const key = await Sergo.api("POST", form.dataset.api, {});
    form.hidden = true;
    showSecret({ title: "Your new personal key", value: key.value });
  });
})();
