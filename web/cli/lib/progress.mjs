// Progress on stderr for long work: a redrawn bar with an ETA on a terminal, and on anything else
// (a pipe, a log file) one line per stage and at most one progress line every few seconds.
// --quiet silences it.

export function formatDuration(ms) {
  if (ms === null || !Number.isFinite(ms)) return '?';
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  return m < 60 ? `${m}m${String(s % 60).padStart(2, '0')}s` : `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}

export function progressLine(label, done, total, etaMs, width = 24) {
  const filled = total > 0 ? Math.round((done / total) * width) : 0;
  const eta = done < total ? ` ETA ${formatDuration(etaMs)}` : '';
  return `${label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${Math.floor(done)}/${total}${eta}`; // done is fractional inside an item
}

export function createProgress({ quiet = false, stream = process.stderr, now = () => Date.now(), interval = 5000 } = {}) {
  if (quiet) return { stage() {}, update() {}, message() {}, end() {} };
  const tty = Boolean(stream.isTTY);
  let label = 'Progress';
  let lastPrint = now();
  let open = false; // a bar is drawn on the current terminal line
  const clear = () => {
    if (open) stream.write('\r\x1b[K');
    open = false;
  };
  return {
    stage(text) {
      clear();
      label = text;
      stream.write(`${text}\n`);
    },
    update(done, total, etaMs) {
      if (tty) {
        stream.write(`\r\x1b[K${progressLine(label, done, total, etaMs)}`);
        open = true;
      } else if (done === total || now() - lastPrint >= interval) {
        // A log: the stage line was printed already, progress lines are indented under it.
        lastPrint = now();
        stream.write(`${progressLine(' ', done, total, etaMs)}\n`);
      }
    },
    message(text) {
      clear();
      stream.write(`${text}\n`);
    },
    end() {
      if (open) stream.write('\n');
      open = false;
    },
  };
}
