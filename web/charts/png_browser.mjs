// Browser only: SVG text -> PNG Blob through an <img> and a <canvas> (what the web app's "PNG"
// export uses; the CLI uses ./png.mjs with resvg). Everything stays in the page: the SVG is loaded
// from a blob: URL, which a CSP with img-src blob: allows and which works from file://.
// Chart SVGs carry width/height attributes and no external references, so the canvas is not tainted.

/**
 * svgToPngBlob(svgText, {scale = 2, background = '#ffffff', document = globalThis.document}) -> Promise<Blob>
 */
export async function svgToPngBlob(svgText, { scale = 2, background = '#ffffff', document = globalThis.document } = {}) {
  const width = Number(/\bwidth="([\d.]+)"/.exec(svgText)?.[1] || 800);
  const height = Number(/\bheight="([\d.]+)"/.exec(svgText)?.[1] || 600);
  const url = URL.createObjectURL(new Blob([svgText], { type: 'image/svg+xml' }));
  try {
    const img = new Image();
    img.decoding = 'sync';
    await new Promise((resolve, reject) => {
      img.onload = resolve;
      img.onerror = () => reject(new Error('PNG export: the browser could not load the chart SVG'));
      img.src = url;
    });
    const canvas = document.createElement('canvas');
    canvas.width = Math.round(width * scale);
    canvas.height = Math.round(height * scale);
    const ctx = canvas.getContext('2d');
    ctx.fillStyle = background;
    ctx.fillRect(0, 0, canvas.width, canvas.height);
    ctx.drawImage(img, 0, 0, canvas.width, canvas.height);
    return await new Promise((resolve, reject) => canvas.toBlob((b) => (b ? resolve(b) : reject(new Error('PNG export: canvas.toBlob failed'))), 'image/png'));
  } finally {
    URL.revokeObjectURL(url);
  }
}
