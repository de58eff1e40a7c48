// Sergo console, documents: upload by drag and drop or by picking files,
// one request per file with its own progress bar.
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

  function item(file) {
    const li = document.createElement("li");
    li.className = "upload-item";
    const name = document.createElement("span");
    name.className = "upload-name";
    name.textContent = `${file.name} (${size(file.size)})`;
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
    row.li.classList.add(ok ? "done" : "failed");
    row.state.textContent = message;
    if (ok) row.bar.value = 100;
    else row.state.setAttribute("role", "alert");
    if (ok) Sergo.refreshList().catch(() => {});
  }

  function upload(file) {
    const row = item(file);
    if (file.size === 0) return finish(row, false, `"${file.name}" is empty — nothing was uploaded.`);
    if (file.size > maxBytes) {
      return finish(
        row,
        false,
        `"${file.name}" is larger than the upload limit of ${size(maxBytes)} — nothing was uploaded.`,
      );
    }
    const data = new FormData();
    if (form.dataset.folderId) data.append("folder_id", form.dataset.folderId);
    data.append("preset", document.getElementById("upload-preset").value);
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
    xhr.addEventListener("load", () => {
      let body = null;
      try {
        body = JSON.parse(xhr.responseText);
      } catch {
        body = null;
      }
      if (xhr.status === 201 && body?.documents?.length) {
        const doc = body.documents[0];
        finish(row, true, doc.status === "processing" ? "Uploaded — processing…" : "Uploaded.");
        return;
      }
      const message = body?.errors?.[0]?.message ?? body?.message ?? `The server answered ${xhr.status}`;
      finish(row, false, `${message.replace(/[.]$/, "")} — nothing was uploaded.`);
    });
    xhr.addEventListener(
      "error",
      () => finish(row, false, "The upload was cut off — check your connection and try again."),
    );
    xhr.send(data);
  }

  function uploadAll(files) {
    for (const file of files) upload(file);
  }

  input.addEventListener("change", () => {
    uploadAll([...input.files]);
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
    const files = [...(event.dataTransfer?.files ?? [])];
    if (files.length) uploadAll(files);
  });
})();
