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

function canvasBox(label: string): { box: HTMLElement; canvas: HTMLCanvasElement } {
	const canvas = h("canvas", { role: "img", "aria-label": label });
	return { box: h("div", { class: "chart" }, canvas), canvas };
}

export function barChart(
	label: string,
	labels: string[],
	values: number[],
	formatValue: (value: number) => string,
): HTMLElement {
	const { box, canvas } = canvasBox(label);
	const chart = new Chart(canvas, {
		type: "bar",
		data: { labels, datasets: [{ label, data: values, backgroundColor: PALETTE[0] }] },
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
	const { box, canvas } = canvasBox(label);
	const chart = new Chart(canvas, {
		type: "line",
		data: {
			labels,
			datasets: series.map((s, i) => ({
				label: s.label,
				data: s.values,
				borderColor: PALETTE[i % PALETTE.length],
				backgroundColor: PALETTE[i % PALETTE.length],
				tension: 0.2,
			})),
		},
		options: {
			animation: false,
			maintainAspectRatio: false,
			interaction: { mode: "index", intersect: false },
			scales: { y: { beginAtZero: true, ticks: { precision: 0 } } },
		},
	});
	live.add(chart);
	return box;
}
