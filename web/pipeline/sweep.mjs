// runAnalysis: one analysis request on a worker pool. Sweeps (the analyses the core describes as
// `splittable`: sensitivity, leave_one_out, distribution, channelwise, and acc_error whose items are
// its curves) are split: listItems -> interleaved parts of the item list (item k goes to part
// k mod parts, so every part gets early items with large downstream cones and late cheap ones),
// scheduled on whichever worker is free, then merged by the core (mergeResults re-sorts with §3.4,
// so the result does not depend on the split). Progress counts finished items over all parts (within
// an item too, where the core reports its steps), with an ETA.
// The same rule (partOf) cuts a sweep into the CLI's shards (`--shard K/N`: one part per process or
// machine, merged later by `ptqscope merge`).
//
// Cancellation (`signal`): no further part is scheduled and the busy workers are terminated; the
// parts finished so far are merged and returned with `cancelled: true` (or the AbortError is thrown
// when none finished).
import { describe } from './catalog.mjs';
import { abortError } from './pool.mjs';

// Whether the core splits `analysis` into items (an unknown name is not: the core then names it).
export const isSplittable = (analysis) => describe.analyses.some((a) => a.name === analysis && a.splittable);

// Part k (0-based) of `parts` of a sweep's item names, as the request's `items`: the names k,
// k + parts, k + 2·parts, ... (interleaved); a sweep naming an item twice (an interested_nodes list
// repeating one) cannot be addressed by name, so it is cut into `parts` contiguous position ranges
// {begin, end} instead. Empty when there are fewer items than parts.
export function partOf(names, k, parts) {
  if (new Set(names).size === names.length) return names.filter((_, i) => i % parts === k);
  return { begin: Math.floor((k * names.length) / parts), end: Math.floor(((k + 1) * names.length) / parts) };
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

// Progress over the calls of a run, in items. Each call's events carry `done` / `total` of that call
// (its items, or for a sensitivity sweep its (item, sample) evaluations, which advance in every
// sample block before any row is finished), so a call of `size` items has finished size × done / total
// of them; the run's progress is their sum (fractional while a call is inside an item).
function progressTracker(total, onProgress, now) {
  const start = now();
  const shares = new Map();
  let done = 0;
  return (call, size, ev) => {
    const share = ev.total > 0 ? Math.min(1, ev.done / ev.total) : 1;
    done = Math.round((done + size * (share - (shares.get(call) ?? 0))) * 1e9) / 1e9;
    shares.set(call, share);
    const elapsed = now() - start;
    const etaMs = done > 0 ? (elapsed / done) * (total - done) : null;
    onProgress?.(done, total, etaMs);
  };
}

// The number of items of a part made by partOf (names, or a position range).
const partSize = (part) => (Array.isArray(part) ? part.length : part.end - part.begin);

// `shard` ({index, count}, 1 ≤ index ≤ count): run only part index − 1 of `count` (partOf) of the
// sweep, itself split over the pool; the result is that part's document, for mergeResults.
export async function runAnalysis(pool, request, { onItem, onProgress, signal, chunks, shard, now = () => Date.now() } = {}) {
  if (signal?.aborted) throw abortError(signal);
  // A request that already names its items (a part chosen by the caller) is run as it is.
  let { items: names } = isSplittable(request.analysis) && request.items === undefined
    ? await pool.request({ type: 'listItems', request }, { signal })
    : { items: null };
  let whole = request; // what a single call runs
  if (shard && names) {
    const part = partOf(names, shard.index - 1, shard.count);
    whole = { ...request, items: part };
    names = Array.isArray(part) ? part : null; // a position range runs in one call
  }

  // Not splittable (or nothing to split): one call; item events, when the core sends any, drive progress.
  if (!names || names.length <= 1 || pool.size <= 1 && !signal && !chunks) {
    let tick = null;
    const reply = await pool.request({ type: 'analyze', request: whole }, {
      signal,
      onEvent: (ev) => {
        const size = names?.length ?? ev.total;
        tick ??= progressTracker(size, onProgress, now);
        onItem?.(ev);
        tick(0, size, ev);
      },
    });
    return JSON.parse(reply.json);
  }

  const n = Math.max(1, Math.min(names.length, chunks ?? partCount(names.length, pool.size, Boolean(signal))));
  const ranges = Array.from({ length: n }, (_, k) => partOf(names, k, n));
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
          { signal: local.signal, onEvent: (ev) => { onItem?.(ev); tick(k, partSize(range), ev); } },
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
