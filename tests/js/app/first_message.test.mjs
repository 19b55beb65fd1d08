// web/app/graph/first_message.mjs (how the page's workers get the compiled wasm module first) on a
// real MessageChannel standing in for a Worker: requests posted before the first message follow it
// in order with their transfer lists, and a request the channel cannot clone fails its client's call
// with the reason instead of leaving it unanswered (a page waiting forever).
import { describe, expect, it } from 'vitest';
import { withFirstMessage } from '../../../web/app/graph/first_message.mjs';
import { createClient, serve } from '../../../web/pipeline/protocol.mjs';

// A Worker-like object over a MessageChannel: port2 is the worker, which answers `size` requests
// with the byte length it received and records every message it got.
function channelWorker() {
  const { port1, port2 } = new MessageChannel();
  const received = [];
  const onMessage = serve({ size: ({ bytes }) => ({ length: bytes.length }) }, (msg) => port2.postMessage(msg));
  port2.onmessage = ({ data }) => {
    received.push(data);
    if (data.type !== 'first') onMessage(data);
  };
  const worker = {
    onmessage: null,
    onerror: null,
    postMessage: (msg, transfer) => port1.postMessage(msg, transfer),
    terminate: () => { port1.close(); port2.close(); },
  };
  port1.onmessage = (ev) => worker.onmessage?.(ev);
  return { worker, received };
}

describe('a worker given its first message later', () => {
  it('holds the requests posted meanwhile and sends them after it, in order, transferring their buffers', async () => {
    const { worker, received } = channelWorker();
    let sendFirst;
    const client = createClient(() => withFirstMessage(worker, new Promise((resolve) => { sendFirst = resolve; })));
    const bytes = new Uint8Array(8);
    const a = client.call('size', { bytes }, { transfer: [bytes.buffer] });
    const b = client.call('size', { bytes: new Uint8Array(3) });
    expect(bytes.byteLength).toBe(8); // not sent yet
    sendFirst({ type: 'first' });
    await expect(a).resolves.toEqual({ length: 8 });
    await expect(b).resolves.toEqual({ length: 3 });
    expect(bytes.byteLength).toBe(0); // transferred, not copied
    expect(received.map((m) => m.type)).toEqual(['first', 'size', 'size']);
    worker.terminate();
  });

  it('a held request that cannot be cloned fails its call with the reason; the next call is answered', async () => {
    const workers = [];
    const spawn = () => {
      const { worker } = channelWorker();
      workers.push(worker);
      return withFirstMessage(worker, Promise.resolve({ type: 'first' }));
    };
    const client = createClient(spawn, { name: 'engine worker' });
    // A function cannot be cloned: postMessage throws a DataCloneError, as "out of memory" does for a
    // message too big to copy.
    const err = await client.call('size', { bytes: new Uint8Array(2), notData: () => {} }).catch((e) => e);
    expect(err.name).toBe('InternalError');
    expect(err.message).toMatch(/^engine worker failed: a message could not be sent to it: .*could not be cloned/);
    await expect(client.call('size', { bytes: new Uint8Array(5) })).resolves.toEqual({ length: 5 });
    expect(workers).toHaveLength(2); // the failed worker was ended, a fresh one answered
    workers.forEach((w) => w.terminate());
  });
});
