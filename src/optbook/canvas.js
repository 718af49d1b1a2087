// The live explorers' figure (optbook/canvas.py), an anywidget module. Python ships plotly.js
// (which sets window.Plotly) ahead of this file in the same module. Every change of the model's
// "figure" (the whole figure as plotly JSON) is drawn with Plotly.react, which updates the plot in
// place: no delta bookkeeping, so a lost or reordered message cannot leave a stale figure.
function render({ model, el }) {
  el.style.width = "100%";
  let drawing = Promise.resolve();
  const draw = () => {
    if (!el.isConnected) {  // plotly measures text and width: wait until the cell is on the page
      requestAnimationFrame(draw);
      return;
    }
    // Chained, each reading the model when it runs: the last figure sent is the one left drawn.
    drawing = drawing.then(() => {
      const fig = JSON.parse(model.get("figure"));
      return window.Plotly.react(el, fig.data || [], fig.layout || {}, { responsive: true, displaylogo: false });
    }).catch((err) => console.error("optbook canvas:", err));
  };
  draw();
  model.on("change:figure", draw);
  // The cell's width is known only once the output is laid out (and changes with the window).
  const resize = new ResizeObserver(() => {
    if (el.offsetWidth && el.classList.contains("js-plotly-plot")) window.Plotly.Plots.resize(el);
  });
  resize.observe(el);
  return () => {
    resize.disconnect();
    model.off("change:figure", draw);
    window.Plotly.purge(el);
  };
}

export default { render };
