import { describe, it, expect } from 'vitest';
import { sensitivityTable, sortRows, filterRows, topK, toCsv, tableHtml, renderSensitivityTable } from '../../../web/charts/sensitivity_table.mjs';
import { createDocument } from '../../../web/charts/node_dom.mjs';

const section = {
  '317_HzCalibration': { node: 'Conv_2', threshold: 3.12345, qtype: 'int8', 'cosine-similarity': 0.99, mse: 0.002, sqnr: 'inf' },
  '21': { node: 'Conv_5', threshold: null, qtype: 'int8', 'cosine-similarity': 'nan', mse: 'nan', sqnr: 12 },
  'a,"b"': { node: 'Gemm_1', threshold: 1, qtype: 'int16', 'cosine-similarity': 0.95, mse: 0.01, sqnr: 8 },
  x: { node: 'Relu_3', threshold: 2, qtype: 'int8', 'cosine-similarity': 0.99, mse: 0.002, sqnr: 30 },
};
const order = ['a,"b"', '317_HzCalibration', 'x', '21']; // the core's ranking (first metric ascending, NaN last)

describe('sensitivityTable', () => {
  it('keeps the core order (not the object key order) and puts extras before metrics', () => {
    const t = sensitivityTable(section, order);
    expect(t.columns).toEqual(['Node', 'node', 'threshold', 'qtype', 'cosine-similarity', 'mse', 'sqnr']);
    expect(t.rows.map((r) => r.item)).toEqual(order);
    expect(() => sensitivityTable(section, ['missing'])).toThrow(/"missing"/);
  });

  it('sorts each metric most-sensitive first with NaN last and ties in core order', () => {
    const t = sensitivityTable(section, order);
    expect(sortRows(t.rows, 'cosine-similarity').map((r) => r.item)).toEqual(['a,"b"', '317_HzCalibration', 'x', '21']);
    expect(sortRows(t.rows, 'mse').map((r) => r.item)).toEqual(['a,"b"', '317_HzCalibration', 'x', '21']);
    expect(sortRows(t.rows, 'sqnr').map((r) => r.item)).toEqual(['a,"b"', '21', 'x', '317_HzCalibration']);
    expect(sortRows(t.rows, 'sqnr', true).map((r) => r.item)).toEqual(['317_HzCalibration', 'x', '21', 'a,"b"']);
    expect(sortRows(t.rows, 'Node').map((r) => r.item)).toEqual(['21', '317_HzCalibration', 'a,"b"', 'x']);
    expect(sortRows(t.rows, 'threshold').map((r) => r.item)).toEqual(['a,"b"', 'x', '317_HzCalibration', '21']);
  });

  it('filters by item or node and takes the top k', () => {
    const t = sensitivityTable(section, order);
    expect(filterRows(t.rows, 'conv').map((r) => r.item)).toEqual(['317_HzCalibration', '21']);
    expect(filterRows(t.rows, 'HZCAL').map((r) => r.item)).toEqual(['317_HzCalibration']);
    expect(topK(t.rows, 2).map((r) => r.item)).toEqual(['a,"b"', '317_HzCalibration']);
    expect(topK(t.rows, 0).length).toBe(4);
  });

  it('writes RFC 4180 CSV with quoted fields and the schema spelling of non-finite values', () => {
    const t = sensitivityTable({ 'a,"b"': section['a,"b"'], '21': section['21'], 'l\nm': { 'cosine-similarity': Infinity } }, ['a,"b"', '21', 'l\nm']);
    expect(toCsv(t)).toBe([
      'Node,node,threshold,qtype,cosine-similarity,mse,sqnr',
      '"a,""b""",Gemm_1,1,int16,0.95,0.01,8',
      '21,Conv_5,,int8,nan,nan,12',
      '"l\nm",,,,inf,,',
      '',
    ].join('\r\n'));
  });

  it('renders static HTML with escaped text and sortable values, the metrics next to the name, names shortened in the middle', () => {
    const html = tableHtml(sensitivityTable(section, order));
    expect(html).toContain('<tr data-item="a,&quot;b&quot;"><td class="ptq-name-cell" title="a,&quot;b&quot;"><span class="ptq-mid" title="a,&quot;b&quot;"><span class="ptq-mid-head">a,&quot;b&quot;</span></span></td>');
    expect([...html.matchAll(/<th data-column="([^"]+)"/g)].map((m) => m[1])).toEqual(['Node', 'cosine-similarity', 'mse', 'sqnr', 'node', 'threshold', 'qtype']);
    // A tf2onnx-like name: its start in the head (cut by CSS), its last segments in the tail, whole in the title.
    const long = `StatefulPartitionedCall/model/${'block_3_expand/'.repeat(8)}Conv2D;model/block_3_expand_relu/Relu6`;
    const longHtml = tableHtml(sensitivityTable({ [long]: { 'cosine-similarity': 0.9 } }, [long]));
    expect(longHtml).toContain(`<td class="ptq-name-cell" title="${long}"><span class="ptq-mid" title="${long}"><span class="ptq-mid-head">${long.slice(0, long.lastIndexOf(';'))}</span><span class="ptq-mid-tail">${long.slice(long.lastIndexOf(';'))}</span></span></td>`);
    expect(html).toContain('<th data-column="mse" data-worse="higher">mse</th>');
    expect(html).toContain('<td class="num" data-value="inf">inf</td>');
    expect((html.match(/<tr data-item/g) || []).length).toBe(4);
  });
});

describe('renderSensitivityTable', () => {
  function mount(options) {
    const document = createDocument();
    const holder = document.createElement('div');
    const api = renderSensitivityTable(holder, sensitivityTable(section, order), options);
    const items = () => [...holder.querySelectorAll('tbody tr')].map((tr) => tr.getAttribute('data-item'));
    return { document, holder, api, items };
  }

  it('sorts by a clicked header in the metric direction, again to flip', () => {
    const { document, holder, items } = mount();
    expect(items()).toEqual(order);
    const th = holder.querySelector('th[data-column="sqnr"]');
    th.dispatchEvent(new document.defaultView.Event('click'));
    expect(th.getAttribute('aria-sort')).toBe('ascending');
    expect(items()).toEqual(['a,"b"', '21', 'x', '317_HzCalibration']);
    th.dispatchEvent(new document.defaultView.Event('click'));
    expect(th.getAttribute('aria-sort')).toBe('descending');
    expect(items()).toEqual(['317_HzCalibration', 'x', '21', 'a,"b"']);
  });

  it('sorts from the keyboard (Enter on a header)', () => {
    const { document, holder, items } = mount();
    const ev = new document.defaultView.Event('keydown');
    Object.defineProperty(ev, 'key', { value: 'Enter' });
    holder.querySelector('th[data-column="Node"]').dispatchEvent(ev);
    expect(items()).toEqual(['21', '317_HzCalibration', 'a,"b"', 'x']);
  });

  it('filters, limits to top k, exports the visible rows and focuses on row click', () => {
    const focused = [];
    const { document, holder, api, items } = mount({ onFocus: (item, row) => focused.push([item, row.cells.node]) });
    api.setFilter('conv');
    expect(items()).toEqual(['317_HzCalibration', '21']);
    api.setFilter('');
    api.setTopK(1);
    expect(items()).toEqual(['a,"b"']);
    expect(api.csv().split('\r\n').length).toBe(3);
    holder.querySelector('tbody tr').dispatchEvent(new document.defaultView.Event('click'));
    expect(focused).toEqual([['a,"b"', 'Gemm_1']]);
    // On screen the metrics come right after the item, the extra columns after them.
    const cells = [...holder.querySelectorAll('tbody tr td')].map((td) => td.textContent);
    expect(cells).toEqual(['a,"b"', '0.95', '0.01', '8', 'Gemm_1', '1', 'int16']);
  });

  it('heads the columns with words (the column name in the tooltip) and shows every row when the top-k field is empty', () => {
    const { holder, api, items } = mount({ itemLabel: 'Calibration node' });
    const heads = [...holder.querySelectorAll('thead th')].map((th) => [th.getAttribute('data-column'), th.textContent]);
    expect(heads).toEqual([['Node', 'Calibration node'], ['cosine-similarity', 'cosine-similarity'], ['mse', 'mse'], ['sqnr', 'sqnr'],
      ['node', 'Consumers'], ['threshold', 'threshold'], ['qtype', 'qtype']]);
    expect(holder.querySelector('th[data-column="node"]').getAttribute('title')).toBe("Consumers (column 'node' of the CSV export)");
    const top = holder.querySelector('input.top-k');
    expect([top.value, top.getAttribute('placeholder')]).toEqual(['', 'all']);
    api.setTopK(2);
    expect(items()).toHaveLength(2);
    api.setTopK(0);
    expect(items()).toHaveLength(4);
  });

  it('shortens long names in the middle: the start and the last path segments (at most 32 characters) shown, the full name in the text and tooltip', () => {
    const long = `${'StatefulPartitionedCall/model/block_3_expand_relu/Relu6;'.repeat(3)}StatefulPartitionedCall/model/block_3_expand/Conv2D__14`;
    const document = createDocument();
    const holder = document.createElement('div');
    renderSensitivityTable(holder, sensitivityTable({ [long]: { node: long, 'cosine-similarity': 0.9 } }, [long]));
    const cell = holder.querySelector('tbody td');
    expect(cell.getAttribute('title')).toBe(long);
    expect(cell.textContent).toBe(long);
    expect(cell.querySelector('.ptq-mid-tail').textContent).toBe('/model/block_3_expand/Conv2D__14');
    expect(cell.querySelector('.ptq-mid-head').textContent).toBe(long.slice(0, -'/model/block_3_expand/Conv2D__14'.length));
  });
});
