// The studio's time-series charts: a thin layer over uPlot (loaded as the global `uPlot`).
// Blazor creates a chart once with its history, then sends only new points each second; the
// markup hosting a chart is never re-rendered, so this module owns everything inside it.

const charts = new Map();
let paused = false;

const palette = ['#1f6feb', '#d1242f', '#1a7f37', '#9a6700', '#8250df', '#bf3989', '#0a7a8a', '#57606a'];

const units = {
    bytes: v => bytes(v),
    bytesPerSecond: v => bytes(v) + '/s',
    opsPerSecond: v => number(v) + '/s',
    micros: v => micros(v),
    percent: v => trim(v, 1) + '%',
    millisPerSecond: v => trim(v, 1) + ' ms/s',
    seconds: v => trim(v, 1) + ' s',
    count: v => number(v),
};

function trim(v, digits) {
    return Number.isInteger(v) ? String(v) : v.toFixed(digits).replace(/\.?0+$/, '');
}

function bytes(v) {
    if (v == null) return '';
    const steps = ['B', 'KB', 'MB', 'GB', 'TB'];
    let i = 0;
    while (Math.abs(v) >= 1024 && i < steps.length - 1) { v /= 1024; i++; }
    return trim(v, Math.abs(v) < 10 && i > 0 ? 1 : 0) + ' ' + steps[i];
}

function number(v) {
    if (v == null) return '';
    const a = Math.abs(v);
    if (a >= 1e9) return trim(v / 1e9, 1) + 'G';
    if (a >= 1e6) return trim(v / 1e6, 1) + 'M';
    if (a >= 1e3) return trim(v / 1e3, 1) + 'k';
    return trim(v, a < 10 ? 2 : 0);
}

function micros(v) {
    if (v == null) return '';
    const a = Math.abs(v);
    if (a >= 1e6) return trim(v / 1e6, 2) + ' s';
    if (a >= 1e3) return trim(v / 1e3, 1) + ' ms';
    return trim(v, 0) + ' µs';
}

function size(host) {
    return { width: Math.max(200, host.clientWidth), height: host.dataset.height ? Number(host.dataset.height) : 180 };
}

// spec: { unit, windowSeconds, series: [label, ...] }; times in unix seconds; columns: one array per series.
export function create(id, host, spec, times, columns) {
    const unit = units[spec.unit] ?? units.count;
    const format = v => v == null ? '–' : unit(v);
    const state = { host, spec, data: [times, ...columns], windowSeconds: spec.windowSeconds, dirty: false };
    const opts = {
        ...size(host),
        scales: {
            // The window, or less while the history is younger than it (at least a minute).
            x: { time: true, range: (u, min, max) => [Math.min(Math.max(min, max - state.windowSeconds), max - 60), max] },
            y: { range: (u, min, max) => [Math.min(0, min ?? 0), Math.max(1, max ?? 1) * 1.05] },
        },
        series: [{}, ...spec.series.map((label, i) => ({
            label, stroke: palette[i % palette.length], width: 1.5, points: { show: false },
            value: (u, v) => format(v),
        }))],
        axes: [
            { stroke: '#57606a', grid: { stroke: '#eaeef2' } },
            { stroke: '#57606a', grid: { stroke: '#eaeef2' }, size: 72, values: (u, vals) => vals.map(format) },
        ],
        legend: { live: true },
        cursor: { drag: { x: false, y: false } },
    };
    state.plot = new uPlot(opts, state.data, host);
    host.dataset.points = times.length;
    host.dataset.lastTime = lastMillis(times);
    state.resize = new ResizeObserver(() => state.plot.setSize(size(host)));
    state.resize.observe(host);
    // A chart scrolled out of view keeps its points but is not drawn until it comes back: most
    // of a page's charts are below the fold, and drawing is most of what a tick costs.
    state.visible = true;
    state.seen = new IntersectionObserver(entries => {
        state.visible = entries[entries.length - 1].isIntersecting;
        if (state.visible && !paused && !document.hidden) draw(state);
    });
    state.seen.observe(host);
    charts.set(id, state);
}

// A tab in the background draws nothing; it catches up when shown again.
document.addEventListener('visibilitychange', () => {
    if (!document.hidden && !paused) redraw();
});

// batch: [{ id, times, columns }]: the new points of every chart on the page, one call a second.
export function append(batch) {
    for (const { id, times, columns } of batch) {
        const state = charts.get(id);
        if (!state) continue;
        const data = state.data;
        data[0].push(...times);
        columns.forEach((values, i) => data[i + 1].push(...values));
        // Keep an hour and a little more: the longest window the studio offers.
        const excess = data[0].length - 3700;
        if (excess > 0) data.forEach(column => column.splice(0, excess));
        state.dirty = true;
    }
    if (!paused) redraw();
}

// Replaces a chart's points, when the window grows beyond what it holds.
export function reset(id, windowSeconds, times, columns) {
    const state = charts.get(id);
    if (!state) return;
    state.data = [times, ...columns];
    state.windowSeconds = windowSeconds;
    state.dirty = true;
    if (!paused) redraw();
}

export function setPaused(value) {
    paused = value;
    if (!paused) redraw();
}

function redraw() {
    if (document.hidden) return;
    for (const state of charts.values()) {
        if (state.visible) draw(state);
    }
}

function draw(state) {
    if (!state.dirty) return;
    state.dirty = false;
    state.plot.setData(state.data);
    // What the chart shows, readable from the page (end-to-end tests, a user's devtools).
    state.host.dataset.points = state.data[0].length;
    state.host.dataset.lastTime = lastMillis(state.data[0]);
}

// The newest point's time in unix milliseconds ('' when empty).
function lastMillis(times) {
    return times.length ? Math.round(times.at(-1) * 1000) : '';
}

export function dispose(id) {
    const state = charts.get(id);
    if (!state) return;
    state.resize.disconnect();
    state.seen.disconnect();
    state.plot.destroy();
    charts.delete(id);
}
