// What a person gets from the window, for the page's and the plugin's Chromium tests: a download
// started by a click, and whether a box lies wholly inside the window.
import fs from 'node:fs';
import { expect } from 'vitest';

// The file a click downloads: {name, bytes}.
export async function download(page, click) {
  const [d] = await Promise.all([page.waitForEvent('download'), click()]);
  return { name: d.suggestedFilename(), bytes: fs.readFileSync(await d.path()) };
}

// A box lies wholly inside the window (what a person sees without scrolling sideways).
export async function expectInWindow(page, locator, what) {
  await locator.scrollIntoViewIfNeeded();
  const b = await locator.boundingBox();
  const { width, height } = page.viewportSize();
  expect(b, `${what} is visible`).not.toBeNull();
  expect(b.x, `${what} left`).toBeGreaterThanOrEqual(0);
  expect(b.y, `${what} top`).toBeGreaterThanOrEqual(0);
  expect(b.x + b.width, `${what} right`).toBeLessThanOrEqual(width + 0.5);
  expect(b.y + b.height, `${what} bottom`).toBeLessThanOrEqual(height + 0.5);
  return b;
}
