// What the faces say about the calibration data: the page's header and the plugin's data line.

// "6 calibration samples (calibration_data: images, im_info)": `samples` is state 'samples'
// ({count, folder}), `files` state 'calibrationFiles' (their first path part names the input).
export function samplesText(samples, files = []) {
  const inputs = [...new Set((files ?? []).map((f) => f.path.split('/')[0]))];
  const noun = samples.count === 1 ? 'calibration sample' : 'calibration samples';
  return `${samples.count} ${noun} (${samples.folder}${inputs.length ? `: ${inputs.join(', ')}` : ''})`;
}

// Data opened before its model was read (state 'heldData'): what happens next. `openModelHint`:
// how to open a model on this face.
export function heldDataText(held, openModelHint) {
  const what = `${held.label} (${held.files} file${held.files === 1 ? '' : 's'})`;
  return held.reading ? `${what}: reading the model…` : `${what} is kept: ${openModelHint} to check and use it`;
}
