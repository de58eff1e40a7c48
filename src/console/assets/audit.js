// Sergo console, audit: the export buttons take the filters as they are in
// the form, even before "Filter" is pressed.
"use strict";

(() => {
  const form = document.getElementById("audit-filters");
  if (!form) return;
  for (const link of document.querySelectorAll(".exports a")) {
    link.addEventListener("click", () => {
      const url = new URL(link.href);
      for (const name of ["from", "to", "key"]) {
        const value = form.elements[name].value.trim();
        if (value) url.searchParams.set(name, value);
        else url.searchParams.delete(name);
      }
      link.href = url.pathname + url.search;
    });
  }
})();
