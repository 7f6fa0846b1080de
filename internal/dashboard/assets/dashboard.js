// Copy buttons: a button with data-copy="ID" copies the text of element
// ID to the clipboard (with the answer errors below, the page's only
// script of its own; htmx does the rest). Delegated, so that buttons
// swapped in by server-sent events work.
document.addEventListener("click", async (ev) => {
  const button = ev.target.closest("button[data-copy]");
  if (!button) return;
  const source = document.getElementById(button.dataset.copy);
  if (!source) return;
  try {
    await navigator.clipboard.writeText(source.textContent);
    button.textContent = "Copied";
  } catch (err) {
    const range = document.createRange();
    range.selectNodeContents(source);
    const sel = window.getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
    button.textContent = "Selected: press Ctrl+C";
  }
});

// A conflict's answer (Keep my value, Take the cloud's value) is posted by
// htmx; the page follows its effect through server-sent events. A refused
// answer (the conflict is gone, RBAC) is shown in #answer-error.
document.addEventListener("htmx:beforeRequest", () => {
  const box = document.getElementById("answer-error");
  if (box) box.hidden = true;
});
document.addEventListener("htmx:responseError", (ev) => {
  const box = document.getElementById("answer-error");
  if (!box) return;
  box.textContent = "Not answered: " + ev.detail.xhr.responseText.trim();
  box.hidden = false;
});
