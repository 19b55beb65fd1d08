// runAnalysis: one analysis request on a worker pool. Sweeps (sensitivity, leave_one_out, distribution,
// channelwise) are split: listItems -> contiguous chunks of item positions, scheduled on whichever
// worker is free, then merged by the core (mergeResults re-sorts with §3.4, so the result does not
// depend on the split). Progress counts finished items over all chunks, with an ETA.
//
// Cancellation (`signal`): no further chunk is scheduled and the busy workers are terminated; the
// chunks finished so far are merged and returned with `cancelled: true` (or the AbortError is thrown
// when none finished).
import { abortError } from './pool.mjs';

export const SPLITTABLE = new Set(['sensitivity', 'leave_one_out', 'distribution', 'channelwise']);

// [begin, end) ranges of `count` items in `parts` near-equal contiguous chunks.
export function chunkRanges(count, parts) {
  const n = Math.max(1, Math.min(count, parts));
  return Array.from({ length: n }, (_, k) => ({
    begin: Math.floor((k * count) / n),
    end: Math.floor(((k + 1) * count) / n),
  }));
}

// How many chunks for `items` items on `workers` workers: a few per worker so that uneven item costs
// (early items have larger downstream cones) even out, but not so many that the per-chunk reference
// runs dominate. One worker without a signal runs the whole sweep in one call.
export function chunkCount(items, workers, cancellable) {
  if (workers <= 1 && !cancellable) return 1;
  return Math.min(items, Math.max(1, workers) * 3);
}

function progressTracker(total, onProgress, now) {
  const start = now();
  let done = 0;
  return () => {
    done++;
    const elapsed = now() - start;
    const etaMs = done > 0 ? (elapsed / done) * (total - done) : null;
    onProgress?.(done, total, etaMs);
  };
}

export async function runAnalysis(pool, request, { onItem, onProgress, signal, chunks, now = () => Date.now() } = {}) {
  if (signal?.aborted) throw abortError(signal);
  const { items: names } = SPLITTABLE.has(request.analysis)
    ? await pool.request({ type: 'listItems', request }, { signal })
    : { items: null };

  // Not splittable (or nothing to split): one call; item events, when the core sends any, drive progress.
  if (!names || names.length <= 1 || pool.size <= 1 && !signal && !chunks) {
    let tick = null;
    const reply = await pool.request({ type: 'analyze', request }, {
      signal,
      onEvent: (ev) => {
        tick ??= progressTracker(ev.total, onProgress, now);
        onItem?.(ev);
        tick();
      },
    });
    return JSON.parse(reply.json);
  }

  const ranges = chunkRanges(names.length, chunks ?? chunkCount(names.length, pool.size, Boolean(signal)));
  const tick = progressTracker(names.length, onProgress, now);
  const parts = new Array(ranges.length).fill(null);
  const local = new AbortController(); // aborts the running chunks when `signal` fires
  const forward = () => local.abort(signal.reason);
  signal?.addEventListener('abort', forward, { once: true });
  let failure = null;
  try {
    await Promise.all(ranges.map(async (range, k) => {
      try {
        const reply = await pool.request(
          { type: 'analyze', request: { ...request, items: range } },
          { signal: local.signal, onEvent: (ev) => { onItem?.(ev); tick(); } },
        );
        parts[k] = reply.json;
      } catch (err) {
        if (err.name !== 'AbortError') {
          failure ??= err;
          local.abort(err); // a real error stops the other chunks too
        }
      }
    }));
  } finally {
    signal?.removeEventListener('abort', forward);
  }
  if (failure) throw failure;
  const done = parts.filter(Boolean);
  if (!done.length) throw abortError(signal);
  const merged = done.length === 1
    ? JSON.parse(done[0])
    : JSON.parse((await pool.request({ type: 'merge', parts: done })).json);
  if (done.length < parts.length) merged.cancelled = true;
  return merged;
}
