/**
 * Small charts drawn on the server as inline SVG (no script): one bar per point, an optional
 * second series overlaid (errors over requests), a title and a text summary for screen readers.
 */
import { html, type SafeHtml } from "./html.ts";

export interface BarChartOptions {
  title: string;
  /** One value per bar, oldest first. */
  values: readonly number[];
  /** Drawn over `values` in the error colour (same length). */
  overlay?: readonly number[];
  /** Labels under the first and last bar ("-60 min", "now"). */
  startLabel?: string;
  endLabel?: string;
  width?: number;
  height?: number;
  /** The text summary for screen readers, instead of "total, peak" (a level such as a backlog has no meaningful total). */
  summary?: string;
}

export function barChart(o: BarChartOptions): SafeHtml {
  const width = o.width ?? 480;
  const height = o.height ?? 120;
  const plotH = height - 16;
  const n = Math.max(1, o.values.length);
  const barW = width / n;
  const max = Math.max(1, ...o.values, ...(o.overlay ?? []));
  const total = o.values.reduce((a, b) => a + b, 0);
  const overlayTotal = (o.overlay ?? []).reduce((a, b) => a + b, 0);
  // Empty bars draw nothing (a quiet hour stays a small document).
  const bar = (v: number, i: number, cls: string) => {
    if (v <= 0) return null;
    const h = Math.round((v / max) * plotH * 10) / 10;
    return html`<rect class="${cls}" x="${(i * barW).toFixed(1)}" y="${(plotH - h).toFixed(1)}" width="${Math.max(1, barW - 1).toFixed(1)}" height="${h}"></rect>`;
  };
  const summary = o.summary ?? `${o.title}: ${total} in total, peak ${Math.max(0, ...o.values)} per bar${o.overlay ? `, ${overlayTotal} errors` : ""}.`;
  return html`<svg class="chart" role="img" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" aria-label="${summary}">
<title>${summary}</title>
${o.values.map((v, i) => bar(v, i, "bar"))}${(o.overlay ?? []).map((v, i) => bar(v, i, "err"))}
<text x="0" y="${height - 3}">${o.startLabel ?? ""}</text><text x="${width}" y="${height - 3}" text-anchor="end">${o.endLabel ?? ""}</text>
</svg>`;
}
