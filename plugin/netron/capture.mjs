// The model file Netron opens, captured before Netron sees it: Netron opens the first accepted file
// of its <input id=open-file-dialog> `change` or of a `drop` on body. Capture-phase listeners on the
// window run before any listener on those elements, and they only read `files` (no preventDefault,
// no stopPropagation), so Netron behaves exactly as without the plugin.
// Not captured: models opened through ?url=, #<url> or <meta name=file> (Netron fetches those).

const isOnnx = (name) => /\.onnx$/i.test(name ?? '');

// Netron's own choice (`__view__.accept(name, size)`) when available, else the first .onnx.
function chosenFile(win, files) {
  const view = win.__view__;
  const accepts = (f) => {
    if (view && typeof view.accept === 'function') {
      try {
        return !!view.accept(f.name, f.size);
      } catch {
        // fall through to our own rule
      }
    }
    return isOnnx(f.name);
  };
  return files.find(accepts) ?? null;
}

// Calls onOpen({ name, file, onnx, others }) for every file Netron is about to open; `onnx` false means
// the plugin cannot analyse it (another format); `others`: the files opened with it (a model's
// external-data files). `skip(event)` lets the plugin ignore drops on its own
// panel. Returns a function removing the listeners.
export function captureModelFiles(win, onOpen, { skip = () => false } = {}) {
  const handle = (fileList) => {
    const files = Array.from(fileList ?? []);
    if (!files.length) return;
    const file = chosenFile(win, files);
    if (file) onOpen({ name: file.name, file, onnx: isOnnx(file.name), others: files.filter((f) => f !== file) });
  };
  const onChange = (e) => {
    if (e.target && e.target.id === 'open-file-dialog') handle(e.target.files);
  };
  const onDrop = (e) => {
    if (skip(e)) return;
    handle(e.dataTransfer?.files);
  };
  win.addEventListener('change', onChange, true);
  win.addEventListener('drop', onDrop, true);
  return () => {
    win.removeEventListener('change', onChange, true);
    win.removeEventListener('drop', onDrop, true);
  };
}
