// The embedded example: the calibrated digits CNN and its calibration_data, bundled at build time
// by vite.config.mjs (virtual module, base64) so it also opens from file:// without any request.
const decode = (b64) => Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));

export async function loadExample() {
  const { default: example } = await import('virtual:ptqscope-example');
  return {
    model: { path: example.model.path, bytes: decode(example.model.base64) },
    files: example.files.map((f) => ({ path: f.path, bytes: decode(f.base64) })),
    folder: example.folder,
  };
}
