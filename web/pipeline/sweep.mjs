// runAnalysis: one analysis request on a worker pool. Sweeps (the analyses the core describes as
// `splittable`: sensitivity, leave_one_out, distribution, channelwise, and acc_error whose items are
// its curves) are split: listItems -> interleaved parts of the item list (item k goes to part
// k mod parts, so every part gets early items with large downstream cones and late cheap ones),
// scheduled on whichever worker is free, then merged by the core (mergeResults re-sorts with §3.4,
// so the result does not depend on the split). Progress counts finished items over all parts, with an ETA.
//
// Cancellation (`signal`): no further part is scheduled and the busy workers are terminated; the
// parts finished so far are merged and returned with `cancelled: true` (or the AbortError is thrown
// when none finished).
import { describe } from './catalog.mjs';
import { abortError } from './pool.mjs';

// Whether the core splits `analysis` into items (an unknown name is not: the core then names it).
export const isSplittable = (analysis) => describe.analyses.some((a) => a.name === analysis && a.splittable);

// [begin, end) ranges of `count` items in `parts` near-equal contiguous chunks.
export function chunkRanges(count, parts) {
  const n = Math.max(1, Math.min(count, parts));
  return Array.from({ length: n }, (_, k) => ({
    begin: Math.floor((k * count) / n),
    end: Math.floor(((k + 1) * count) / n),
  }));
}

// The items of part k of `parts`: names[k], names[k + parts], ... (every part non-empty).
export function interleave(names, parts) {
  const n = Math.max(1, Math.min(names.length, parts));
  return Array.from({ length: n }, (_, k) => names.filter((_, i) => i % n === k));
}

// How many parts for `items` items on `workers` workers. Each part repeats the reference runs of its
// samples (a sensitivity / leave-one-out part finds its keep-all base runs in the worker's run cache
// when an earlier part on that worker made them; the other analyses' passes are repeated), so one
// part per worker is the cheapest; a cancellable run uses three per worker so that cancelling keeps
// most of the finished work. One worker without a signal runs the sweep in one call.
export function partCount(items, workers, cancellable) {
  if (workers <= 1 && !cancellable) return 1;
  return Math.min(items, Math.max(1, workers) * (cancellable ? 3 : 1));
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
  // A request that already names its items (a part chosen by the caller) is run as it is.
  const { items: names } = isSplittable(request.analysis) && request.items === undefined
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

  const count = chunks ?? partCount(names.length, pool.size, Boolean(signal));
  // Items are sent by name; a sweep with repeated names (an interested_nodes list naming an item
  // twice) cannot be addressed by name, so it is split into position ranges instead.
  const ranges = new Set(names).size === names.length ? interleave(names, count) : chunkRanges(names.length, count);
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
