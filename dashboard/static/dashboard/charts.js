/* tokspeed chart helpers: formatting, colours and three small Chart.js plugins. */
(function () {
  "use strict";

  const COLORS = {
    ttft: "#e8590c",
    decode: "#0c8599",
    throughput: "#5f3dc4",
    muted: "#98a2b3",
    grid: "#eef0f3",
    frontier: "#c92a2a",
    warn: "#e67700", // --warn: a point whose client was saturated
  };
  // One colour per endpoint on comparison charts.
  const SERIES = ["#3b5bdb", "#e8590c", "#0c8599", "#ae3ec9", "#2b8a3e", "#f08c00", "#c2255c", "#1098ad"];

  function data(id) {
    const node = document.getElementById(id);
    return node ? JSON.parse(node.textContent) : null;
  }

  function ms(v) {
    if (v === null || v === undefined) return "—";
    if (Math.abs(v) < 1000) return Math.round(v) + " ms";
    const s = v / 1000;
    return (Math.abs(s) < 10 ? s.toFixed(2) : Math.abs(s) < 100 ? s.toFixed(1) : Math.round(s)) + " s";
  }
  // Axis ticks in ms: enough decimals that neighbouring ticks never read the same (a run that
  // failed at connect spans a millisecond or two).
  function msTick(v) {
    if (Math.abs(v) >= 10 || v === 0) return ms(v);
    return (Math.abs(v) < 1 ? +v.toFixed(2) : +v.toFixed(1)) + " ms";
  }
  function tps(v) {
    if (v === null || v === undefined) return "—";
    return Math.abs(v) < 99.95 ? v.toFixed(1) : Math.round(v).toLocaleString("en-US");
  }
  // Axis ticks: no trailing ".0" on round values.
  function tick(v) {
    return Number.isInteger(v) ? v.toLocaleString("en-US") : String(+v.toPrecision(3));
  }
  function seconds(v) {
    if (v === null || v === undefined) return "—";
    if (v < 10) return v.toFixed(2) + " s";
    if (v < 120) return v.toFixed(1) + " s";
    return Math.floor(v / 60) + " min " + Math.round(v % 60) + " s";
  }
  // Short axis labels for seconds: 0.5 s · 10 s · 5 min · 1 h.
  function shortSeconds(v) {
    if (v < 60) return `${+v.toPrecision(2)} s`;
    if (v < 3600) return `${+(v / 60).toPrecision(2)} min`;
    return `${+(v / 3600).toPrecision(2)} h`;
  }

  // Which values of a log axis in seconds get a label: fewer when the chart is narrow.
  const SECOND_MARKS = [0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 60, 300, 600, 1800, 3600, 18000];
  const SECOND_MARKS_NARROW = [0.1, 1, 10, 60, 600, 3600];
  function secondsTick(scale, v) {
    const marks = scale.chart.width > 700 ? SECOND_MARKS : SECOND_MARKS_NARROW;
    return marks.includes(+v.toPrecision(2)) ? shortSeconds(v) : "";
  }
  function usd(v) {
    if (v === null || v === undefined) return "—";
    return "$" + (v >= 0.1 || v === 0 ? v.toFixed(2) : v.toFixed(3));
  }
  function when(iso) {
    const d = typeof iso === "number" ? new Date(iso) : new Date(iso);
    const pad = (n) => String(n).padStart(2, "0");
    return `${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}`;
  }
  function alpha(hex, a) {
    const n = parseInt(hex.slice(1), 16);
    return `rgba(${(n >> 16) & 255}, ${(n >> 8) & 255}, ${n & 255}, ${a})`;
  }

  // Vertical reference lines on the x axis, e.g. the 1 s and 10 s thresholds of the agent loop.
  const referenceLines = {
    id: "referenceLines",
    afterDatasetsDraw(chart, _args, options) {
      const scale = chart.scales[options.axis || "x"];
      if (!scale || !options.lines) return;
      const { ctx, chartArea } = chart;
      ctx.save();
      options.lines.forEach((line, index) => {
        if (line.value < scale.min || line.value > scale.max) return;
        const x = scale.getPixelForValue(line.value);
        ctx.strokeStyle = line.color || "#495057";
        ctx.setLineDash([5, 4]);
        ctx.lineWidth = 1.5;
        ctx.beginPath();
        ctx.moveTo(x, chartArea.top);
        ctx.lineTo(x, chartArea.bottom);
        ctx.stroke();
        ctx.setLineDash([]);
        ctx.fillStyle = line.color || "#495057";
        ctx.font = "12px system-ui, sans-serif";
        // Above the plot, staggered so two close lines never print over each other or the bars;
        // a label that would run past the canvas's right edge ends at its line instead.
        const fits = x + 4 + ctx.measureText(line.label).width <= chart.width;
        ctx.textAlign = fits ? "left" : "right";
        ctx.fillText(line.label, fits ? x + 4 : x - 4, chartArea.top - 6 - (index % 2) * 14);
      });
      ctx.restore();
    },
  };

  // p25–p75 whiskers over bars: options.ranges[datasetIndex][i] = [low, high].
  const whiskers = {
    id: "whiskers",
    afterDatasetsDraw(chart, _args, options) {
      if (!options.ranges) return;
      const { ctx } = chart;
      const horizontal = chart.options.indexAxis === "y";
      ctx.save();
      ctx.strokeStyle = options.color || "#343a40";
      ctx.lineWidth = 1.5;
      options.ranges.forEach((ranges, datasetIndex) => {
        const meta = chart.getDatasetMeta(datasetIndex);
        if (!ranges || meta.hidden) return;
        // Each dataset's own value axis (a chart may have a second y axis).
        const valueScale = chart.scales[horizontal ? meta.xAxisID : meta.yAxisID];
        meta.data.forEach((bar, i) => {
          const range = ranges[i];
          if (!range || range[0] === null || range[1] === null) return;
          const a = valueScale.getPixelForValue(range[0]);
          const b = valueScale.getPixelForValue(range[1]);
          const mid = horizontal ? bar.y : bar.x;
          const cap = 4;
          ctx.beginPath();
          if (horizontal) {
            ctx.moveTo(a, mid); ctx.lineTo(b, mid);
            ctx.moveTo(a, mid - cap); ctx.lineTo(a, mid + cap);
            ctx.moveTo(b, mid - cap); ctx.lineTo(b, mid + cap);
          } else {
            ctx.moveTo(mid, a); ctx.lineTo(mid, b);
            ctx.moveTo(mid - cap, a); ctx.lineTo(mid + cap, a);
            ctx.moveTo(mid - cap, b); ctx.lineTo(mid + cap, b);
          }
          ctx.stroke();
        });
      });
      ctx.restore();
    },
  };

  // Change points on a time axis: a dashed vertical line at each, a short label at the top
  // ("▼ 18 %"), and the full wording as the canvas's hover title near a line.
  // options.points = [{x: epoch ms, label, title, worse: bool}]. How many lines were drawn is
  // kept in canvas.dataset.changePoints (pages and tests read it).
  const changePoints = {
    id: "changePoints",
    afterDatasetsDraw(chart, _args, options) {
      const scale = chart.scales.x;
      if (!options.points || !scale) return;
      const shown = options.points.filter((p) => p.x >= scale.min && p.x <= scale.max);
      chart.$changePoints = shown.map((p) => ({ ...p, px: scale.getPixelForValue(p.x) }));
      chart.canvas.dataset.changePoints = String(shown.length);
      if (!shown.length) return;
      const { ctx, chartArea } = chart;
      ctx.save();
      ctx.font = "11px system-ui, sans-serif";
      chart.$changePoints.forEach((p, index) => {
        const color = p.worse ? "#c92a2a" : "#2b8a3e";
        ctx.strokeStyle = color;
        ctx.lineWidth = 1.5;
        ctx.setLineDash([4, 3]);
        ctx.beginPath();
        ctx.moveTo(p.px, chartArea.top);
        ctx.lineTo(p.px, chartArea.bottom);
        ctx.stroke();
        ctx.setLineDash([]);
        // Label on a white box just inside the plot; left of the line near the right edge,
        // one row lower every other line so neighbours do not overprint.
        const w = ctx.measureText(p.label).width + 6;
        const x = p.px + 3 + w > chartArea.right ? p.px - 3 - w : p.px + 3;
        const y = chartArea.top + 2 + (index % 2) * 16;
        ctx.fillStyle = "rgba(255, 255, 255, 0.9)";
        ctx.fillRect(x, y, w, 14);
        ctx.fillStyle = color;
        ctx.textBaseline = "top";
        ctx.fillText(p.label, x + 3, y + 2);
      });
      ctx.restore();
    },
    afterEvent(chart, args) {
      const points = chart.$changePoints || [];
      if (!points.length) return;
      const near = points.find((p) => Math.abs(p.px - args.event.x) <= 5);
      chart.canvas.title = near ? near.title : "";
    },
  };

  function setup() {
    if (!window.Chart) return false;
    Chart.register(referenceLines, whiskers, changePoints);
    Chart.defaults.font.family = "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif";
    Chart.defaults.font.size = 12;
    Chart.defaults.color = "#475467";
    Chart.defaults.borderColor = COLORS.grid;
    Chart.defaults.maintainAspectRatio = false;
    Chart.defaults.animation = false; // charts are read, not watched; also keeps screenshots stable
    Chart.defaults.plugins.legend.labels.boxWidth = 12;
    return true;
  }

  // A linear time axis (no date adapter needed): values are epoch milliseconds, labels in UTC.
  // The step comes from a ladder so that one run and a year both get about 4–10 ticks on round
  // UTC times (never thousands: Chart.js warns and stalls); a lone run gets a day around it.
  const HOUR = 3600 * 1000;
  const DAY = 24 * HOUR;
  const TIME_STEPS = [HOUR, 3 * HOUR, 6 * HOUR, 12 * HOUR, DAY, 2 * DAY, 7 * DAY, 14 * DAY, 28 * DAY, 91 * DAY];
  function timeAxis(xs) {
    const finite = (xs || []).filter((x) => Number.isFinite(x));
    let lo = finite.length ? Math.min(...finite) : Date.now() - DAY;
    let hi = finite.length ? Math.max(...finite) : Date.now();
    if (hi - lo < 2 * HOUR) { lo -= 12 * HOUR; hi += 12 * HOUR; }
    const span = hi - lo;
    const last = TIME_STEPS[TIME_STEPS.length - 1];
    const step = TIME_STEPS.find((s) => span / s <= 10) || last * Math.ceil(span / (10 * last));
    const label = (v) => (step >= DAY ? when(v).slice(0, 5) : when(v));
    return {
      type: "linear",
      min: lo,
      max: hi,
      // autoSkipPadding: a clear gap between dates (the default 3 px let "03/12 08:00" and
      // "03/12 16:00" touch on the endpoint page's half-width charts).
      ticks: {
        stepSize: step, maxTicksLimit: 12, autoSkip: true, autoSkipPadding: 18, maxRotation: 0,
        callback: label,
      },
      grid: { color: COLORS.grid },
    };
  }

  // Bar-chart category labels: the endpoint's name and its provider on two lines, shortened
  // (with "…") only as far as the chart's width needs; the tooltip always has them in full.
  function ellipsize(text, max) {
    return text.length <= max ? text : text.slice(0, Math.max(1, max - 1)) + "…";
  }
  function nameLines(item, width) {
    const max = width < 340 ? 18 : width < 600 ? 26 : 44;
    const mark = item.simulated && !/simulated/i.test(item.label) ? " (sim)" : "";
    return [ellipsize(item.label + mark, max), ellipsize(item.provider || "", max)].filter(Boolean);
  }

  // Log axis for "requests in flight": label only round numbers.
  function concurrencyAxis() {
    return {
      type: "logarithmic",
      title: { display: true, text: "requests in flight" },
      ticks: { autoSkip: false, callback: (v) => ([1, 2, 5, 10, 20, 50, 100, 200, 500, 1000].includes(v) ? v : "") },
    };
  }

  function make(canvasId, config) {
    const canvas = document.getElementById(canvasId);
    if (!canvas) return null;
    return new Chart(canvas, config);
  }

  // "Model · Provider": the same model name recurs at several providers. Simulated endpoints
  // already carry "(simulated)" in their names; others that are simulated get a short mark.
  function endpointName(item) {
    const provider = item.provider ? ` · ${item.provider}` : "";
    const mark = item.simulated && !/simulated/i.test(item.label) ? " (sim)" : "";
    return `${item.label}${mark}${provider}`;
  }

  window.TS = { msTick, endpointName, nameLines, ellipsize, COLORS, SERIES, data, ms, tps, tick, seconds, shortSeconds, secondsTick, usd, when, alpha, setup, timeAxis, concurrencyAxis, make };
})();
