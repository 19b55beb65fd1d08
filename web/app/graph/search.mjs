// Search by node name, tensor name or op type (pure). Returns up to `limit` matches, best first:
// exact > prefix > substring, nodes before tensors before op types. One match per place it leads to:
// a node found by its name and by its op type (or through its output tensor) is listed once, by the
// best of them.
export function searchGraph(graph, query, limit = 50) {
  const q = query.trim().toLowerCase();
  if (!q) return [];
  const scored = [];
  const score = (text) => {
    const t = text.toLowerCase();
    if (t === q) return 0;
    if (t.startsWith(q)) return 1;
    return t.includes(q) ? 2 : -1;
  };
  for (const n of graph.nodes) {
    const s = score(n.name);
    if (s >= 0) scored.push({ kind: 'node', node: n.name, text: n.name, detail: n.op_type, rank: s * 3 });
    const o = score(n.op_type);
    if (o >= 0 && o < 2) scored.push({ kind: 'op', node: n.name, text: n.name, detail: n.op_type, rank: o * 3 + 2 });
  }
  for (const [tensor, info] of Object.entries(graph.values ?? {})) {
    const s = score(tensor);
    if (s < 0) continue;
    // A tensor is shown at its producer, or at its first consumer for graph inputs/initializers.
    const node = info.producer ?? info.consumers?.[0] ?? null;
    scored.push({ kind: 'tensor', node, tensor, text: tensor, detail: node ? `tensor of ${node}` : 'tensor', rank: s * 3 + 1 });
  }
  scored.sort((a, b) => a.rank - b.rank || a.text.length - b.text.length || (a.text < b.text ? -1 : 1));
  const seen = new Set();
  const out = [];
  for (const m of scored) {
    const key = m.node ? `node:${m.node}` : `${m.kind}:${m.text}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(m);
    if (out.length >= limit) break;
  }
  return out;
}
