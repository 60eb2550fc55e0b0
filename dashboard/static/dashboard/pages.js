/* Page scripts: each page embeds its data with json_script; this draws its charts. */
(function () {
  "use strict";
  const T = window.TS;
  const C = T.COLORS;

  function boardBars(canvasId, rows, metric, color, format) {
    const values = rows.map((r) => r[metric][1]);
    return T.make(canvasId, {
      type: "bar",
      data: {
        labels: rows.map(T.endpointName),
        datasets: [{ label: metric, data: values, backgroundColor: T.alpha(color, 0.75), borderRadius: 3 }],
      },
      options: {
        indexAxis: "y",
        plugins: {
          legend: { display: false },
          whiskers: { ranges: [rows.map((r) => [r[metric][0], r[metric][2]])] },
          tooltip: { callbacks: {
            title: (items) => T.endpointName(rows[items[0].dataIndex]),
            label: (c) => {
              const r = rows[c.dataIndex][metric];
              return `${format(r[1])} (p25–p75 ${format(r[0])}–${format(r[2])})`;
            },
          } },
        },
        scales: {
          x: { beginAtZero: true, ticks: { callback: (v) => format(v) } },
          // Name and provider on two lines, shortened only as far as the width needs.
          y: { ticks: { autoSkip: false, callback(value, index) { return T.nameLines(rows[index], this.chart.width); } } },
        },
      },
    });
  }

  function leaderboard() {
    const rows = T.data("board-data") || [];
    if (!rows.length) return;
    boardBars("chart-board-ttft", rows, "ttft", C.ttft, T.ms);
    boardBars("chart-board-decode", rows, "decode", C.decode, T.tick);
    boardScatter("chart-board-scatter", rows);
  }

  // TTFT (x, log) × decode speed (y): top left is best. Blended price (3:1) sets each point's
  // colour (light = cheap, dark = dear) and size; endpoints without a price are grey rings.
  function boardScatter(canvasId, rows) {
    const points = rows.filter((r) => r.ttft[1] !== null && r.decode[1] !== null);
    const prices = points.map((r) => r.blended).filter((p) => p !== null && p > 0);
    const lo = Math.log(Math.min(...prices, 1)), hi = Math.log(Math.max(...prices, 1));
    const share = (p) => (hi > lo ? (Math.log(p) - lo) / (hi - lo) : 0.5);
    const priced = (r) => r.blended !== null && r.blended > 0;
    return T.make(canvasId, {
      type: "scatter",
      data: { datasets: [{
        data: points.map((r) => ({ x: r.ttft[1], y: r.decode[1] })),
        pointRadius: points.map((r) => (priced(r) ? 5 + 9 * share(r.blended) : 5)),
        pointHoverRadius: points.map((r) => (priced(r) ? 7 + 9 * share(r.blended) : 7)),
        backgroundColor: points.map((r) => (priced(r) ? `rgba(95, 61, 196, ${0.2 + 0.7 * share(r.blended)})` : "transparent")),
        borderColor: points.map((r) => (priced(r) ? "#5f3dc4" : C.muted)),
        borderWidth: 1.5,
      }] },
      options: {
        plugins: {
          legend: { display: false },
          tooltip: { callbacks: {
            title: (items) => T.endpointName(points[items[0].dataIndex]),
            label: (c) => {
              const r = points[c.dataIndex];
              return `TTFT ${T.ms(r.ttft[1])} · ${T.tps(r.decode[1])} tok/s · blended ${T.usd(r.blended)} per 1M`;
            },
          } },
        },
        scales: {
          // Padding on both sides so the fastest and slowest points are not cut by the frame.
          x: { type: "logarithmic", min: Math.min(...points.map((r) => r.ttft[1])) / 1.3,
               max: Math.max(...points.map((r) => r.ttft[1])) * 1.3, title: { display: true, text: "TTFT p50 (ms, log) — lower is better" },
               ticks: { callback: (v) => ([50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000].includes(v) ? T.ms(v) : "") } },
          y: { beginAtZero: true, suggestedMax: Math.max(...points.map((r) => r.decode[1])) * 1.1,
               title: { display: true, text: "Decode tok/s p50 — higher is better" } },
        },
      },
    });
  }

  // A per-run median line with an optional band (p10–p90 of the run's requests).
  // Change points of one metric as the changePoints plugin's markers. `change` is after/before
  // − 1; worse = decode fell or TTFT rose.
  function changeMarkers(points, metric, format) {
    return (points || []).filter((p) => p.metric === metric).map((p) => {
      const size = Math.round(Math.abs(p.change) * 100);
      const arrow = p.change < 0 ? "▼" : "▲";
      const sign = p.change < 0 ? "−" : "+";
      return {
        x: Date.parse(p.at),
        worse: metric === "decode_tps" ? p.change < 0 : p.change > 0,
        label: `${arrow} ${size} %`,
        title: `Change point ${T.when(p.at)} UTC: ${format(p.before)} → ${format(p.after)} (${sign}${size} %)`,
      };
    });
  }

  // A run (or a day's runs) measured by a saturated client (docs/design.md §4): kept, marked.
  function saturationNote(r) {
    if (r.saturated_runs) return `client saturated in ${r.saturated_runs} of ${r.runs} runs`;
    if (r.id && r.saturated) return `client saturated in ${r.saturated} request${r.saturated === 1 ? "" : "s"}`;
    return "";
  }

  function historyChart(canvasId, runs, bands, key, color, format, title, markers) {
    const pts = runs.map((r) => ({ x: Date.parse(r.slot), y: r[key], id: r.id }));
    const notes = runs.map(saturationNote);
    const datasets = [];
    const haveBand = bands && bands.some((b) => b);
    if (haveBand) {
      datasets.push({ label: "p10", data: runs.map((r, i) => ({ x: Date.parse(r.slot), y: bands[i] ? bands[i].low : null })),
        borderColor: "transparent", pointRadius: 0, fill: false, spanGaps: true });
      datasets.push({ label: "p90", data: runs.map((r, i) => ({ x: Date.parse(r.slot), y: bands[i] ? bands[i].high : null })),
        borderColor: "transparent", backgroundColor: T.alpha(color, 0.15), pointRadius: 0, fill: "-1", spanGaps: true });
    }
    datasets.push({ label: title, data: pts, borderColor: color, backgroundColor: color, pointRadius: notes.map((n) => (n ? 5 : 3)), tension: 0.2, spanGaps: true,
      pointStyle: notes.map((n) => (n ? "triangle" : "circle")), pointBackgroundColor: notes.map((n) => (n ? C.warn : color)) });
    return T.make(canvasId, {
      type: "line",
      data: { datasets },
      options: {
        plugins: { legend: { display: false }, changePoints: { points: markers }, tooltip: { callbacks: {
          title: (items) => T.when(items[0].parsed.x) + " UTC",
          label: (c) => `${c.dataset.label}: ${format(c.parsed.y)}`,
          afterLabel: (c) => (c.datasetIndex === datasets.length - 1 ? notes[c.dataIndex] : ""),
        } } },
        scales: { x: T.timeAxis(pts.map((p) => p.x)), y: { beginAtZero: true, ticks: { callback: (v) => format(v) } } },
        onClick: (_e, els) => {
          const el = els.find((e) => datasets[e.datasetIndex].data[e.index].id);
          if (el) window.location.href = `/runs/${datasets[el.datasetIndex].data[el.index].id}/`;
        },
      },
    });
  }

  function todChart(canvasId, profile) {
    return T.make(canvasId, {
      type: "bar",
      data: {
        labels: profile.map((b) => `${b.label} (${b.runs})`),
        datasets: [
          { label: "TTFT p50 (ms)", data: profile.map((b) => b.ttft_ms.p50), backgroundColor: T.alpha(C.ttft, 0.75), yAxisID: "y" },
          { label: "Decode p50 (tok/s)", data: profile.map((b) => b.decode_tps.p50), backgroundColor: T.alpha(C.decode, 0.75), yAxisID: "y1" },
        ],
      },
      options: {
        plugins: { whiskers: { ranges: [
          profile.map((b) => [b.ttft_ms.p25, b.ttft_ms.p75]),
          profile.map((b) => [b.decode_tps.p25, b.decode_tps.p75]),
        ] } },
        scales: {
          y: { beginAtZero: true, position: "left", title: { display: true, text: "TTFT" }, ticks: { callback: (v) => T.ms(v) } },
          y1: { beginAtZero: true, position: "right", grid: { drawOnChartArea: false }, title: { display: true, text: "tok/s" } },
        },
      },
    });
  }

  function contextChart(canvasId, context) {
    const pairs = context.pairs || [];
    const tokens = context.context_tokens ? ` (+${Math.round(context.context_tokens / 1000)}k tokens)` : "";
    return T.make(canvasId, {
      type: "line",
      data: { datasets: [
        { label: "Base TTFT", data: pairs.map((p) => ({ x: Date.parse(p.slot), y: p.base_ttft_ms })), borderColor: C.ttft, backgroundColor: C.ttft, pointRadius: 3, spanGaps: true },
        { label: "Long-context TTFT" + tokens, data: pairs.map((p) => ({ x: Date.parse(p.slot), y: p.long_ttft_ms })), borderColor: "#862e9c", backgroundColor: "#862e9c", pointRadius: 3, spanGaps: true },
      ] },
      options: {
        scales: { x: T.timeAxis(pairs.map((p) => Date.parse(p.slot))), y: { beginAtZero: true, ticks: { callback: (v) => T.ms(v) } } },
        plugins: { tooltip: { callbacks: { label: (c) => `${c.dataset.label}: ${T.ms(c.parsed.y)}` } } },
      },
    });
  }

  function concurrencyChart(canvasId, curve) {
    return T.make(canvasId, {
      type: "line",
      data: { datasets: [
        { label: "Decode per user (tok/s)", data: curve.map((c) => ({ x: c.concurrency, y: c.decode_tps_per_user })), borderColor: C.decode, backgroundColor: C.decode, yAxisID: "y", pointRadius: 4 },
        { label: "Aggregate throughput (tok/s)", data: curve.map((c) => ({ x: c.concurrency, y: c.throughput_tps })), borderColor: C.throughput, backgroundColor: C.throughput, borderDash: [6, 4], yAxisID: "y1", pointRadius: 4, spanGaps: true },
      ] },
      options: {
        scales: {
          x: T.concurrencyAxis(),
          y: { beginAtZero: true, title: { display: true, text: "per user" } },
          y1: { beginAtZero: true, position: "right", grid: { drawOnChartArea: false }, title: { display: true, text: "aggregate" } },
        },
      },
    });
  }

  function rooflineChart(canvasId, roofline) {
    return T.make(canvasId, {
      type: "bar",
      data: {
        labels: ["Measured decode (per user)", "Memory-bandwidth ceiling"],
        datasets: [{ data: [roofline.measured_tps, roofline.ceiling_tps], backgroundColor: [T.alpha(C.decode, 0.8), T.alpha(C.muted, 0.6)] }],
      },
      options: { indexAxis: "y", plugins: { legend: { display: false } }, scales: { x: { beginAtZero: true, title: { display: true, text: "tok/s" } } } },
    });
  }

  function endpoint() {
    const h = T.data("history-data");
    if (!h) return;
    const points = T.data("change-points");
    const decodeFormat = (v) => `${T.tps(v)} tok/s`;
    historyChart("chart-history-ttft", h.runs, h.bands.ttft, "ttft_ms", C.ttft, T.ms, "TTFT p50",
      changeMarkers(points, "ttft_ms", T.ms));
    historyChart("chart-history-decode", h.runs, h.bands.decode, "decode_tps", C.decode, T.tick, "Decode p50",
      changeMarkers(points, "decode_tps", decodeFormat));
    todChart("chart-tod", h.tod_profile);
    contextChart("chart-context", h.context);
    concurrencyChart("chart-concurrency", h.concurrency);
    if (h.roofline) rooflineChart("chart-roofline", h.roofline);
  }

  function run() {
    const rows = T.data("waterfall-data") || [];
    if (!rows.length) return;
    const phases = [
      ["connect", "Connect", "#868e96"],
      ["headers", "Waiting for headers", "#74c0fc"],
      ["first_token", "To first token", C.ttft],
      ["decode", "Decode", C.decode],
      ["failed", "Until the error", "#c92a2a"],
    ];
    T.make("chart-waterfall", {
      type: "bar",
      data: {
        labels: rows.map((r) => `#${r.index}${r.ok ? "" : " ✕ " + r.error}`),
        datasets: phases.map(([key, label, color]) => ({
          label, data: rows.map((r) => r[key]), backgroundColor: T.alpha(color, 0.85), borderSkipped: false, barPercentage: 0.8,
        })),
      },
      options: {
        indexAxis: "y",
        scales: { x: { beginAtZero: true, title: { display: true, text: "time since the request was sent" }, ticks: { callback: (v) => T.msTick(v) } }, y: { stacked: true, ticks: { autoSkip: false } } },
        plugins: { tooltip: { callbacks: { label: (c) => {
          const v = c.raw; return v ? `${c.dataset.label}: ${T.ms(v[0])} → ${T.ms(v[1])} (${T.ms(v[1] - v[0])})` : "";
        } } } },
      },
    });
  }

  function price() {
    const d = T.data("price-data");
    if (!d) return;
    let axis = d.y;
    const spec = { decode: ["decode_tps_p50", "Decode tok/s per user", T.tps], ttft: ["ttft_p50_ms", "TTFT p50", T.ms] };
    const priced = d.points.filter((p) => p.price_out !== null);
    function datasets() {
      const [key] = spec[axis];
      const onFrontier = new Set(d.frontiers[axis]);
      const bySlug = Object.fromEntries(priced.map((p) => [p.slug, p]));
      const frontier = d.frontiers[axis].map((s) => bySlug[s]).filter(Boolean);
      const point = (p) => ({ x: p.price_out, y: p[key], label: T.endpointName(p) });
      return [
        { type: "line", label: "Cheapest-and-fastest frontier", data: frontier.map(point), borderColor: C.frontier, borderDash: [6, 4], pointRadius: 0, fill: false, order: 3 },
        { type: "scatter", label: "On the frontier", data: frontier.map(point), backgroundColor: C.frontier, pointRadius: 6, pointHoverRadius: 8, order: 1 },
        { type: "scatter", label: "Other endpoints", data: priced.filter((p) => !onFrontier.has(p.slug)).map(point), backgroundColor: "#3b5bdb", pointRadius: 6, pointHoverRadius: 8, order: 2 },
        // Lanes of one model (standard, priority, flex...) joined by a thin line, cheapest first.
        ...(d.lanes || []).map((slugs) => ({
          type: "line", label: "Lanes of one model",
          data: slugs.map((s) => bySlug[s]).filter(Boolean).sort((a, b) => a.price_out - b.price_out).map(point),
          borderColor: "#868e96", borderWidth: 1.5, pointRadius: 0, fill: false, order: 4,
        })),
      ];
    }
    // The table's frontier column follows the chosen measure.
    function markTable() {
      const onFrontier = new Set(d.frontiers[axis]);
      document.querySelectorAll("#price-table tbody tr").forEach((tr) => {
        const cell = tr.querySelector(".frontier");
        if (cell) cell.innerHTML = onFrontier.has(tr.dataset.slug) ? '<span class="status s-ok">on the frontier</span>' : "";
      });
    }
    const labels = {
      id: "pointLabels",
      afterDatasetsDraw(chart) {
        const ctx = chart.ctx;
        ctx.save();
        ctx.font = "11px system-ui, sans-serif";
        ctx.fillStyle = "#344054";
        // Label each dot to its right, left, above or below, the first spot that stays on the
        // canvas and clears every dot and every label already placed; skip it if none does
        // (the tooltip and the table below still name it).
        const dots = [1, 2].flatMap((index) => chart.getDatasetMeta(index).data.map((pt) => ({ x: pt.x - 6, y: pt.y - 6, w: 12, h: 12 })));
        const placed = [...dots];
        const inside = (r) => r.x >= 2 && r.x + r.w <= chart.width - 2 && r.y >= 2 && r.y + r.h <= chart.chartArea.bottom;
        const free = (r) => inside(r) && !placed.some((q) => r.x < q.x + q.w && q.x < r.x + r.w && r.y < q.y + q.h && q.y < r.y + r.h);
        [1, 2].forEach((index) => {
          chart.getDatasetMeta(index).data.forEach((pt, i) => {
            const text = chart.data.datasets[index].data[i].label;
            const w = ctx.measureText(text).width;
            const spots = [
              { x: pt.x + 9, y: pt.y - 7, w, h: 13 },
              { x: pt.x - 9 - w, y: pt.y - 7, w, h: 13 },
              { x: pt.x - w / 2, y: pt.y - 22, w, h: 13 },
              { x: pt.x - w / 2, y: pt.y + 9, w, h: 13 },
            ];
            const spot = spots.find(free);
            if (!spot) return;
            placed.push(spot);
            ctx.fillText(text, spot.x, spot.y + 10);
          });
        });
        ctx.restore();
      },
    };
    // Prices span decades (cents to tens of dollars): a log axis unless something is free.
    const prices = priced.map((p) => p.price_out);
    const logX = prices.length > 1 && Math.min(...prices) > 0 && Math.max(...prices) / Math.min(...prices) > 8;
    const chart = T.make("chart-price", {
      type: "scatter",
      data: { datasets: datasets() },
      plugins: [labels],
      options: {
        layout: { padding: { right: 90 } },
        scales: {
          x: logX
            ? { type: "logarithmic", title: { display: true, text: "USD per 1M output tokens (log scale)" },
                ticks: { callback: (v) => ([0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100].includes(+v.toPrecision(2)) ? T.usd(v) : "") } }
            : { title: { display: true, text: "USD per 1M output tokens" }, beginAtZero: true, ticks: { callback: (v) => T.usd(v) } },
          y: { title: { display: true, text: spec[axis][1] }, beginAtZero: true, ticks: { callback: (v) => spec[axis][2](v) } },
        },
        plugins: { tooltip: { callbacks: { label: (c) => `${c.raw.label || "frontier"}: ${T.usd(c.parsed.x)}, ${spec[axis][2](c.parsed.y)}` } } },
      },
    });
    document.querySelectorAll("[data-y]").forEach((button) => {
      button.addEventListener("click", (event) => {
        event.preventDefault();
        axis = button.dataset.y;
        chart.data.datasets = datasets();
        chart.options.scales.y.title.text = spec[axis][1];
        chart.options.scales.y.ticks.callback = (v) => spec[axis][2](v);
        chart.update();
        markTable();
        document.querySelectorAll("[data-y]").forEach((b) => b.classList.toggle("primary", b === button));
        document.getElementById("price-title").textContent = axis === "ttft" ? "TTFT p50 (ms, lower is better)" : "Decode tok/s p50 per user (higher is better)";
        const url = new URL(window.location.href);
        url.searchParams.set("y", axis);
        window.history.replaceState(null, "", url);
      });
    });
  }

  const VERDICT_COLORS = { immediate: "#2b8a3e", "holds attention": "#f08c00", "background job": "#c92a2a" };

  // Wall time per endpoint on a log axis, so the 1 s and 10 s lines stay readable whatever the
  // range; colour = how it feels (or, on compare, the endpoint's own colour: `colors`);
  // whiskers = with the p25/p75 medians. Each bar is named by model and provider on two lines,
  // shortened from the end as far as the width needs (a label longer than the axis was cut at
  // the canvas's left edge, and two endpoints read the same).
  function agentBars(canvasId, projections, thresholds, colors) {
    const walls = projections.flatMap((p) => [p.wall_s, p.wall_best_s, p.wall_worst_s]).filter((v) => v > 0);
    const low = Math.min(thresholds.immediate / 2, ...walls) * 0.8;
    const high = Math.max(thresholds.attention * 2, ...walls) * 1.25;
    return T.make(canvasId, {
      type: "bar",
      data: {
        labels: projections.map(T.endpointName),
        datasets: [{
          label: "Projected wall time",
          data: projections.map((p) => p.wall_s),
          backgroundColor: projections.map((p, i) => T.alpha(colors ? colors[i] : VERDICT_COLORS[p.verdict], 0.75)),
          borderRadius: 3,
        }],
      },
      options: {
        indexAxis: "y",
        layout: { padding: { top: 30 } },
        scales: {
          x: {
            type: "logarithmic", min: low, max: high,
            title: { display: true, text: "seconds (log scale)" },
            ticks: { autoSkip: false, maxRotation: 0, callback(v) { return T.secondsTick(this, v); } },
          },
          y: { ticks: { autoSkip: false, callback(value, index) { return T.nameLines(projections[index], this.chart.width); } } },
        },
        plugins: {
          legend: { display: false },
          whiskers: { ranges: [projections.map((p) => [p.wall_best_s, p.wall_worst_s])] },
          referenceLines: { lines: [
            { value: thresholds.immediate, label: `${thresholds.immediate} s: immediate`, color: "#2b8a3e" },
            { value: thresholds.attention, label: `${thresholds.attention} s: holds attention`, color: "#e67700" },
          ] },
          tooltip: { callbacks: {
            title: (items) => T.endpointName(projections[items[0].dataIndex]),
            label: (c) => {
              const p = projections[c.dataIndex];
              return `${T.seconds(p.wall_s)} (${p.verdict}): waiting ${T.seconds(p.waiting_s)}, decoding ${T.seconds(p.decoding_s)}, tools ${T.seconds(p.tool_total_s)}`;
            },
          } },
        },
      },
    });
  }

  function agentLoop() {
    const projections = T.data("agent-data") || [];
    if (projections.length) agentBars("chart-agent-loop", projections, T.data("agent-thresholds"));
  }

  // Compare picker: typing narrows the groups to labels containing every word typed.
  function pickerSearch() {
    const input = document.getElementById("picker-search");
    if (!input) return;
    input.addEventListener("input", () => {
      const words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
      let shown = 0;
      document.querySelectorAll("#picker .picker-group").forEach((group) => {
        let any = false;
        group.querySelectorAll("label[data-search]").forEach((label) => {
          const match = words.every((w) => label.dataset.search.includes(w)) || label.querySelector("input").checked;
          label.hidden = !match;
          any = any || match;
        });
        group.hidden = !any;
        shown += any ? 1 : 0;
      });
      document.getElementById("picker-none").hidden = shown > 0;
    });
  }

  // One key for every compare chart: each endpoint's colour and full name, in HTML (it wraps on
  // a phone instead of being clipped like a canvas legend); the charts draw no legend of their own.
  function seriesKey(histories, color) {
    const key = document.getElementById("compare-key");
    if (!key) return;
    key.replaceChildren(...histories.map((h, i) => {
      const item = document.createElement("li");
      item.dataset.slug = h.endpoint.slug;
      const swatch = document.createElement("span");
      swatch.className = "swatch";
      swatch.style.background = color(i);
      item.append(swatch, T.endpointName(h.endpoint));
      return item;
    }));
    key.hidden = false;
  }

  function compare() {
    pickerSearch();
    const histories = T.data("compare-histories");
    if (!histories) return;
    const color = (i) => T.SERIES[i % T.SERIES.length];
    const name = (h) => T.endpointName(h.endpoint);
    seriesKey(histories, color);
    const colorOf = Object.fromEntries(histories.map((h, i) => [h.endpoint.slug, color(i)]));
    const noLegend = { legend: { display: false } };
    const lines = (key) => histories.map((h, i) => ({
      label: name(h), data: h.runs.map((r) => ({ x: Date.parse(r.slot), y: r[key] })),
      borderColor: color(i), backgroundColor: color(i), pointRadius: 2, spanGaps: true, tension: 0.2,
    }));
    const xs = histories.flatMap((h) => h.runs.map((r) => Date.parse(r.slot)));
    const timeOpts = (format) => ({ plugins: noLegend, scales: { x: T.timeAxis(xs), y: { beginAtZero: true, ticks: { callback: (v) => format(v) } } } });
    T.make("chart-cmp-ttft", { type: "line", data: { datasets: lines("ttft_ms") }, options: timeOpts(T.ms) });
    T.make("chart-cmp-decode", { type: "line", data: { datasets: lines("decode_tps") }, options: timeOpts(T.tick) });
    const buckets = histories[0].tod_profile.map((b) => b.label);
    const todBars = (metric) => histories.map((h, i) => ({ label: name(h), data: h.tod_profile.map((b) => b[metric].p50), backgroundColor: T.alpha(color(i), 0.8) }));
    T.make("chart-cmp-tod-ttft", { type: "bar", data: { labels: buckets, datasets: todBars("ttft_ms") }, options: { plugins: noLegend, scales: { y: { beginAtZero: true, ticks: { callback: (v) => T.ms(v) } } } } });
    T.make("chart-cmp-tod-decode", { type: "bar", data: { labels: buckets, datasets: todBars("decode_tps") }, options: { plugins: noLegend, scales: { y: { beginAtZero: true } } } });
    T.make("chart-cmp-context", {
      type: "bar",
      data: { labels: histories.map(name), datasets: [
        { label: "Base TTFT", data: histories.map((h) => (h.context.base_ttft_ms ? h.context.base_ttft_ms.p50 : null)), backgroundColor: T.alpha(C.ttft, 0.8) },
        { label: "Long-context TTFT", data: histories.map((h) => (h.context.long_ttft_ms ? h.context.long_ttft_ms.p50 : null)), backgroundColor: T.alpha("#862e9c", 0.8) },
      ] },
      // Bars run sideways so each endpoint's name reads on one axis line, as on the others.
      options: { indexAxis: "y", scales: {
        x: { beginAtZero: true, ticks: { callback: (v) => T.ms(v) } },
        y: { ticks: { autoSkip: false, callback(value, index) { return T.nameLines(histories[index].endpoint, this.chart.width); } } },
      } },
    });
    const conc = [];
    histories.forEach((h, i) => {
      conc.push({ label: name(h) + " per user", data: h.concurrency.map((c) => ({ x: c.concurrency, y: c.decode_tps_per_user })), borderColor: color(i), backgroundColor: color(i), yAxisID: "y" });
      conc.push({ label: name(h) + " aggregate", data: h.concurrency.map((c) => ({ x: c.concurrency, y: c.throughput_tps })), borderColor: color(i), backgroundColor: color(i), borderDash: [6, 4], yAxisID: "y1", spanGaps: true });
    });
    T.make("chart-cmp-concurrency", { type: "line", data: { datasets: conc }, options: {
      plugins: noLegend,
      scales: {
      x: T.concurrencyAxis(),
      y: { beginAtZero: true, title: { display: true, text: "per user tok/s" } },
      y1: { beginAtZero: true, position: "right", grid: { drawOnChartArea: false }, title: { display: true, text: "aggregate tok/s" } },
    } } });
    const projections = T.data("compare-projections") || [];
    if (projections.length) {
      agentBars("chart-cmp-agent", projections, T.data("compare-thresholds"), projections.map((p) => colorOf[p.slug] || C.muted));
    }
  }

  const PAGES = { leaderboard, endpoint, run, price, "agent-loop": agentLoop, compare };

  document.addEventListener("DOMContentLoaded", () => {
    if (!T.setup()) return;
    const init = PAGES[document.body.dataset.page];
    if (init) init();
  });
})();
