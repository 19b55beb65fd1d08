// Node only: SVG text -> PNG bytes for the CLI, with resvg (no browser). Fonts: the system's
// (Debian's fonts-dejavu-core is on every machine of the project), DejaVu Sans as the default, which
// is the family the charts name first and whose width textWidth() estimates.
// The browser does the same with a canvas: see svgToPngBlob in ./png_browser.mjs.
import { Resvg } from '@resvg/resvg-js';

const FONT_OPTIONS = {
  loadSystemFonts: true,
  defaultFontFamily: 'DejaVu Sans',
  sansSerifFamily: 'DejaVu Sans',
};

/**
 * svgToPng(svgText, {scale = 1, background = '#ffffff'}) -> Buffer (PNG)
 * scale: device pixels per SVG pixel (2 for sharp images). Throws with the resvg message when the
 * SVG cannot be parsed.
 */
export function svgToPng(svgText, { scale = 1, background = '#ffffff' } = {}) {
  const resvg = new Resvg(svgText, {
    font: FONT_OPTIONS,
    background,
    fitTo: scale === 1 ? { mode: 'original' } : { mode: 'zoom', value: scale },
  });
  return resvg.render().asPng();
}
