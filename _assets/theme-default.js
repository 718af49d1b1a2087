// First visit: the theme stores no colour mode yet and logs "Got invalid theme mode" as an
// error. Start from "auto" (follow the reader's system setting) instead.
if (!document.documentElement.dataset.mode) {
  document.documentElement.dataset.mode = "auto";
}
