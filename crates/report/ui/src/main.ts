// The report's entry point: reads the data the naslab binary embedded and draws the
// run report or the comparison.
import 'uplot/dist/uPlot.min.css';
import './style.css';
import { renderCompare } from './compare';
import { renderReport } from './report';
import type { Page } from './types';

function start(): void {
  const app = document.getElementById('app');
  const data = document.getElementById('naslab-data');
  if (!app || !data) return;
  try {
    const page = JSON.parse(data.textContent ?? 'null') as Page;
    if (page?.kind === 'compare') renderCompare(page, app);
    else if (page?.kind === 'report') renderReport(page, app);
    else throw new Error('the embedded data is neither a report nor a comparison');
  } catch (e) {
    app.textContent = `This report cannot be shown: ${String(e)}`;
    console.error(e);
  }
}

start();
