/* The book's figures (see src/optbook/viz/renderer.py, which writes them).
 *
 * Each <figure class="optbook-figure"> holds its plotly figure as JSON, a native range input per
 * slider and a caption. This script, added (deferred) only to pages that have figures, loads the
 * smallest plotly.js bundle that draws every trace type on the page, draws each figure as it nears
 * the screen, and adapts it:
 *  - to the colour theme: transparent backgrounds, light text and grid, the palette's dark-mode
 *    colours (window.OPTBOOK_THEME, written from optbook.viz.style by the book's Sphinx extension);
 *  - to the width: below 600 px, side-by-side panels are stacked, colour bars lie under their
 *    panel, margins and fonts shrink.
 * The range inputs drive the figure's frames, from the keyboard (arrows, Home, End) or by touch.
 * window.optbookFigures.drawAll() draws every figure at once (printing, tests).
 */
(function () {
  "use strict";
  var figures = Array.prototype.slice.call(document.querySelectorAll("figure.optbook-figure"));
  if (!figures.length) return;

  var here = document.currentScript ? document.currentScript.src : "";
  var STATIC = here.replace(/[^/]*$/, "");
  var THEME = window.OPTBOOK_THEME || { templates: {}, palette: [], paletteDark: [] };
  var NARROW = 600;
  // Trace types of plotly's partial bundles (README of each plotly.js-*-dist-min package).
  var BUNDLES = [
    ["plotly/plotly-cartesian.min.js", ["bar", "box", "contour", "heatmap", "histogram", "histogram2d",
      "histogram2dcontour", "image", "pie", "scatter", "scatterternary", "violin"]],
    ["plotly/plotly-gl3d.min.js", ["cone", "isosurface", "mesh3d", "scatter", "scatter3d", "streamtube",
      "surface", "volume"]],
  ];
  var FULL = "plotly/plotly.min.js";

  function bundleFor(types) {
    for (var i = 0; i < BUNDLES.length; i++) {
      var has = BUNDLES[i][1];
      if (types.every(function (t) { return has.indexOf(t) >= 0; })) return BUNDLES[i][0];
    }
    return FULL;
  }

  var pageTypes = [];
  figures.forEach(function (el) {
    (el.getAttribute("data-types") || "scatter").split(/\s+/).forEach(function (t) {
      if (t && pageTypes.indexOf(t) < 0) pageTypes.push(t);
    });
  });

  var plotlyPromise = null;
  function loadPlotly() {
    if (window.Plotly) return Promise.resolve(window.Plotly);
    if (!plotlyPromise) {
      plotlyPromise = new Promise(function (resolve, reject) {
        var s = document.createElement("script");
        s.src = STATIC + bundleFor(pageTypes);
        s.async = true;
        s.onload = function () { resolve(window.Plotly); };
        s.onerror = function () { reject(new Error("could not load " + s.src)); };
        document.head.appendChild(s);
      });
    }
    return plotlyPromise;
  }

  /* ---------- colours ---------- */
  function isDark() { return document.documentElement.getAttribute("data-theme") === "dark"; }
  function cssVar(name, fallback) {
    var v = getComputedStyle(document.documentElement).getPropertyValue(name).trim();
    return v || fallback;
  }
  function rgb(color) {
    if (typeof color !== "string") return null;
    var c = color.trim().toLowerCase(), m;
    if (c === "black") return [0, 0, 0, 1];
    if (c === "white") return [255, 255, 255, 1];
    if ((m = /^#([0-9a-f]{3})$/.exec(c))) return [0, 1, 2].map(function (i) { return 17 * parseInt(m[1][i], 16); }).concat([1]);
    if ((m = /^#([0-9a-f]{6})$/.exec(c))) return [0, 2, 4].map(function (i) { return parseInt(m[1].substr(i, 2), 16); }).concat([1]);
    if ((m = /^rgba?\(([^)]+)\)$/.exec(c))) {
      var p = m[1].split(",").map(parseFloat);
      return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
    }
    return null;
  }
  function luminance(c) {
    var f = function (v) { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]);
  }

  // Dark mode: palette colours to their dark twins, near-black strokes and text to light grey,
  // light boxes (legend, annotation backgrounds) to translucent dark. Colour scales are left as
  // they are (viridis reads on both).
  function darkColors(value, key, text) {
    if (key === "colorway" && Array.isArray(value)) return value.map(function (v) { return darkColors(v, "color", text); });
    if (Array.isArray(value)) return value.map(function (v) { return darkColors(v, key, text); });
    if (value && typeof value === "object") {
      var out = {};
      Object.keys(value).forEach(function (k) {
        out[k] = /colorscale$/i.test(k) ? value[k] : darkColors(value[k], k, text);
      });
      return out;
    }
    if (typeof value !== "string" || !/color$/i.test(key || "")) return value;
    var i = THEME.palette.map(function (c) { return c.toLowerCase(); }).indexOf(value.toLowerCase());
    if (i >= 0) return THEME.paletteDark[i];
    var c = rgb(value);
    if (!c) return value;
    var lum = luminance(c);
    if (/bgcolor$/i.test(key) && lum > 0.7) return "rgba(20,24,30," + Math.min(c[3], 0.85) + ")";
    if (!/bgcolor$|fillcolor$/i.test(key) && lum < 0.12) return text;
    return value;
  }

  function darkLayout(layout, text) {
    var grid = "rgba(206,214,221,0.14)", line = "rgba(206,214,221,0.45)";
    layout = darkColors(layout, "", text);
    layout.paper_bgcolor = "rgba(0,0,0,0)";
    layout.plot_bgcolor = "rgba(0,0,0,0)";
    layout.font = Object.assign({}, layout.font, { color: text });
    Object.keys(layout).forEach(function (k) {
      if (/^[xy]axis\d*$/.test(k)) {
        layout[k] = Object.assign({ gridcolor: grid, zerolinecolor: line }, layout[k]);
        layout[k].gridcolor = grid;
        layout[k].zerolinecolor = line;
        if (!layout[k].linecolor || luminance(rgb(layout[k].linecolor) || [136, 136, 136]) < 0.4) layout[k].linecolor = line;
      }
    });
    var page = cssVar("--pst-color-background", "#14181e");
    (layout.shapes || []).forEach(function (s) {
      var fill = rgb(s.fillcolor);
      if (fill && s.layer === "above" && s.opacity === undefined && luminance(fill) > 0.9) {
        // An opaque white shape drawn over the plot masks part of it (e.g. the outside of a
        // triangle): it must take the page's colour, not stay a white block.
        s.fillcolor = page;
      } else if (s.fillcolor && (s.layer === "below" || s.opacity !== undefined)) {
        // Pale phase shading would glare on a dark page: keep a hint of it.
        s.opacity = Math.min(s.opacity === undefined ? 1 : s.opacity, 0.2);
      }
    });
    if (layout.legend) layout.legend.bgcolor = "rgba(0,0,0,0)";
    return layout;
  }

  function darkTemplate(template, text) {
    if (!template) return template;
    var t = JSON.parse(JSON.stringify(template));
    var lay = t.layout || (t.layout = {});
    var grid = "rgba(206,214,221,0.14)", line = "rgba(206,214,221,0.45)";
    lay.paper_bgcolor = lay.plot_bgcolor = "rgba(0,0,0,0)";
    lay.font = Object.assign({}, lay.font, { color: text });
    ["xaxis", "yaxis"].forEach(function (a) {
      lay[a] = Object.assign({}, lay[a], { gridcolor: grid, linecolor: line, zerolinecolor: line });
    });
    lay.scene = lay.scene || {};
    ["xaxis", "yaxis", "zaxis"].forEach(function (a) {
      lay.scene[a] = Object.assign({}, lay.scene[a], { backgroundcolor: "rgba(0,0,0,0)", gridcolor: grid,
        linecolor: line, zerolinecolor: line });
    });
    lay.hoverlabel = Object.assign({}, lay.hoverlabel, { bgcolor: "#29313d", font: { color: "#f3f4f5" } });
    lay.annotationdefaults = Object.assign({}, lay.annotationdefaults, { arrowcolor: text });
    return t;
  }

  /* ---------- narrow screens ---------- */
  function domainOf(axis) { return (axis && axis.domain) ? axis.domain.slice() : [0, 1]; }

  function panelsOf(data, layout) {
    var panels = [], seen = {};
    data.forEach(function (t, i) {
      var three = /3d$|^surface$|^mesh3d$|^cone$|^streamtube$|^isosurface$|^volume$/.test(t.type || "");
      var key = three ? (t.scene || "scene") : (t.xaxis || "x") + " " + (t.yaxis || "y");
      if (!seen[key]) {
        var p = { key: key, three: three, traces: [] };
        if (three) {
          var d = (layout[p.key] || {}).domain || {};
          p.x = (d.x || [0, 1]).slice(); p.y = (d.y || [0, 1]).slice();
        } else {
          var xy = key.split(" ");
          p.xa = xy[0].replace("x", "xaxis"); p.ya = xy[1].replace("y", "yaxis");
          p.x = domainOf(layout[p.xa]); p.y = domainOf(layout[p.ya]);
        }
        seen[key] = p; panels.push(p);
      }
      seen[key].traces.push(i);
    });
    return panels;
  }

  function hasColorbar(t) {
    if (/^(contour|heatmap|surface|histogram2d|histogram2dcontour)$/.test(t.type || "")) return t.showscale !== false;
    var m = t.marker;  // a scatter's colour bar: asked for, or implied by colorbar settings
    return !!(m && (m.showscale || (m.colorbar && m.showscale !== false && m.color && typeof m.color !== "string")));
  }

  // Labels of named regions along the top (optbook.viz.phase_layout) collide on a phone: every
  // other one moves down a line.
  function staggerRegionLabels(layout) {
    var labels = (layout.annotations || []).filter(function (a) {
      return /^x\d*$/.test(a.xref || "") && a.yref === "paper" && a.showarrow === false && typeof a.x === "number";
    }).sort(function (a, b) { return a.x - b.x; });
    labels.forEach(function (a, k) { if (k % 2) { a.yshift = (a.yshift || 0) - 14; } });
  }

  // domainRefs: one x-y panel, whose notes in paper coordinates should follow the axes when a
  // fixed aspect ratio shrinks them inside the paper (as it does on a narrow screen).
  function narrowAnnotations(layout, domainRefs) {
    (layout.annotations || []).forEach(function (a) {
      a.font = Object.assign({}, a.font, { size: Math.min((a.font && a.font.size) || 12, 10) });
      if (domainRefs && a.xref === "paper" && a.yref === "paper" && a.x >= 0 && a.x <= 1 && a.y >= 0 && a.y <= 1) {
        a.xref = "x domain"; a.yref = "y domain";
      }
    });
    staggerRegionLabels(layout);
  }

  // An axis title longer than its axis breaks between words (plotly never wraps).
  function wrapText(text, maxChars) {
    if (typeof text !== "string" || text.length <= maxChars || /<br/i.test(text) || /<[^>]*\s[^>]*>/.test(text)) return text;
    var lines = [], line = "";
    text.split(" ").forEach(function (w) {
      if (line && (line + " " + w).replace(/<[^>]+>/g, "").length > maxChars) { lines.push(line); line = w; }
      else line = line ? line + " " + w : w;
    });
    lines.push(line);
    return lines.join("<br>");
  }

  function wrapAxisTitles(layout, width, height) {
    Object.keys(layout).forEach(function (k) {
      var ax = layout[k], m = /^([xy])axis\d*$/.exec(k);
      if (!m || !ax || typeof ax !== "object") return;
      ax.automargin = true;  // room for tick labels and a wrapped title
      var t = ax.title;
      var text = typeof t === "string" ? t : t && t.text;
      var span = (m[1] === "x" ? width : height) * ((ax.domain || [0, 1])[1] - (ax.domain || [0, 1])[0]);
      var wrapped = wrapText(text, Math.min(40, Math.max(16, Math.floor(span / 7.5))));
      if (wrapped !== text) ax.title = Object.assign({}, typeof t === "string" ? {} : t, { text: wrapped });
    });
  }

  function narrowView(data, layout, width) {
    var m = Object.assign({ l: 70, r: 20, t: 70, b: 60 }, layout.margin);
    // Notes a chapter placed in the bottom margin (paper y < 0) keep the room they were given.
    var notesBelow = (layout.annotations || []).some(function (a) { return a.yref === "paper" && a.y < 0; });
    m.l = Math.min(m.l, 52); m.r = Math.min(m.r, 12); m.b = notesBelow ? m.b : Math.min(m.b, 50);
    layout.margin = m;
    layout.font = Object.assign({}, layout.font, { size: Math.min((layout.font || {}).size || 12, 11) });
    if (layout.legend) layout.legend.font = Object.assign({}, layout.legend.font, { size: 11 });
    var panels = panelsOf(data, layout);
    var onePanel = panels.length === 1 && panels[0].key === "x y";
    narrowAnnotations(layout, onePanel);

    var sideBySide = panels.some(function (p, i) {
      return panels.some(function (q, j) {
        return i !== j && Math.min(p.y[1], q.y[1]) - Math.max(p.y[0], q.y[0]) > 0.05 &&
          Math.min(p.x[1], q.x[1]) - Math.max(p.x[0], q.x[0]) < 0.05;
      });
    });
    var bars = panels.map(function (p) { return p.traces.some(function (i) { return hasColorbar(data[i]); }); });
    var BAR = 46, GAP = 64, PANEL = panels.length > 1 && sideBySide ? 250 : null, stacked = false;

    if (PANEL) {
      // Stack the panels top to bottom in reading order, each across the full width.
      var order = panels.map(function (p, i) { return i; }).sort(function (i, j) {
        var a = panels[i], b = panels[j];
        return (b.y[1] - a.y[1]) || (a.x[0] - b.x[0]);
      });
      var heights = order.map(function (i) { return PANEL + GAP + (bars[i] ? BAR : 0); });
      var plotH = heights.reduce(function (s, h) { return s + h; }, 0) - GAP;
      var top = plotH, oldTitles = [];
      (layout.annotations || []).forEach(function (a) {
        if (a.xref === "paper" && a.yref === "paper" && a.showarrow === false) oldTitles.push(a);
      });
      order.forEach(function (i, k) {
        var p = panels[i];
        var y1 = top / plotH, y0 = (top - PANEL) / plotH;
        var title = oldTitles.filter(function (a) {
          return Math.abs(a.x - (p.x[0] + p.x[1]) / 2) < 0.02 && Math.abs(a.y - p.y[1]) < 0.02;
        })[0];
        if (p.three) {
          layout[p.key] = Object.assign({}, layout[p.key], { domain: { x: [0, 1], y: [y0, y1] } });
        } else {
          layout[p.xa] = Object.assign({}, layout[p.xa], { domain: [0, 1] });
          layout[p.ya] = Object.assign({}, layout[p.ya], { domain: [y0, y1] });
        }
        if (title) { title.x = 0.5; title.y = y1; }
        p.bottom = y0; p.px = PANEL; p.plotH = plotH;
        top -= heights[k];
      });
      layout.height = m.t + plotH + m.b;
      stacked = true;
    } else {
      panels.forEach(function (p) { p.bottom = p.y[0]; p.plotH = (layout.height || 450) - m.t - m.b; });
      if (bars.some(Boolean)) { m.b += BAR; layout.height = (layout.height || 450) + BAR; }
    }
    // Colour bars lie under their panel, across its width, below the x-axis title.
    panels.forEach(function (p, k) {
      if (!bars[k]) return;
      var below = 52 / p.plotH;
      p.traces.forEach(function (i) {
        var t = data[i];
        if (!hasColorbar(t)) return;
        var onMarker = !!(t.marker && (t.marker.showscale || t.marker.colorbar));
        var cb = Object.assign({}, onMarker ? t.marker.colorbar : t.colorbar, { orientation: "h", x: 0.5, xanchor: "center", xref: "paper",
          y: p.bottom - below, yanchor: "top", yref: "paper", len: 0.9, lenmode: "fraction", thickness: 10 });
        if (cb.title) cb.title = Object.assign({}, typeof cb.title === "string" ? { text: cb.title } : cb.title, { side: "top" });
        if (onMarker) t.marker = Object.assign({}, t.marker, { colorbar: cb });
        else t.colorbar = cb;
      });
    });
    wrapAxisTitles(layout, width - m.l - m.r, (layout.height || 450) - m.t - m.b);
    return { layout: layout, stacked: stacked, onePanel: onePanel };
  }

  // A caption that points left and right, once the panels are stacked.
  function stackedCaption(html) {
    return html.replace(/\(left\)/g, "(top)").replace(/\(right\)/g, "(bottom)")
      .replace(/\bleft panel/g, "top panel").replace(/\bright panel/g, "bottom panel")
      .replace(/\bLeft panel/g, "Top panel").replace(/\bRight panel/g, "Bottom panel")
      .replace(/\bon the left\b/g, "on top").replace(/\bon the right\b/g, "below");
  }

  /* ---------- one figure ---------- */
  function view(st) {
    var spec = st.spec, dark = isDark(), text = cssVar("--pst-color-text-base", "#ced6dd");
    var data = JSON.parse(JSON.stringify(spec.data));
    var layout = JSON.parse(JSON.stringify(spec.layout));
    var frames = spec.frames ? JSON.parse(JSON.stringify(spec.frames)) : undefined;
    var template = spec.template ? THEME.templates[spec.template] : layout.template;
    if (dark) {
      template = darkTemplate(template, text);
      data = darkColors(data, "", text);
      layout = darkLayout(layout, text);
      if (frames) frames = frames.map(function (f) {
        f = darkColors(f, "", text);
        if (f.layout) f.layout = darkLayout(f.layout, text);
        return f;
      });
    }
    if (template) layout.template = template;
    var stacked = false;
    if (st.narrow) {
      var nv = narrowView(data, layout, st.el.clientWidth);
      layout = nv.layout; stacked = nv.stacked;
      (frames || []).forEach(function (f) { if (f.layout) narrowAnnotations(f.layout, nv.onePanel); });
    }
    var cap = st.el.querySelector("figcaption");
    if (cap) {
      if (st.caption === undefined) st.caption = cap.innerHTML;
      var want = stacked ? stackedCaption(st.caption) : st.caption;
      if (cap.innerHTML !== want) cap.innerHTML = want;
    }
    st.gd.style.height = (layout.height || 450) + "px";
    return { data: data, layout: layout, frames: frames, config: spec.config };
  }

  function applyStep(st, k) {
    var s = st.spec.sliders[k], step = s.steps[st.pos[k]];
    if (!st.drawn || !step) return Promise.resolve();
    return window.Plotly[step.method].apply(null, [st.gd].concat(step.args));
  }

  function restoreSteps(st) {
    return (st.spec.sliders || []).reduce(function (p, s, k) {
      return st.pos[k] !== s.active ? p.then(function () { return applyStep(st, k); }) : p;
    }, Promise.resolve());
  }

  function draw(st) {
    if (!st.drawing) {
      st.drawing = loadPlotly().then(function (Plotly) {
        st.mode = isDark(); st.narrow = st.el.clientWidth < NARROW;
        return Plotly.newPlot(st.gd, view(st));
      }).then(function () {
        st.drawn = true;
        return restoreSteps(st);
      }).catch(function (err) {
        st.gd.setAttribute("data-error", String(err && err.message || err));
        st.gd.textContent = "This figure could not be drawn: " + (err && err.message || err);
        throw err;
      });
    }
    return st.drawing;
  }

  function redraw(st) {
    if (!st.drawn) return;
    st.mode = isDark(); st.narrow = st.el.clientWidth < NARROW;
    window.Plotly.react(st.gd, view(st)).then(function () { return restoreSteps(st); });
  }

  var states = figures.map(function (el) {
    var spec = JSON.parse(el.querySelector("script.optbook-figure-spec").textContent);
    var st = { el: el, gd: el.querySelector(".optbook-plot"), spec: spec, drawn: false,
      pos: (spec.sliders || []).map(function (s) { return s.active; }) };
    Array.prototype.forEach.call(el.querySelectorAll(".optbook-slider input[type=range]"), function (input) {
      var k = +input.getAttribute("data-slider");
      var out = el.querySelector("#" + input.id + "-value");
      var pending = false;
      input.addEventListener("input", function () {
        st.pos[k] = +input.value;
        var label = spec.sliders[k].labels[st.pos[k]];
        if (out) out.textContent = label;
        input.setAttribute("aria-valuetext", label);
        if (pending) return;
        pending = true;
        requestAnimationFrame(function () {  // one redraw per frame, however fast the thumb moves
          pending = false;
          if (st.drawn) applyStep(st, k); else draw(st).catch(function () {});
        });
      });
    });
    return st;
  });

  if ("IntersectionObserver" in window) {
    var io = new IntersectionObserver(function (entries) {
      entries.forEach(function (e) {
        if (!e.isIntersecting) return;
        io.unobserve(e.target);
        draw(states[figures.indexOf(e.target)]).catch(function () {});
      });
    }, { rootMargin: "800px 0px" });
    figures.forEach(function (el) { io.observe(el); });
  } else {
    states.forEach(function (st) { draw(st).catch(function () {}); });
  }

  // Theme switches and width changes across the phone/desktop line redraw the drawn figures.
  new MutationObserver(function () {
    states.forEach(function (st) { if (st.drawn && st.mode !== isDark()) redraw(st); });
  }).observe(document.documentElement, { attributes: true, attributeFilter: ["data-theme"] });
  var resizeTimer = null;
  window.addEventListener("resize", function () {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(function () {
      states.forEach(function (st) { if (st.drawn && st.narrow !== (st.el.clientWidth < NARROW)) redraw(st); });
    }, 150);
  });

  function drawAll() { return Promise.all(states.map(draw)); }
  window.addEventListener("beforeprint", drawAll);
  window.optbookFigures = { drawAll: drawAll, states: states, bundle: bundleFor(pageTypes) };
})();
