// A float model (no calibration nodes) has nothing quantized to analyse: every analysis would be
// empty. The analyses panel says so for as long as that model is open, and offers to make the
// calibrated model here with the core's calibrate (the CLI's `ptqscope calibrate`, its default
// thresholds) from the calibration data opened; the host then continues on the calibrated model
// (`useCalibrated(name, bytes)`: the page opens it with the same data, the plugin saves it for Netron).
import { el } from './forms.mjs';
import { postableFiles } from './pipeline.mjs';

// Whether the open model is a float one: loaded, and without a single calibration node.
export const isFloatModel = (state) => Boolean(state.get('summary')) && !(state.get('summary').calibrations?.length);

const calibratedName = (name) => `${String(name ?? 'model').replace(/\.onnx$/i, '')}_calibrated_model.onnx`;

/**
 * mountCalibrateBox(root, state, runner, {useCalibrated}) -> {element, dispose()}
 * runner: the host's analysis runner (runner.call('calibrate', ...) on its pool's worker).
 */
export function mountCalibrateBox(root, state, runner, { useCalibrated }) {
  const doc = root.ownerDocument;
  const text = el(doc, 'p', { class: 'ptq-float-model-text' });
  const button = el(doc, 'button', { type: 'button', class: 'ptq-calibrate' });
  const status = el(doc, 'span', { class: 'ptq-calibrate-status', 'aria-live': 'polite' });
  const element = el(doc, 'div', { class: 'ptq-float-model', role: 'status', hidden: true }, text, el(doc, 'div', {}, button, status));
  root.append(element);

  function draw() {
    element.hidden = !isFloatModel(state);
    if (element.hidden) return;
    const samples = state.get('samples')?.count;
    text.textContent = `${state.get('modelName') ?? 'This model'} has no calibration nodes: it is a float model, nothing in it is ` +
      'quantized, so every analysis would be empty. Make its calibrated model here (HzCalibration nodes, max thresholds over the ' +
      'calibration samples, as `ptqscope calibrate` does), or open the calibrated model.';
    button.textContent = samples ? `Calibrate with the ${samples} calibration sample${samples === 1 ? '' : 's'}` : 'Calibrate (open its calibration data first)';
    button.disabled = !samples;
  }

  button.addEventListener('click', async () => {
    const model = state.get('modelBytes');
    const files = state.get('calibrationFiles');
    if (!model || !files?.length) return;
    button.disabled = true;
    status.textContent = 'Calibrating…';
    try {
      const made = await runner.call('calibrate', { model, files: postableFiles(files) });
      const name = calibratedName(state.get('modelName'));
      status.textContent = `${made.activations} activation and ${made.weights} weight calibration nodes from ${made.samples} samples: ${name}`;
      await useCalibrated(name, made.model);
    } catch (err) {
      status.textContent = '';
      state.set('error', `calibrate: ${err.message}`);
    } finally {
      draw();
    }
  });

  const offs = ['summary', 'samples', 'modelName'].map((k) => state.on(k, draw));
  draw();
  return {
    element,
    dispose() {
      offs.forEach((off) => off());
      element.remove();
    },
  };
}
