/**
 * Charts, drawn with Chart.js. Only the pieces used here are registered, so the bundle carries bar and line
 * charts on a category axis and nothing else. Every chart sits next to a table of the same numbers (for screen
 * readers, for copying, and because a chart alone hides exact amounts).
 */
import {
	BarController,
	BarElement,
	CategoryScale,
	Chart,
	Legend,
	LinearScale,
	LineController,
	LineElement,
	PointElement,
	Tooltip,
} from "chart.js";
import { h } from "./dom";

Chart.register(
	BarController,
	BarElement,
	CategoryScale,
	LinearScale,
	LineController,
	LineElement,
	PointElement,
	Legend,
	Tooltip,
);

const PALETTE = ["#2563eb", "#16a34a", "#d97706", "#9333ea", "#dc2626", "#0891b2", "#4b5563", "#db2777"];
const live = new Set<Chart>();

/** Charts hold canvases and listeners; a page change releases them. */
export function destroyCharts(): void {
	for (const chart of live) chart.destroy();
	live.clear();
}

/** What each colour of a chart stands for, as text under it: readable, copyable, and the same on every screen. */
function legend(items: { label: string; color: string }[]): HTMLElement {
	return h(
		"ul",
		{ class: "legend", "aria-label": "Legend" },
		items.map((item) => {
			const swatch = h("span", { class: "swatch", "aria-hidden": "true" });
			// Through the CSSOM: the console's Content-Security-Policy refuses inline style attributes.
			swatch.style.backgroundColor = item.color;
			return h("li", null, swatch, item.label);
		}),
	);
}

function canvasBox(
	label: string,
	items: { label: string; color: string }[],
): { box: HTMLElement; canvas: HTMLCanvasElement } {
	const canvas = h("canvas", { role: "img", "aria-label": label });
	return {
		box: h("figure", { class: "chart-figure" }, h("div", { class: "chart" }, canvas), legend(items)),
		canvas,
	};
}

const colorOf = (i: number) => PALETTE[i % PALETTE.length] as string;

export function barChart(
	label: string,
	labels: string[],
	values: number[],
	formatValue: (value: number) => string,
	/** What the bars are, for the legend; the chart's label by default. */
	series = label,
): HTMLElement {
	const { box, canvas } = canvasBox(label, [{ label: series, color: colorOf(0) }]);
	const chart = new Chart(canvas, {
		type: "bar",
		data: { labels, datasets: [{ label: series, data: values, backgroundColor: colorOf(0) }] },
		options: {
			indexAxis: "y",
			animation: false,
			maintainAspectRatio: false,
			plugins: {
				legend: { display: false },
				tooltip: { callbacks: { label: (item) => formatValue(Number(item.raw)) } },
			},
			scales: { x: { beginAtZero: true, ticks: { callback: (value) => formatValue(Number(value)) } } },
		},
	});
	live.add(chart);
	return box;
}

export interface Series {
	label: string;
	values: number[];
}

export function lineChart(label: string, labels: string[], series: Series[]): HTMLElement {
	const { box, canvas } = canvasBox(
		label,
		series.map((s, i) => ({ label: s.label, color: colorOf(i) })),
	);
	const chart = new Chart(canvas, {
		type: "line",
		data: {
			labels,
			datasets: series.map((s, i) => ({
				label: s.label,
				data: s.values,
				borderColor: colorOf(i),
				backgroundColor: colorOf(i),
				tension: 0.2,
			})),
		},
		options: {
			animation: false,
			maintainAspectRatio: false,
			interaction: { mode: "index", intersect: false },
			plugins: { legend: { display: false } },
			scales: { y: { beginAtZero: true, ticks: { precision: 0 } } },
		},
	});
	live.add(chart);
	return box;
}
