/* diskbench report: save a chart as SVG or PNG, with its title and legend, for a ticket or a slide.
   The charts draw without this script; it only shows each chart's save links and answers them,
   offline: the image is made from the page itself (an SVG Blob, and a canvas for PNG). */
(function () {
  "use strict";
  var NS = "http://www.w3.org/2000/svg";
  var WIDTH = 560, PAD = 8, LINE = 16, CHAR = 6.6, SCALE = 2;  // 12 px sans-serif: about 6.6 px a character
  var STYLE = "text{font:11px sans-serif;fill:#333}text.t{font-size:12px;fill:#555}" +
    "text.m{font-size:10px;paint-order:stroke;stroke:#fff;stroke-width:3px;stroke-linejoin:round}" +
    "text.cap{font:bold 13px sans-serif;fill:#222}text.lg{font:12px sans-serif;fill:#222}" +
    "text.nt{font:12px sans-serif;fill:#666}";

  function node(name, attrs, text) {
    var el = document.createElementNS(NS, name);
    Object.keys(attrs).forEach(function (k) { el.setAttribute(k, attrs[k]); });
    if (text !== undefined) { el.textContent = text; }
    return el;
  }

  /* Lines of at most `width` px, broken between words (a word longer than a line is cut). */
  function wrap(text, width) {
    var max = Math.max(12, Math.floor(width / CHAR)), out = [], line = "";
    text.trim().split(/\s+/).forEach(function (word) {
      while (word.length > max) {
        if (line) { out.push(line); line = ""; }
        out.push(word.slice(0, max));
        word = word.slice(max);
      }
      if (line && (line + " " + word).length > max) { out.push(line); line = word; }
      else { line = line ? line + " " + word : word; }
    });
    if (line) { out.push(line); }
    return out;
  }

  /* Wrapped text from `y` on, its first `bold` characters in bold; returns the y below it. */
  function lines(root, text, x, y, width, cls, bold) {
    wrap(text, width).forEach(function (line, i) {
      y += LINE;
      var el = root.appendChild(node("text", {x: x, y: y - 4, "class": cls}));
      var head = i === 0 && bold ? line.slice(0, bold) : "";
      if (head) { el.appendChild(node("tspan", {"font-weight": "bold"}, head)); }
      el.appendChild(document.createTextNode(line.slice(head.length)));
    });
    return y;
  }

  /* The HTML bar chart made again in SVG: label, bar, whisker and value of each row. */
  function bars(root, fig, y) {
    var track = (WIDTH - 2 * PAD) * 0.55;
    fig.querySelectorAll(".bar").forEach(function (bar) {
      y = lines(root, bar.querySelector(".bl").textContent, PAD, y, WIDTH - 2 * PAD, "lg");
      var fill = bar.querySelector(".bf"), wh = bar.querySelector(".wh");
      root.appendChild(node("rect", {x: PAD, y: y + 2, width: track, height: 12, fill: "#f0f0f0"}));
      root.appendChild(node("rect", {x: PAD, y: y + 2, width: track * parseFloat(fill.style.width) / 100,
        height: 12, fill: getComputedStyle(fill).backgroundColor, "fill-opacity": 0.75}));
      if (wh) {
        var a = PAD + track * parseFloat(wh.style.left) / 100, b = a + track * parseFloat(wh.style.width) / 100;
        root.appendChild(node("path", {d: "M" + a + "," + (y + 3) + "v10M" + a + "," + (y + 8) + "H" + b +
          "M" + b + "," + (y + 3) + "v10", stroke: "#000", fill: "none"}));
      }
      root.appendChild(node("text", {x: PAD + track + 6, y: y + 12, "class": "lg"}, bar.querySelector(".bv").textContent));
      y += 20;
    });
    return y;
  }

  /* The legend: each entry's colour key (a square, or a line dashed as the series is) and its text. */
  function legend(root, fig, y) {
    fig.querySelectorAll("ul.legend li").forEach(function (li) {
      var sw = li.querySelector(".sw"), cs = getComputedStyle(sw), top = y;
      if (sw.classList.contains("ln")) {
        var style = cs.borderTopStyle === "dotted" ? "2 3" : "6 3";
        root.appendChild(node("line", {x1: PAD, x2: PAD + 14, y1: top + 8, y2: top + 8, stroke: cs.borderTopColor,
          "stroke-width": 2, "stroke-dasharray": style}));
      } else {
        root.appendChild(node("rect", {x: PAD, y: top + 3, width: 10, height: 10, fill: cs.backgroundColor}));
      }
      var label = li.querySelector("b");
      y = lines(root, li.textContent, PAD + 20, y, WIDTH - 2 * PAD - 20, "lg", label ? label.textContent.trim().length : 0);
    });
    return y;
  }

  /* One standalone SVG document of a figure: title, chart, legend, note. */
  function build(fig) {
    var root = node("svg", {xmlns: NS, width: WIDTH}), y = PAD;
    root.appendChild(node("style", {}, STYLE));
    var bg = root.appendChild(node("rect", {width: "100%", height: "100%", fill: "#fff"}));
    y = lines(root, fig.querySelector("figcaption").textContent, PAD, y, WIDTH - 2 * PAD, "cap") + 4;
    var chart = fig.querySelector(":scope > svg");
    if (chart) {
      var g = root.appendChild(node("g", {transform: "translate(0," + y + ")"}));
      Array.prototype.forEach.call(chart.childNodes, function (c) { g.appendChild(c.cloneNode(true)); });
      y += chart.viewBox.baseVal.height;
    } else {
      y = bars(root, fig, y);
    }
    y = legend(root, fig, y + 4);
    fig.querySelectorAll("p.note").forEach(function (p) { y = lines(root, p.textContent, PAD, y, WIDTH - 2 * PAD, "nt"); });
    y += PAD;
    root.setAttribute("height", y);
    root.setAttribute("viewBox", "0 0 " + WIDTH + " " + y);
    bg.setAttribute("height", y);
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + new XMLSerializer().serializeToString(root);
  }

  /* The same image as PNG, at twice its size for a sharp slide. */
  function png(fig) {
    return new Promise(function (resolve, reject) {
      var img = new Image();
      img.onload = function () {
        var canvas = document.createElement("canvas");
        canvas.width = img.width * SCALE;
        canvas.height = img.height * SCALE;
        var ctx = canvas.getContext("2d");
        ctx.scale(SCALE, SCALE);
        ctx.drawImage(img, 0, 0);
        canvas.toBlob(function (blob) { return blob ? resolve(blob) : reject(new Error("no PNG")); }, "image/png");
      };
      img.onerror = function () { reject(new Error("the chart could not be rendered")); };
      img.src = "data:image/svg+xml;charset=utf-8," + encodeURIComponent(build(fig));
    });
  }

  function download(blob, name) {
    var a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = name;
    document.body.appendChild(a);
    a.click();
    setTimeout(function () { URL.revokeObjectURL(a.href); a.remove(); }, 1000);
  }

  function save(fig, kind) {
    var name = (fig.getAttribute("data-name") || "chart") + "." + kind;
    if (kind === "svg") {
      download(new Blob([build(fig)], {type: "image/svg+xml"}), name);
      return Promise.resolve();
    }
    return png(fig).then(function (blob) { download(blob, name); });
  }

  document.addEventListener("click", function (event) {
    var link = event.target.closest && event.target.closest("a[data-save]");
    if (!link) { return; }
    event.preventDefault();
    save(link.closest("figure"), link.getAttribute("data-save")).catch(function (err) {
      link.textContent += " (failed: " + err.message + ")";
    });
  });
  document.querySelectorAll("p.save").forEach(function (p) { p.hidden = false; });
  window.diskbenchCharts = {svg: build, png: png};
})();
