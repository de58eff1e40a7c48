// Sergo console, documents: upload by drag and drop or by picking files,
// or a whole folder (its folders made here), one request per file with its
// own progress bar, each followed to its end state; a file already in the
// folder is refused with an "Upload anyway" button.
"use strict";

(() => {
  const form = document.getElementById("upload");
  const list = document.getElementById("upload-list");
  const input = document.getElementById("upload-files");
  if (!form || !list || !input) return;
  const Sergo = globalThis.Sergo;
  const maxBytes = Number(form.dataset.maxBytes);

  function size(bytes) {
    if (bytes < 1024) return `${bytes} B`;
    if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`;
    return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
  }

  function item(file, subfolder = "") {
    const li = document.createElement("li");
    li.className = "upload-item";
    li.dataset.name = `${subfolder ? `${subfolder}/` : ""}${file.name}`;
    const name = document.createElement("span");
    name.className = "upload-name";
    name.textContent = `${subfolder ? `${subfolder}/` : ""}${file.name} (${size(file.size)})`;
    const bar = document.createElement("progress");
    bar.max = 100;
    bar.value = 0;
    bar.setAttribute("aria-label", `Upload of ${file.name}`);
    const state = document.createElement("span");
    state.className = "upload-state";
    state.textContent = "Waiting…";
    li.append(name, bar, state);
    list.append(li);
    return { li, bar, state };
  }

  function finish(row, ok, message) {
    row.li.classList.remove("done", "failed");
    row.li.classList.add(ok ? "done" : "failed");
    row.state.textContent = message;
    if (ok) row.bar.value = 100;
    else row.state.setAttribute("role", "alert");
    if (ok) Sergo.refreshList().catch(() => {});
  }

  /**
   * A scan read with Basic: its pages with no text layer are not searchable.
   * Offers Standard right there, when this server has a transcriber.
   */
  function offerStandard(row, doc) {
    const standard = document.querySelector('#upload-preset option[value="standard"]');
    const scanned = doc.image_only_pages ?? [];
    if (doc.preset !== "basic" || scanned.length === 0 || !standard || standard.disabled) return;
    const note = document.createElement("span");
    note.className = "upload-scan";
    const all = doc.pages !== null && scanned.length >= doc.pages;
    note.textContent = all
      ? "It looks like a scan: no page has a text layer, so Basic found nothing to search."
      : `${scanned.length} of its pages look scanned (no text layer): Basic could not read them.`;
    const button = document.createElement("button");
    button.type = "button";
    button.className = "primary process-standard";
    button.textContent = "Read the scanned pages with Standard";
    button.addEventListener("click", async () => {
      button.disabled = true;
      try {
        const again = await Sergo.api("POST", `/api/documents/${doc.id}/process`, { preset: "standard" });
        note.remove();
        button.remove();
        row.li.classList.remove("done", "failed", "warned");
        row.state.removeAttribute("role");
        // Followed from "processing": the answer may still show the Basic result.
        follow(row, { ...doc, ...again, status: "processing" });
      } catch (error) {
        button.disabled = false;
        note.textContent = error.message;
      }
    });
    row.li.append(note, button);
  }

  /** Follows an uploaded document to its end: searchable, not indexed (with the reason), or still failing. */
  async function follow(row, doc) {
    for (;;) {
      if (doc.status === "searchable") {
        const pages = doc.pages === null
          ? ""
          : ` — ${doc.pages_estimated ? "about " : ""}${doc.pages} page${doc.pages === 1 ? "" : "s"}`;
        row.li.dataset.status = "searchable";
        finish(row, true, `Searchable${pages}.`);
        return offerStandard(row, doc);
      }
      if (doc.status === "not_indexed") {
        row.li.dataset.status = "not_indexed";
        finish(row, false, `Not indexed: ${(doc.reason ?? "no text to search").replace(/[.]$/, "")}.`);
        row.li.classList.replace("failed", "warned");
        return offerStandard(row, doc);
      }
      row.li.dataset.status = "processing";
      const done = doc.transcribed
        ? ` (${doc.transcribed.pages_done} of ${doc.transcribed.pages_total} pages)`
        : "";
      row.state.textContent = `Uploaded — processing${done}…`;
      await new Promise((resolve) => setTimeout(resolve, 1000));
      try {
        doc = await Sergo.api("GET", `/api/documents/${doc.id}`);
      } catch (error) {
        if (/No document/.test(error.message)) return finish(row, false, "Deleted before it was processed.");
        await new Promise((resolve) => setTimeout(resolve, 2000));
      }
    }
  }

  // At most two uploads at a time: the server takes a few per person at once.
  const queue = [];
  let running = 0;
  function pump() {
    while (running < 2 && queue.length) {
      const job = queue.shift();
      running++;
      job().finally(() => {
        running--;
        pump();
      });
    }
  }

  function upload(file, subfolder = "", row = item(file, subfolder), anyway = false) {
    if (file.size === 0) return finish(row, false, `"${file.name}" is empty — nothing was uploaded.`);
    if (file.size > maxBytes) {
      return finish(
        row,
        false,
        `"${file.name}" is larger than the upload limit of ${size(maxBytes)} — nothing was uploaded.`,
      );
    }
    queue.push(() => send(file, subfolder, row, anyway));
    pump();
  }

  function send(file, subfolder, row, anyway) {
    const data = new FormData();
    if (form.dataset.folderId) data.append("folder_id", form.dataset.folderId);
    if (subfolder) data.append("subfolder", subfolder);
    data.append("preset", document.getElementById("upload-preset").value);
    data.append("duplicates", anyway ? "keep" : "refuse");
    data.append("file", file, file.name);
    const xhr = new XMLHttpRequest();
    xhr.open("POST", "/api/documents");
    xhr.setRequestHeader("X-CSRF-Token", Sergo.csrf);
    xhr.setRequestHeader("Accept", "application/json");
    xhr.upload.addEventListener("progress", (event) => {
      if (!event.lengthComputable) return;
      row.bar.value = Math.round((event.loaded / event.total) * 100);
      row.state.textContent = event.loaded < event.total ? `${row.bar.value}%` : "Checking…";
    });
    return new Promise((resolve) => {
      xhr.addEventListener("load", () => {
        resolve();
        let body = null;
        try {
          body = JSON.parse(xhr.responseText);
        } catch {
          body = null;
        }
        if (xhr.status === 201 && body?.documents?.length) {
          row.bar.value = 100;
          Sergo.refreshList().catch(() => {});
          follow(row, body.documents[0]);
          return;
        }
        const code = body?.errors?.[0]?.code ?? body?.code;
        const message = body?.errors?.[0]?.message ?? body?.message ?? `The server answered ${xhr.status}`;
        if (code === "conflict" && /Upload anyway/.test(message)) {
          row.li.dataset.status = "duplicate";
          finish(row, false, `${message.replace(/: choose .*$/, "")} — nothing was uploaded.`);
          const again = document.createElement("button");
          again.type = "button";
          again.className = "upload-anyway";
          again.textContent = "Upload anyway";
          again.addEventListener("click", () => {
            again.remove();
            row.state.removeAttribute("role");
            row.li.dataset.status = "";
            row.state.textContent = "Waiting…";
            upload(file, subfolder, row, true);
          });
          row.li.append(again);
          return;
        }
        row.li.dataset.status = "refused";
        finish(row, false, `${message.replace(/[.]$/, "")} — nothing was uploaded.`);
      });
      xhr.addEventListener("error", () => {
        resolve();
        finish(row, false, "The upload was cut off — check your connection and try again.");
      });
      xhr.send(data);
    });
  }

  /** Each file with the folders it sits in below the dropped or picked folder ("" for loose files). */
  function uploadAll(entries) {
    for (const { file, subfolder } of entries) upload(file, subfolder);
  }

  /** A file's folders inside the picked folder: "Reports/2024/a.pdf" gives "Reports/2024". */
  function folderOf(relativePath) {
    const parts = relativePath.split("/").filter(Boolean);
    return parts.slice(0, -1).join("/");
  }

  /** Walks a dropped directory entry; resolves to its files with their folders. */
  async function walk(entry, path) {
    if (entry.isFile) {
      const file = await new Promise((resolve, reject) => entry.file(resolve, reject));
      return [{ file, subfolder: path }];
    }
    const reader = entry.createReader();
    const children = [];
    for (;;) {
      const batch = await new Promise((resolve, reject) => reader.readEntries(resolve, reject));
      if (batch.length === 0) break;
      children.push(...batch);
    }
    const here = path ? `${path}/${entry.name}` : entry.name;
    const out = [];
    for (const child of children) out.push(...await walk(child, here));
    return out;
  }

  const folderInput = document.getElementById("upload-folder");
  folderInput?.addEventListener("change", () => {
    uploadAll(
      [...folderInput.files].map((file) => ({
        file,
        subfolder: folderOf(file.webkitRelativePath || file.name),
      })),
    );
    folderInput.value = "";
  });

  input.addEventListener("change", () => {
    uploadAll([...input.files].map((file) => ({ file, subfolder: "" })));
    input.value = "";
  });
  form.addEventListener("submit", (event) => event.preventDefault());
  for (const type of ["dragenter", "dragover"]) {
    form.addEventListener(type, (event) => {
      event.preventDefault();
      form.classList.add("dragging");
    });
  }
  for (const type of ["dragleave", "dragend"]) {
    form.addEventListener(type, () => form.classList.remove("dragging"));
  }
  form.addEventListener("drop", (event) => {
    event.preventDefault();
    form.classList.remove("dragging");
    const items = [...(event.dataTransfer?.items ?? [])];
    const entries = items.map((it) => it.webkitGetAsEntry?.()).filter(Boolean);
    if (entries.some((entry) => entry.isDirectory)) {
      Promise.all(entries.map((entry) => walk(entry, ""))).then((lists) => uploadAll(lists.flat()));
      return;
    }
    const files = [...(event.dataTransfer?.files ?? [])];
    if (files.length) uploadAll(files.map((file) => ({ file, subfolder: "" })));
  });
})();
