// A Worker whose first message comes from elsewhere (wasm_share.mjs: the compiled wasm module):
// messages posted meanwhile wait, in order, with their transfer lists. A waiting message that cannot
// be posted when its turn comes (e.g. "Data cannot be cloned, out of memory") would throw where no
// caller catches it, so it is reported as the worker's error instead: its client fails the pending
// requests (web/pipeline/protocol.mjs) rather than waiting for an answer forever.
// `first`: a promise of the first message that does not reject.
export function withFirstMessage(worker, first) {
  const post = worker.postMessage.bind(worker);
  const send = (message, transfer) => {
    try {
      post(message, transfer ?? []);
    } catch (err) {
      worker.onerror?.({ message: `a message could not be sent to it: ${err?.message ?? err}` });
    }
  };
  let queue = [];
  worker.postMessage = (message, transfer) => (queue ? queue.push([message, transfer]) : post(message, transfer));
  first.then((message) => {
    send(message);
    for (const [queued, transfer] of queue) send(queued, transfer);
    queue = null;
  });
  return worker;
}
